#include <gate/net/http_client.hpp>
#include <gate/util/text.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <locale>
#include <sstream>

namespace gate::net {

namespace {

std::string header(const Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return "";
}

// A finite, non-negative decimal number and nothing else.
std::optional<double> parse_non_negative(const std::string& text) {
  std::string s(trim_space(text));
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) return std::nullopt;
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// RFC 9110 IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT"; the obsolete
// forms are not worth the code for a retry hint.
std::optional<std::time_t> parse_http_date(const std::string& text) {
  std::istringstream in{std::string(trim_space(text))};
  in.imbue(std::locale::classic());
  std::tm tm{};
  in >> std::get_time(&tm, "%a, %d %b %Y %H:%M:%S");
  if (in.fail()) return std::nullopt;
  std::string zone;
  in >> zone;
  if (zone != "GMT" || !(in >> std::ws).eof()) return std::nullopt;
  return timegm(&tm);
}

} // namespace

bool retryable_response(int status, const Headers& headers, std::string_view body) {
  std::string hint = header(headers, "x-should-retry");
  if (hint == "false") return false;
  if (hint == "true") return true;
  // A spent quota or spend limit does not come back by waiting a few
  // seconds: OpenAI's insufficient_quota and billing_hard_limit_reached,
  // Anthropic's billing_error.
  if (status == 429)
    for (std::string_view quota : {"insufficient_quota", "billing_hard_limit_reached", "billing_error"})
      if (body.find(quota) != std::string_view::npos) return false;
  switch (status) {
  case 408:
  case 409:
  case 429:
  case 500:
  case 502:
  case 503:
  case 504:
  case 529: return true;
  default: return false;
  }
}

std::optional<double> server_delay_s(const Headers& headers, std::chrono::system_clock::time_point now) {
  if (auto ms = parse_non_negative(header(headers, "retry-after-ms"))) return *ms / 1000.0;
  std::string after = header(headers, "retry-after");
  if (after.empty()) return std::nullopt;
  if (auto s = parse_non_negative(after)) return *s;
  if (auto when = parse_http_date(after)) {
    double delta = static_cast<double>(*when - std::chrono::system_clock::to_time_t(now));
    return std::max(0.0, delta);
  }
  return std::nullopt;
}

double backoff_delay_s(const HttpOptions& o, int attempt, double u) {
  double d = std::min(o.backoff_cap_s, o.backoff_base_s * std::ldexp(1.0, std::min(attempt, 60)));
  // Half fixed, half random: retries from many workers spread out, and none
  // comes back sooner than half the schedule.
  return d * (0.5 + 0.5 * std::clamp(u, 0.0, 1.0));
}

} // namespace gate::net

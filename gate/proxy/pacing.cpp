#include <gate/proxy/pacing.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>

namespace gate::proxy {

ReplayTiming parse_replay_timing(std::string_view text, std::string_view what) {
  if (text == "none") return {0};
  if (text == "recorded") return {1};
  constexpr std::string_view prefix = "scaled:";
  if (text.starts_with(prefix)) {
    std::string_view number = text.substr(prefix.size());
    double x = 0;
    auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), x);
    // An upper bound keeps a typo (scaled:1e9) from parking every reply
    // for years.
    if (ec == std::errc() && end == number.data() + number.size() && std::isfinite(x) && x > 0 && x <= 1000)
      return {x};
  }
  throw_bad_input(std::string(what) +
                  ": expected none, recorded or scaled:X (X a number in (0, 1000]), got \"" +
                  redact(std::string(text)) + "\"");
}

std::string to_string(ReplayTiming t) {
  if (t.scale == 0) return "none";
  if (t.scale == 1) return "recorded";
  std::string out = "scaled:";
  json::append_number(t.scale, out);
  return out;
}

std::vector<std::size_t> event_ends(std::string_view body) {
  std::vector<std::size_t> out;
  EventScanner s;
  s.scan(body, [&](std::size_t end) { out.push_back(end); });
  return out;
}

void EventClock::feed(std::string_view piece, double at_ms) {
  scanner.scan(piece, [&](std::size_t) { ms.push_back(at_ms); });
}

std::vector<Step> plan_replay(std::string_view body, const std::vector<double>& event_ms, double latency_ms,
                              ReplayTiming t) {
  std::vector<Step> out;
  if (t.scale <= 0) return out;
  const double latency = std::isfinite(latency_ms) && latency_ms > 0 ? latency_ms : 0;
  double at = 0;
  if (!event_ms.empty()) {
    const std::vector<std::size_t> ends = event_ends(body);
    for (std::size_t i = 0; i < ends.size(); ++i) {
      at = std::max(at, event_ms[std::min(i, event_ms.size() - 1)] * t.scale);
      out.push_back({ends[i], at});
    }
  }
  if (out.empty() || out.back().end < body.size())
    out.push_back({body.size(), std::max(at, latency * t.scale)});
  return out;
}

} // namespace gate::proxy

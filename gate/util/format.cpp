#include <gate/util/format.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace gate {

std::string fixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

std::string trimmed_fixed(double x, int max_decimals) {
  std::string s = fixed(x, max_decimals);
  if (s.find('.') == std::string::npos) return s;
  while (s.back() == '0')
    s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string human_ms(double ms) {
  if (!std::isfinite(ms)) return "—";
  const double a = std::fabs(ms);
  if (a < 1) return fixed(ms * 1000, 0) + " µs";
  if (a < 10) return fixed(ms, 1) + " ms";
  if (a < 1000) return fixed(ms, 0) + " ms";
  if (a < 10'000) return fixed(ms / 1000, 2) + " s";
  if (a < 60'000) return fixed(ms / 1000, 1) + " s";
  const auto seconds = static_cast<long long>(std::llround(a / 1000));
  return std::string(ms < 0 ? "-" : "") + std::to_string(seconds / 60) + " min " +
         std::to_string(seconds % 60) + " s";
}

std::string signed_fixed(double x, int decimals, bool ascii_minus) {
  std::string s = fixed(std::fabs(x), decimals);
  if (s.find_first_not_of("0.") == std::string::npos) return s;
  return (x < 0 ? (ascii_minus ? "-" : "−") : "+") + s;
}

} // namespace gate

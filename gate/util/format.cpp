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

std::string signed_fixed(double x, int decimals, bool ascii_minus) {
  std::string s = fixed(std::fabs(x), decimals);
  if (s.find_first_not_of("0.") == std::string::npos) return s;
  return (x < 0 ? (ascii_minus ? "-" : "−") : "+") + s;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

} // namespace gate

#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gate {

// "12.3" with `decimals` digits after the point.
std::string fixed(double x, int decimals = 1);
// fixed() without trailing zeros: "0.0004", "12.35", "0" (also for a value
// that rounds to zero at `max_decimals`; a caller tells that from 0).
std::string trimmed_fixed(double x, int max_decimals);
// "+1.5", "−0.3" (U+2212 minus, as people read it), "0.0" for a value that
// rounds to zero; `ascii_minus` gives "-0.3" for XML and logs.
std::string signed_fixed(double x, int decimals = 1, bool ascii_minus = false);

// A duration given in milliseconds, in the unit people read it in: "85 µs",
// "8.2 ms", "812 ms", "1.24 s", "12.5 s", "2 min 5 s"; "—" when not finite.
std::string human_ms(double ms);

// Levenshtein distance between two sequences (bytes for "did you mean"
// suggestions, code points or words for the `similar` check): O(|a|·|b|)
// time, O(|b|) memory.
template <class T> std::size_t edit_distance(std::span<const T> a, std::span<const T> b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
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
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  return edit_distance(std::span<const char>(a), std::span<const char>(b));
}

// The "did you mean" of a misspelt name: the first of `names` nearest to
// `name` within 2 edits, "" when none is (or `name` is one of them).
inline std::string nearest_name(std::string_view name, const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& n : names)
    if (const std::size_t d = edit_distance(name, n); d < best_distance) best = n, best_distance = d;
  return best == name ? std::string() : best;
}

} // namespace gate

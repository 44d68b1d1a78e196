#include <gate/check/check.hpp>

#include <algorithm>
#include <stdexcept>

#include <gate/check/unicode.hpp>
#include <gate/util/format.hpp>
#include <gate/util/text.hpp>

namespace gate::check {

namespace {

// Both tables are quadratic in time: beyond this many cells the check is
// errored rather than stalling a run (5,000 × 5,000 code points).
constexpr std::size_t k_max_cells = 25'000'000;

std::vector<std::uint32_t> code_points(std::string_view s) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t u = 0;
    const std::size_t n = decode_utf8(s, i, u);
    out.push_back(n == 0 ? 0x110000u + static_cast<unsigned char>(s[i]) : u); // an invalid byte stands alone
    i += n == 0 ? 1 : n;
  }
  return out;
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  for (std::string_view w : detail::split_words(s))
    out.push_back(detail::fold_case(w));
  return out;
}

template <class T> void bound(const std::vector<T>& a, const std::vector<T>& b) {
  if (!a.empty() && b.size() > k_max_cells / a.size())
    throw std::length_error("the texts are too long to compare (" + std::to_string(a.size()) + " × " +
                            std::to_string(b.size()) + " units)");
}

template <class T> std::size_t lcs_length(const std::vector<T>& a, const std::vector<T>& b) {
  bound(a, b);
  std::vector<std::size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

} // namespace

double similarity(Similarity method, std::string_view a, std::string_view b) {
  a = trim_space(a);
  b = trim_space(b);
  if (method == Similarity::levenshtein) {
    const auto x = code_points(a), y = code_points(b);
    const std::size_t longer = std::max(x.size(), y.size());
    if (longer == 0) return 1;
    bound(x, y);
    return 1 - static_cast<double>(
                   edit_distance(std::span<const std::uint32_t>(x), std::span<const std::uint32_t>(y))) /
                   static_cast<double>(longer);
  }
  const auto x = words(a), y = words(b);
  if (x.empty() && y.empty()) return 1;
  if (x.empty() || y.empty()) return 0;
  const auto lcs = static_cast<double>(lcs_length(x, y));
  if (lcs == 0) return 0;
  const double precision = lcs / static_cast<double>(x.size()), recall = lcs / static_cast<double>(y.size());
  return 2 * precision * recall / (precision + recall);
}

} // namespace gate::check

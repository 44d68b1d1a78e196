#include <gate/check/regex_program.hpp>

#include <algorithm>

#include <gate/util/text.hpp>

namespace gate::check::detail {

std::size_t decode_unit(std::string_view s, std::size_t i, std::uint32_t &unit) {
  // An invalid byte is a unit of its own, outside the code point range, so
  // that `.` and classes never match half a character.
  const std::size_t len = decode_utf8(s, i, unit);
  if (len != 0) return len;
  unit = k_invalid_unit + static_cast<unsigned char>(s[i]);
  return 1;
}

bool ranges_contain(const Ranges &r, std::uint32_t unit) {
  auto it = std::upper_bound(r.begin(), r.end(), unit,
                             [](std::uint32_t u, const auto &range) { return u < range.first; });
  return it != r.begin() && unit <= std::prev(it)->second;
}

void normalize(Ranges &r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (const auto &x : r) {
    if (!out.empty() && x.first <= out.back().second + 1)
      out.back().second = std::max(out.back().second, x.second);
    else
      out.push_back(x);
  }
  r = std::move(out);
}

Ranges negate(const Ranges &r) {
  Ranges out;
  std::uint32_t next = 0;
  for (const auto &x : r) {
    if (x.first > next) out.push_back({next, x.first - 1});
    next = x.second + 1;
  }
  if (next <= detail::k_max_unit) out.push_back({next, detail::k_max_unit});
  return out;
}

void fold_ascii(Ranges &r) {
  Ranges extra;
  for (const auto &x : r) {
    auto add = [&](std::uint32_t lo, std::uint32_t hi, int shift) {
      std::uint32_t a = std::max(x.first, lo), b = std::min(x.second, hi);
      if (a <= b) extra.push_back({a + shift, b + shift});
    };
    add('A', 'Z', 'a' - 'A');
    add('a', 'z', -('a' - 'A'));
  }
  r.insert(r.end(), extra.begin(), extra.end());
  normalize(r);
}

Ranges named_class(char c) {
  Ranges r;
  switch (c | 0x20) {
  case 'd': r = {{'0', '9'}}; break;
  case 'w': r = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; break;
  case 's': r = {{'\t', '\r'}, {' ', ' '}}; break;
  }
  return (c >= 'A' && c <= 'Z') ? negate(r) : r;
}

std::optional<Ranges> posix_class(const std::string &name) {
  static const std::pair<const char *, Ranges> k_table[] = {
      {"alpha", {{'A', 'Z'}, {'a', 'z'}}},
      {"digit", {{'0', '9'}}},
      {"alnum", {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}}},
      {"word", {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}},
      {"space", {{'\t', '\r'}, {' ', ' '}}},
      {"blank", {{'\t', '\t'}, {' ', ' '}}},
      {"upper", {{'A', 'Z'}}},
      {"lower", {{'a', 'z'}}},
      {"punct", {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}}},
      {"xdigit", {{'0', '9'}, {'A', 'F'}, {'a', 'f'}}},
      {"cntrl", {{0, 0x1f}, {0x7f, 0x7f}}},
      {"print", {{' ', '~'}}},
      {"graph", {{'!', '~'}}},
  };
  for (const auto &[n, r] : k_table)
    if (name == n) return r;
  return std::nullopt;
}

} // namespace gate::check::detail

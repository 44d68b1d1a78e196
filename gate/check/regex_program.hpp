#pragma once

// Internal to gate/check: the compiled form of a Regex, shared by the
// compiler (regex_compile.cpp) and the matcher (regex_search.cpp); unit
// decoding and set algebra are in regex_units.cpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gate/check/regex.hpp>

namespace gate::check::detail {

// Input is matched in units: a code point, or an invalid byte b as
// k_invalid_unit + b so that it can never equal a code point.
inline constexpr std::uint32_t k_invalid_unit = 0x110000;
inline constexpr std::uint32_t k_max_unit = k_invalid_unit + 0xff;

// Decodes the unit at s[i] (strict UTF-8: no overlongs, surrogates or values
// above U+10FFFF) and returns its length in bytes (>= 1).
std::size_t decode_unit(std::string_view s, std::size_t i, std::uint32_t &unit);

// A set of units: sorted, disjoint, non-adjacent inclusive ranges.
using Ranges = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
bool ranges_contain(const Ranges &r, std::uint32_t unit);
// Sorts and merges into the form above.
void normalize(Ranges &r);
// The complement within [0, k_max_unit].
Ranges negate(const Ranges &r);
// Adds the other ASCII case of every letter in the set.
void fold_ascii(Ranges &r);
// \d \w \s and their negations \D \W \S, ASCII only.
Ranges named_class(char c);
// [:alpha:] and the other POSIX names, ASCII only; nullopt when unknown.
std::optional<Ranges> posix_class(const std::string &name);

// Zero-width tests on the units before and after a position.
enum class Assertion : std::uint8_t {
  begin_text,       // ^ \A
  begin_line,       // ^ under (?m)
  end_text,         // \z
  end_text_or_nl,   // $ \Z: the end, or before a \n that ends the text
  end_line,         // $ under (?m)
  word_boundary,    // \b
  not_word_boundary // \B
};

enum class Op : std::uint8_t { unit, assert, split, jump, match };

// Thompson NFA instruction: `unit` consumes one unit in classes[arg] and
// goes on to the next instruction; `split` continues at both x and y.
struct Inst {
  Op op = Op::match;
  Assertion assertion = Assertion::begin_text;
  std::uint32_t x = 0, y = 0; // unit: class index; split: x, y; jump: x
};

struct Program {
  std::vector<Inst> insts; // starts at 0, ends with match
  std::vector<Ranges> classes;
};

} // namespace gate::check::detail

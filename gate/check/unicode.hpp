#pragma once

// Inside gate/check only: Unicode text rules the text checks share (ICU's
// character data, so that they follow the Unicode standard rather than
// ASCII): one case folding for every check that ignores case, and one
// whitespace set for every check that splits words.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gate::check::detail {

// `s` under Unicode full case folding (CaseFolding.txt statuses C and F,
// not locale-dependent: no Turkish dotted/dotless i rule): É → é, ẞ → ss,
// ß → ss, Σ and ς → σ, ﬁ → fi. Two texts that differ only in case fold to
// the same bytes, so `contains` over folded texts ignores case. A byte that
// starts no valid UTF-8 sequence is kept as it is: it matches only itself,
// and never joins a neighbour into a character. Never throws but bad_alloc.
std::string fold_case(std::string_view s);

// JavaScript's \s, which promptfoo's word-count splits on: TAB, LF, VT, FF,
// CR, U+2028, U+2029, U+FEFF and every space separator (general category
// Zs: SPACE, NO-BREAK SPACE, U+2000–U+200A, U+3000, ...).
bool is_space_code_point(char32_t c);

// Words: maximal runs of code points that are not is_space_code_point (an
// invalid byte is part of a word), as views into `s`.
std::vector<std::string_view> split_words(std::string_view s);
std::size_t count_words(std::string_view s);

} // namespace gate::check::detail

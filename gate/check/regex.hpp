#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace gate::check {

namespace detail {
struct Program; // the compiled NFA, regex_program.hpp
}

// A regular expression matched in time linear in the input: a Thompson NFA
// simulated as a lazily built DFA (states are built as a search needs them,
// capped, and kept per thread for the next search of the same pattern), so
// model output can never trigger catastrophic backtracking.
//
// Matching is over code points: valid UTF-8 sequences are one unit each, so
// `.` and [é] match a whole character; an invalid byte is a unit of its own
// that only `.`, negated classes and \D \W \S match.
//
// Supported: literals; `.` (not \n unless (?s)); [] classes with ranges,
// negation, escapes and [:alpha:] style POSIX names; \d \w \s \D \W \S
// (ASCII); \n \t \r \f \v \0 \xHH \x{H..} \uHHHH; any escaped punctuation;
// ^ (start of text; of a line with (?m)); $ (end of text or before a final
// \n; of a line with (?m)); \A \z \Z \b \B; groups ( ), (?: ), (?<name> ),
// (?P<name> ); alternation |; * + ? {m} {m,} {m,n} {,n}, each optionally
// lazy (`?`; lazy and greedy match alike as only whether it matches is
// asked); flags (?i) (?m) (?s), also as (?-i) and scoped (?i: ). Case
// folding is ASCII only. `{` that does not start a valid count is literal.
//
// Rejected at compile time with the position: backreferences, lookaround,
// atomic groups, possessive quantifiers, \p classes, unbalanced brackets,
// patterns over 4 KiB, counts over 1000, and programs over 10,000 states.
class Regex {
public:
  // Throws Error(bad_input) with `where` and what is wrong in the pattern.
  // `ignore_case` is the same as a leading (?i).
  Regex(std::string_view pattern, const std::string &where, bool ignore_case = false);
  ~Regex();
  Regex(const Regex &) = delete;
  Regex &operator=(const Regex &) = delete;

  // True when the pattern matches anywhere in `text` (search, not full
  // match). Thread-safe; never throws except std::bad_alloc.
  bool search(std::string_view text) const;
  const std::string &pattern() const { return pattern_; }

private:
  std::string pattern_;
  std::string key_; // pattern and flags: equal keys compile to equal programs
  // Shared with the DFA states a thread keeps for this pattern (regex_search.cpp),
  // which may outlive this object.
  std::shared_ptr<detail::Program> prog_;
};

} // namespace gate::check

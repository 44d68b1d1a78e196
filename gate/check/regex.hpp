#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace gate::check {

// A regular expression in gate's dialect, matched by RE2 in time linear in
// the input, so model output can never trigger catastrophic backtracking.
// The pattern is translated into RE2's syntax once, when the Regex is built
// (regex_translate.cpp); docs/suite-format.md "Regex dialect" lists where
// the dialect and RE2 differ.
//
// Matching is over code points: valid UTF-8 sequences are one unit each, so
// `.` and [é] match a whole character; an invalid byte is a unit of its own,
// read as U+FFFD (the replacement character), so that `.`, negated classes
// and \D \W \S match it and no literal but U+FFFD does.
//
// Supported: literals; `.` (not \n unless (?s)); [] classes with ranges,
// negation, escapes and [:alpha:] style POSIX names; \d \w \s \D \W \S and
// the POSIX names (ASCII); \p{L} \pL \p{Greek} \P{...} \p{^...} (Unicode
// general categories and scripts); \n \t \r \f \v \a \e \0 \xHH \x{H..}
// \uHHHH; any escaped punctuation; ^ (start of text; of a line with (?m));
// $ (end of text or before a final \n; of a line with (?m)); \A \z \Z \b \B;
// groups ( ), (?: ), (?<name> ), (?P<name> ); alternation |; * + ? {m} {m,}
// {m,n} {,n}, each optionally lazy (`?`; lazy and greedy match alike as only
// whether it matches is asked); flags (?i) (?m) (?s), also as (?-i) and
// scoped (?i: ). Case folding is Unicode's simple folding (é and É), except
// that \w \d \s and the POSIX names stay ASCII. `{` that does not start a
// valid count is literal.
//
// Rejected at compile time with the position: backreferences, lookaround,
// atomic groups, possessive quantifiers, unknown \p classes, unbalanced
// brackets, a `$` or \Z (outside (?m)) with more pattern after it (RE2 has
// no zero-width "before a final \n"), patterns over 4 KiB, counts over 1000
// and, without a position, programs beyond RE2's limits (nested counts
// whose product exceeds 1000, or more than the memory budget).
class Regex {
public:
  // Throws Error(bad_input) with `where` and what is wrong in the pattern.
  // `ignore_case` is the same as a leading (?i).
  Regex(std::string_view pattern, const std::string& where, bool ignore_case = false);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // True when the pattern matches anywhere in `text` (search, not full
  // match). Thread-safe; never throws except std::bad_alloc.
  bool search(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }

private:
  std::string pattern_;
  std::shared_ptr<const re2::RE2> re_; // shared by every Regex of the same translation
};

} // namespace gate::check

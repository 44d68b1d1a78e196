#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace gate::check {

// A regular expression matched in time linear in the input (a Pike VM over
// a Thompson NFA): no catastrophic backtracking on model output.
// Supported: literals, ., [] classes with ranges and negation, \d \w \s \D
// \W \S, escapes, ^ $, groups ( ) and (?: ), alternation |, * + ? {m} {m,}
// {m,n} (greedy and lazy, which match alike here as only whether it
// matches is asked), and the flag (?i) at the start. Backreferences and
// lookaround are rejected at compile time.
class Regex {
public:
  // Throws Error(bad_input) with `where` and what is wrong in the pattern.
  Regex(std::string_view pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // True when the pattern matches anywhere in `text` (search, not full match).
  bool search(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }

private:
  struct Program;
  std::string pattern_;
  std::unique_ptr<Program> prog_;
};

} // namespace gate::check

#pragma once

// Internal to gate/check: gate's regex dialect (regex.hpp) written in RE2's
// syntax, so that RE2 parses only text this file produced.

#include <string>
#include <string_view>

namespace gate::check::detail {

// The RE2 pattern that matches what `pattern` matches in gate's dialect.
// Every group is non-capturing and every flag is spelled out on the
// construct it applies to, so the result means the same under RE2's default
// options (case-sensitive, `.` not \n, ^ and $ at the ends of the text).
// Every character but an ASCII letter or digit is written as \x{...}.
// Throws Error(bad_input), the message starting with `prefix`, for what the
// dialect rejects, at a 1-based character position.
std::string translate_regex(std::string_view pattern, bool ignore_case, const std::string& prefix);

} // namespace gate::check::detail

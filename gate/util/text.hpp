#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gate {

// Decodes the UTF-8 sequence starting at s[i] into `cp` and returns its
// length, or 0 when it is not a valid sequence (truncated, overlong,
// surrogate, above U+10FFFF). The one decoder for validation and the regex.
std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp);

// Appends code point `cp` (at most U+10FFFF, not a surrogate) as UTF-8.
void append_utf8(std::uint32_t cp, std::string& out);

// True when `s` is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool valid_utf8(std::string_view s);
// How to_valid_utf8 replaces what is not UTF-8 with U+FFFD.
enum class Utf8Repair {
  // Each byte that starts no valid sequence: what gate writes (reports,
  // Markdown, XML, JSON, the terminal), whose escapers decode byte by byte.
  per_byte,
  // One per maximal invalid subpart, as the WHATWG UTF-8 decoder does, which
  // the SSE spec requires of an event stream's lines.
  maximal_subpart,
};
// `s` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string to_valid_utf8(std::string_view s, Utf8Repair how = Utf8Repair::per_byte);
// The longest prefix of at most `max_bytes` that does not cut a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);
// A value as an error message quotes it: a JSON string (the escaping keeps
// newlines and control bytes out of the terminal) of its first `max_bytes`,
// cut on a UTF-8 boundary, "..." after it when cut, so that a huge value
// cannot drown the message.
std::string quote_excerpt(std::string_view s, std::size_t max_bytes = 80);
// `s` without leading and trailing ASCII whitespace (space, \t, \n, \v, \f, \r).
std::string_view trim_space(std::string_view s);
// The value of a hexadecimal digit (either case), or -1.
inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `s` single-quoted for a POSIX shell: the only character to escape there
// is the quote itself ("it's" → 'it'\''s').
std::string shell_quote(std::string_view s);
// `s` as one shell word: as it is when it holds only characters no shell
// treats specially (letters, digits and -_./:@%+=,), else shell_quote(s).
std::string shell_word(std::string_view s);

// Glob match with * and ? (for --filter).
bool glob_match(std::string_view pattern, std::string_view text);

} // namespace gate

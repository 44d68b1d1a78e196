#pragma once

#include <string>
#include <string_view>

namespace gate {

// True when `s` is valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool valid_utf8(std::string_view s);
// The longest prefix of at most `max_bytes` that does not cut a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);
// Glob match with * and ? (for --filter).
bool glob_match(std::string_view pattern, std::string_view text);

} // namespace gate

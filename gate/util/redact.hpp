#pragma once

#include <string>
#include <string_view>

namespace gate {

// The process-wide set of secrets (API keys, tokens) that must never be
// written or printed. Every persisted or printed text that may carry
// upstream or user data passes through redact(), which replaces with
// "[REDACTED]" the secret, its last 8 characters (secrets of 16 or more),
// its base64 (alone, or inside a longer base64 text at any of the three
// byte alignments; standard and URL-safe alphabets), wherever they appear:
// in the raw bytes, in the text with its JSON escapes decoded (\u0073k-...,
// up to three levels of escaping), and in a server-sent-event stream's
// string values joined across events path by path (a delta split in two).
// A form shorter than 8 characters (a short key, its base64) is replaced
// only where it stands alone, not next to a letter, digit, '-', '_', '+' or
// '/': inside a word it is most likely ordinary text. Thread-safe.
void register_secret(std::string_view secret);
std::string redact(std::string_view text);
// True when `text` contains any registered secret form (for assertions).
bool contains_secret(std::string_view text);

inline constexpr std::string_view k_redacted = "[REDACTED]";

std::string base64_encode(std::string_view data);

} // namespace gate

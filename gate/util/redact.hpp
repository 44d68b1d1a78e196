#pragma once

#include <string>
#include <string_view>

namespace gate {

// The process-wide set of secrets (API keys, tokens) that must never be
// written or printed. Every persisted or printed text that may carry
// upstream or user data passes through redact(): the secret itself, its
// base64 form, the base64 of "Bearer <secret>" and its last 8 characters are
// replaced by "[REDACTED]". Thread-safe.
void register_secret(std::string_view secret);
std::string redact(std::string_view text);
// True when `text` contains any registered secret form (for assertions).
bool contains_secret(std::string_view text);

inline constexpr std::string_view k_redacted = "[REDACTED]";

std::string base64_encode(std::string_view data);

} // namespace gate

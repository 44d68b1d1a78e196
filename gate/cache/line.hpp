#pragma once

// Internal to gate_cache: the two readers of an entry's JSON line (the
// format is in entry.hpp). decode() checks the frame, then tries
// scan_line(), and only when that declines asks parse_line(), which says
// exactly what is wrong. Apart for the tests, which check that the fast
// reader never accepts what the full one rejects.

#include <array>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <gate/cache/entry.hpp>

namespace gate::cache::detail {

// The fast path: one pass over a line that is byte for byte what encode
// writes, with no JSON tree. nullopt for anything else, and also whenever
// the line is unusual enough that only the full parse can be sure (an
// escaped object key, deep nesting, a number at the edge of a range).
std::optional<Entry> scan_line(std::string_view line, int version, std::string_view expected_key);

// The full path: parses the line, checks every field, and compares the
// line with what encode would write for what was read.
DecodeResult parse_line(std::string_view line, int version, std::string_view expected_key);

// What the full path is made of (parse.cpp): the fields of a line, and a
// parse of it into a tree with every field checked for presence and type
// (the entry, or why not), without the canonical-form check parse_line adds.
inline constexpr std::array<std::string_view, 13> k_fields = {
    "body",        "event_ms", "headers", "key",   "latency_ms", "path", "provider",
    "recorded_at", "replica",  "request", "route", "status",     "usage"};
DecodeResult read_fields(std::string_view line, int version, std::string_view expected_key);

// One JSON text, nothing after it, values allocated from `sp`; doubles are
// read correctly rounded (Boost 1.81 reads some 16- and 17-digit numbers as
// a neighbour), so canonical text reads back to itself.
boost::json::value parse_exact(std::string_view text, boost::json::storage_ptr sp,
                               boost::system::error_code& ec);

// Whether any of the eight bytes of `w` is below 0x20, '"' or '\\': a
// byte JSON text must escape (the classic has-zero-byte / has-less-than
// tests, exact for any input). Both readers skip plain runs of a string
// eight bytes at a time with it.
inline bool needs_escape(std::uint64_t w) {
  constexpr std::uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  auto has_zero = [](std::uint64_t v) { return (v - ones) & ~v & highs; };
  const std::uint64_t below_space = (w - ones * 0x20) & ~w & highs;
  return (below_space | has_zero(w ^ (ones * '"')) | has_zero(w ^ (ones * '\\'))) != 0;
}

// Event times as encode accepts them: finite, >= 0, non-decreasing.
bool valid_event_times(const std::vector<double>& ms);

} // namespace gate::cache::detail

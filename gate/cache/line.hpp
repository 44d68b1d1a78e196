#pragma once

// Internal to gate_cache: the two readers of an entry's JSON line (the
// format is in entry.hpp). decode() checks the frame, then tries
// scan_line(), and only when that declines asks parse_line(), which says
// exactly what is wrong. Apart for the tests, which check that the fast
// reader never accepts what the full one rejects.

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

// Event times as encode accepts them: finite, >= 0, non-decreasing.
bool valid_event_times(const std::vector<double>& ms);

} // namespace gate::cache::detail

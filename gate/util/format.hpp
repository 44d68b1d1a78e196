#pragma once

#include <string>
#include <string_view>

namespace gate {

// "12.3" with `decimals` digits after the point.
std::string fixed(double x, int decimals = 1);
// "+1.5", "−0.3" (U+2212 minus, as people read it), "0.0" for a value that
// rounds to zero; `ascii_minus` gives "-0.3" for XML and logs.
std::string signed_fixed(double x, int decimals = 1, bool ascii_minus = false);

// A duration given in milliseconds, in the unit people read it in: "85 µs",
// "8.2 ms", "812 ms", "1.24 s", "12.5 s", "2 min 5 s"; "—" when not finite.
std::string human_ms(double ms);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

} // namespace gate

#pragma once

#include <string>
#include <string_view>

namespace gate {

// "12.3" with `decimals` digits after the point.
std::string fixed(double x, int decimals = 1);
// "+1.5", "−0.3" (U+2212 minus, as people read it), "0.0" for a value that
// rounds to zero; `ascii_minus` gives "-0.3" for XML and logs.
std::string signed_fixed(double x, int decimals = 1, bool ascii_minus = false);

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

} // namespace gate

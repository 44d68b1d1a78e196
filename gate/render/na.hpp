#pragma once

#include <optional>
#include <string>

namespace gate::render {

// What every form prints for a number whose inputs are absent from the
// data (METRICS.md "Measured runs"): never 0, never a perfect score.
inline constexpr const char* k_not_in_data = "n/a (not in the data)";

template <typename T, typename Format> std::string or_na(const std::optional<T>& v, Format format) {
  return v ? format(*v) : std::string(k_not_in_data);
}

} // namespace gate::render

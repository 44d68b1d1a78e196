#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <gate/util/error.hpp>

// Shared by the libFuzzer targets in this directory (not part of any gate
// module: these files build only with clang and GATE_FUZZ=ON).
namespace gate::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `f`, accepting gate::Error (the documented answer to bad input) and
// nothing else: any other exception escapes to libFuzzer, which reports it
// as a crash together with the input.
template <class F> void expecting_only_gate_errors(F&& f) {
  try {
    f();
  } catch (const gate::Error&) {
  }
}

// A property violation: abort so libFuzzer saves the input as a crash.
[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

} // namespace gate::fuzz

#pragma once

// Shared by the test_suite_* files: what a bad_input error says, and a
// substring check that prints the text it searched when it fails.

#include <doctest.h>

#include <functional>
#include <string>

#include <gate/util/error.hpp>

namespace gate::suite::test {

// The message of the bad_input error `f` throws, or "<no error>".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    return e.what();
  }
  return "<no error>";
}

inline bool has(const std::string& hay, const std::string& needle) {
  bool found = hay.find(needle) != std::string::npos;
  if (!found) MESSAGE("expected \"" << needle << "\" in: " << hay);
  return found;
}

} // namespace gate::suite::test

#pragma once

#include <string>

namespace gate::testing {

// A test that cannot run here (no browser, no node, no /dev/full) calls
// this and returns. The message is printed, and the test binary then exits
// with k_skip_exit when nothing failed, which CTest's SKIP_RETURN_CODE
// reports as skipped: a test that did not run is never counted a pass.
void skip_test(const std::string& why);

// Whether any test of this process called skip_test.
bool any_skipped();

inline constexpr int k_skip_exit = 77;

} // namespace gate::testing

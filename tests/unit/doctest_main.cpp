#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest.h>

#include <tests/support/skip.hpp>

// doctest's own main, plus one rule: when every test that ran passed but
// one of them could not run here (gate::testing::skip_test), the exit code
// says "skipped" to CTest (SKIP_RETURN_CODE), not "passed".
int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit() || rc != 0) return rc;
  return gate::testing::any_skipped() ? gate::testing::k_skip_exit : 0;
}

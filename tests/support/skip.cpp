#include "skip.hpp"

#include <atomic>
#include <cstdio>

namespace gate::testing {

namespace {
std::atomic<bool> g_skipped{false};
} // namespace

void skip_test(const std::string& why) {
  std::printf("skipped: %s\n", why.c_str());
  std::fflush(stdout);
  g_skipped = true;
}

bool any_skipped() { return g_skipped; }

} // namespace gate::testing

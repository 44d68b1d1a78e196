// Linked into the portable gate binary only (GATE_PORTABLE, with
// -Wl,--wrap=arc4random): keeps the newest glibc symbol version it needs at
// 2.35, so it runs on ubuntu-22.04.
//
// The static libstdc++ of g++ 12 on Debian 12 was built against glibc 2.36,
// and its random.o (std::random_device, pulled in by every program through
// the COW-string instantiations of <stdexcept>) calls arc4random, new in
// GLIBC_2.36. --wrap sends that one reference here; this gives the same
// contract (kernel randomness, never fails) from getrandom(2), GLIBC_2.25.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <sys/random.h>

extern "C" std::uint32_t __wrap_arc4random(void) {
  std::uint32_t v = 0;
  auto* p = reinterpret_cast<unsigned char*>(&v);
  std::size_t got = 0;
  while (got < sizeof v) {
    // Short reads and EINTR happen only while the kernel's pool initialises.
    ssize_t n = ::getrandom(p + got, sizeof v - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::abort(); // as glibc's arc4random does when no randomness can be had
    }
    got += static_cast<std::size_t>(n);
  }
  return v;
}

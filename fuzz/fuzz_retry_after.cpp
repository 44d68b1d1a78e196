// Retry-After parsing: any header value gives nullopt or a finite,
// non-negative number of seconds. The first byte picks the header.
#include <chrono>
#include <cmath>
#include <string>

#include <gate/net/http_client.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const char* name = (data[0] & 1) ? "retry-after-ms" : "retry-after";
  gate::net::Headers headers{{name, std::string(gate::fuzz::as_text(data + 1, size - 1))}};
  // A fixed "now" (2024-01-01T00:00:00Z) keeps a finding reproducible.
  const auto now = std::chrono::system_clock::from_time_t(1704067200);
  std::optional<double> d;
  gate::fuzz::expecting_only_gate_errors([&] { d = gate::net::server_delay_s(headers, now); });
  if (d && !(std::isfinite(*d) && *d >= 0)) gate::fuzz::violated("server delay is negative or not finite");
  return 0;
}

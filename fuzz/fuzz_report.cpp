// Report and baseline reader: any bytes give a Report or Error(bad_input);
// a report that was read writes back to text that reads to the same text.
#include <string>

#include <gate/report/report.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string first;
  gate::fuzz::expecting_only_gate_errors([&] {
    first = gate::report::to_json(gate::report::from_json(gate::fuzz::as_text(data, size), "fuzz.json"));
  });
  if (first.empty()) return 0;
  // A baseline is rewritten by `gate baseline update`; reading what gate
  // wrote must never fail, and must be stable.
  std::string second;
  try {
    second = gate::report::to_json(gate::report::from_json(first, "rewritten.json"));
  } catch (const gate::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    gate::fuzz::violated("a report gate wrote does not read back");
  }
  if (second != first) gate::fuzz::violated("report does not round-trip");
  return 0;
}

// cases.jsonl lines: any bytes give cases or Error(bad_input).
#include <gate/suite/suite.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gate::fuzz::expecting_only_gate_errors(
      [&] { (void)gate::suite::parse_cases(gate::fuzz::as_text(data, size), "fuzz/cases.jsonl"); });
  return 0;
}

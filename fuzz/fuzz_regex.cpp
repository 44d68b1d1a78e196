// Regex compile and search. Input: flags byte, then the pattern up to the
// first NUL byte (capped at 512 bytes so each run stays fast; the 4 KiB
// limit of the compiler is tested by unit tests), then the text to search.
// A pattern is accepted or rejected with Error(bad_input); search never
// throws.
#include <cstring>

#include <gate/check/regex.hpp>

#include "fuzz_support.hpp"

namespace {
constexpr std::size_t k_max_pattern = 512;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool ignore_case = (data[0] & 1) != 0;
  std::string_view rest = gate::fuzz::as_text(data + 1, size - 1);
  std::size_t cut = rest.find('\0');
  std::string_view pattern = rest.substr(0, cut);
  std::string_view text = cut == std::string_view::npos ? std::string_view() : rest.substr(cut + 1);
  if (pattern.size() > k_max_pattern) return 0;
  std::unique_ptr<gate::check::Regex> re;
  gate::fuzz::expecting_only_gate_errors(
      [&] { re = std::make_unique<gate::check::Regex>(pattern, "fuzz", ignore_case); });
  if (!re) return 0;
  (void)re->search(text);
  (void)re->search(pattern);
  return 0;
}

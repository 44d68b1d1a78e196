// gate import's readers of promptfoo files: a tests file in YAML (a list at
// the root, which gate.yaml never has) and a CSV tests file with its
// __expected cells. Any bytes give a tree or Error(bad_input), and every
// node read knows its line.
#include <gate/importer/detail.hpp>

#include "fuzz_support.hpp"

namespace {

void lines_known(const gate::importer::Node& n, const std::size_t last_line) {
  if (n.line > last_line + 1) gate::fuzz::violated("a node's line is past the end of the input");
  for (const auto& item : n.items)
    lines_known(item, last_line);
  for (const auto& [key, value] : n.entries)
    lines_known(value, last_line);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = gate::fuzz::as_text(data, size);
  std::size_t lines = 1;
  for (char c : text)
    lines += c == '\n' ? 1 : 0;
  gate::fuzz::expecting_only_gate_errors([&] {
    const gate::importer::Node n = gate::importer::read_yaml(text, "tests.yaml", true);
    lines_known(n, lines);
    (void)gate::importer::to_json(n);
  });
  gate::fuzz::expecting_only_gate_errors([&] {
    for (const auto& row : gate::importer::read_csv(text, "tests.csv")) {
      if (row.line > lines) gate::fuzz::violated("a CSV row starts past the end of the input");
      for (const auto& cell : row.cells)
        (void)gate::importer::detail::assertion_from_string(cell, "tests.csv", row.line);
    }
  });
  return 0;
}

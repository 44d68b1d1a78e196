#include <doctest.h>

#include <fstream>
#include <set>

#include <gate/cli/commands.hpp>

#include "doc_table.hpp"

namespace fs = std::filesystem;

TEST_CASE("README.md's command table lists every command of the table `gate help` is made from") {
  // This file is tests/unit/; the README is two levels up.
  const fs::path readme = fs::path(__FILE__).parent_path().parent_path().parent_path() / "README.md";
  std::ifstream in(readme);
  REQUIRE_MESSAGE(in.good(), "cannot read " << readme);
  std::set<std::string> documented; // "gate suite verify|new-version|create" → "suite"
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) in_section = line == "### Commands";
    if (!in_section || !line.starts_with("| `gate ")) continue;
    const std::string cell = gate::test::strip_backticks(gate::test::cells(line).at(0));
    documented.insert(cell.substr(5, cell.find(' ', 5) - 5));
  }
  std::set<std::string> commands;
  for (const auto& c : gate::cli::commands()) {
    commands.insert(c.name);
    // `gate help` and `gate version` are named beside the table, not in it.
    if (std::string(c.name) == "help" || std::string(c.name) == "version") continue;
    CHECK_MESSAGE(documented.contains(c.name), "README.md \"### Commands\" lacks gate " << c.name);
  }
  for (const auto& d : documented)
    CHECK_MESSAGE(commands.contains(d), "README.md documents an unknown command: gate " << d);
}

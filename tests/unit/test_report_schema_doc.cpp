// docs/report-schema.md lists exactly the fields of the report's
// descriptions (report/layout.hpp), in their order, optional where they are.
#include <doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "doc_table.hpp"
#include <gate/report/layout.hpp>

using namespace gate::report::detail;
namespace fs = std::filesystem;

namespace {

struct Row {
  std::string name;
  bool optional = false;
  std::string meaning;
};

// The rows of the first table after `heading`, one per key of the first
// cell ("`a`, `b`" is two).
std::vector<Row> table_after(const std::string& heading) {
  const fs::path doc =
      fs::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "report-schema.md";
  std::ifstream in(doc);
  REQUIRE(in);
  std::string line;
  while (std::getline(in, line) && line != heading) {
  }
  std::vector<Row> rows;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind('|', 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    const auto c = gate::test::cells(line);
    if (c.size() < 3 || c[0] == "key" || c[0].rfind("---", 0) == 0) continue;
    std::stringstream names(c[0]);
    std::string name;
    while (std::getline(names, name, ','))
      rows.push_back({gate::test::strip_backticks(gate::test::trim(name)),
                      c[1].find("optional") != std::string::npos, c[2]});
  }
  return rows;
}

// The description's fields as the doc lists them: an object's as
// "suite.name", and every field of a list's elements named in its row.
template <class T> void check_table(const std::string& heading) {
  const std::vector<Row> rows = table_after(heading);
  const Table& t = table_of<T>();
  std::size_t at = 0;
  for (std::size_t i = 0; i < t.names.size(); ++i) {
    const std::string name(t.names[i]);
    const bool optional = (t.optional >> i) & 1u;
    const FieldReader& f = t.fields[i];
    const bool object = f.element != nullptr && !f.list && f.expected == std::string("an object") &&
                        !optional; // "suite" is listed as suite.name, suite.version, ...
    if (object) {
      for (const auto& sub : f.element->names) {
        REQUIRE_MESSAGE(at < rows.size(), heading << ": missing " << name << "." << sub);
        CHECK_MESSAGE(rows[at].name == name + "." + std::string(sub), heading << ": row " << at);
        ++at;
      }
      continue;
    }
    REQUIRE_MESSAGE(at < rows.size(), heading << ": missing " << name);
    CHECK_MESSAGE(rows[at].name == name, heading << ": row " << at << " is " << rows[at].name);
    CHECK_MESSAGE(rows[at].optional == optional, heading << ": " << name << " optional?");
    if (f.element != nullptr)
      for (const auto& sub : f.element->names) {
        const std::string quoted = "\"" + std::string(sub) + "\"";
        const std::string code = "`" + std::string(sub) + "`";
        CHECK_MESSAGE((rows[at].meaning.find(quoted) != std::string::npos ||
                       rows[at].meaning.find(code) != std::string::npos),
                      heading << ": " << name << " does not name its field " << sub);
      }
    ++at;
  }
  CHECK_MESSAGE(at == rows.size(), heading << ": the doc lists more fields than the description");
}

} // namespace

TEST_CASE("report-schema.md's header, task and run tables are the descriptions") {
  check_table<gate::report::Report>("## Header");
  check_table<gate::results::Task>("## Task");
  check_table<gate::results::Run>("### Run");
}

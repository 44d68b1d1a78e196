// docs/suite-format.md "Check types" is kept equal to check::type_table(),
// as README's configuration reference is to the key table.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <map>

#include <gate/check/check.hpp>
#include <gate/util/error.hpp>

#include "doc_table.hpp"

namespace fs = std::filesystem;
using namespace gate::check;

using gate::test::cells;
using gate::test::strip_backticks;

namespace {

struct DocRow {
  std::string kind, fields, passes, example;
};

std::map<std::string, DocRow> doc_rows() {
  const fs::path doc =
      fs::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "suite-format.md";
  std::ifstream in(doc);
  REQUIRE_MESSAGE(in.good(), "cannot read " << doc);
  std::map<std::string, DocRow> rows;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) in_section = line == "### Check types";
    if (!in_section || !line.starts_with("| `")) continue;
    const std::vector<std::string> c = cells(line);
    REQUIRE_MESSAGE(c.size() == 5, line);
    const std::string type = strip_backticks(c[0]);
    CHECK_MESSAGE(!rows.contains(type), "listed twice: " << type);
    rows[type] = {c[1], c[2], c[3], strip_backticks(c[4])};
  }
  return rows;
}

std::string fields_cell(const TypeInfo& t) {
  std::string out;
  for (const auto& f : t.fields)
    out += (out.empty() ? "" : ", ") + ("`" + f.name + "` (" + f.fallback + ")");
  return out.empty() ? "none" : out;
}

std::string kind_cell(const TypeInfo& t) {
  switch (t.kind) {
  case Kind::text: return "text";
  case Kind::reply: return "reply";
  case Kind::agent: return "agent";
  }
  return "?";
}

std::string row_text(const TypeInfo& t) {
  return "| `" + t.type + "` | " + kind_cell(t) + " | " + fields_cell(t) + " | " + t.passes + " | `" +
         t.example + "` |";
}

} // namespace

TEST_CASE("docs/suite-format.md documents exactly the check types of type_table()") {
  const auto docs = doc_rows();
  for (const TypeInfo& t : type_table()) {
    auto it = docs.find(t.type);
    if (it == docs.end()) {
      FAIL_CHECK("check type missing from docs/suite-format.md: " << t.type << "; the row:\n" << row_text(t));
      continue;
    }
    const DocRow& d = it->second;
    const bool same = d.kind == kind_cell(t) && d.fields == fields_cell(t) && d.passes == t.passes &&
                      d.example == t.example;
    CHECK_MESSAGE(same, "docs/suite-format.md differs from type_table() for " << t.type << "; the row:\n"
                                                                              << row_text(t));
  }
  for (const auto& row : docs)
    CHECK_MESSAGE(find_type(row.first) != nullptr,
                  "docs/suite-format.md lists an unknown check type: " << row.first);
  CHECK(docs.size() == type_table().size());
}

TEST_CASE("every example parses as its type, and leaving out a required field is refused") {
  for (const TypeInfo& t : type_table()) {
    INFO(t.type);
    const boost::json::value spec = boost::json::parse(t.example);
    const Check c = parse(spec, std::nullopt, "doc");
    CHECK(c.type == t.id);
    CHECK(type_name(t.id) == t.type);
    CHECK(&info(t.id) == &t); // the table is in enum order
    for (const auto& f : t.fields) {
      if (f.fallback != "required") continue;
      boost::json::value without = spec;
      REQUIRE_MESSAGE(without.get_object().erase(f.name) == 1, "the example omits required " << f.name);
      CHECK_THROWS_AS(parse(without, std::nullopt, "doc"), gate::Error);
    }
  }
}

TEST_CASE("the parser accepts exactly the table's fields, plus type and name") {
  for (const TypeInfo& t : type_table()) {
    INFO(t.type);
    boost::json::value spec = boost::json::parse(t.example);
    spec.get_object()["name"] = "n";
    CHECK(parse(spec, std::nullopt, "doc").label == t.type + ":n");
    spec.get_object()["bogus"] = 1;
    CHECK_THROWS_WITH_AS(parse(spec, std::nullopt, "doc"), doctest::Contains("unknown field \"bogus\""),
                         gate::Error);
  }
}

TEST_CASE("docs/suite-format.md lists exactly the refusal phrases") {
  const fs::path doc =
      fs::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "suite-format.md";
  std::ifstream in(doc);
  REQUIRE(in.good());
  std::vector<std::string> listed;
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) in_section = line == "### Refusal phrases";
    if (in_section && line.starts_with("- `")) listed.push_back(strip_backticks(line.substr(2)));
  }
  CHECK(listed == refusal_phrases());
}

TEST_CASE("README.md's check table names every type once") {
  const fs::path readme = fs::path(__FILE__).parent_path().parent_path().parent_path() / "README.md";
  std::ifstream in(readme);
  REQUIRE(in.good());
  std::string line, listed;
  while (std::getline(in, line))
    if (line.starts_with("| text (") || line.starts_with("| reply (") || line.starts_with("| groups |") ||
        line.starts_with("| agent |"))
      listed += line;
  for (const TypeInfo& t : type_table()) {
    const std::string name = t.id == Type::negation ? "{\"not\": {…}}" : t.type;
    const std::string cell = "`" + name + "`";
    const auto at = listed.find(cell);
    CHECK_MESSAGE(at != std::string::npos, "README.md's check table lacks " << name);
    CHECK_MESSAGE(listed.find(cell, at + 1) == std::string::npos, "README.md lists twice: " << name);
  }
}

// gate import reads promptfoo configs as YAML reads them: flow mappings
// over several lines, merge keys (<<), and an alias bomb stopped with an
// error instead of expanding (gate/importer/node.cpp, gate/config/scan.cpp).
#include <doctest.h>

#include <boost/json.hpp>

#include <gate/importer/detail.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

using namespace gate::importer;

namespace {

std::string as_json(const std::string& yaml) {
  return gate::json::canonical(to_json(read_yaml(yaml, "c.yaml", false)));
}

std::string read_error(const std::string& yaml) {
  try {
    (void)read_yaml(yaml, "c.yaml", false);
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    return e.what();
  }
  FAIL("read_yaml accepted: " << yaml);
  return {};
}

// Billion laughs: nine levels, each a list repeating the previous alias
// nine times (9^9 leaves from under 1 KiB).
std::string alias_bomb(const std::string& indent) {
  std::string s = indent + "l0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    s += indent + "l" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int j = 1; j < 9; ++j)
      s += ", " + prev;
    s += "]\n";
  }
  return s;
}

} // namespace

TEST_CASE("a { } mapping over several lines loads (promptfoo's examples/f-score)") {
  CHECK(as_json("providers:\n  - id: openai:gpt-4o-mini\n    config: {\n      temperature: 0,\n"
                "      max_tokens: 10\n    }\n") ==
        R"({"providers":[{"config":{"max_tokens":10,"temperature":0},"id":"openai:gpt-4o-mini"}]})");
  CHECK(as_json("a: [\n  1,\n 2\n]\nb: x\n") == R"({"a":[1,2],"b":"x"})");
  // The mapping begins on a line of its own: the old prescan refused this
  // line ("expected \"key: value\" or \"- item\"").
  CHECK(as_json("value:\n  { a: 1,\n    b: 2 }\n") == R"({"value":{"a":1,"b":2}})");
}

TEST_CASE("merge keys: the mapping's own keys win, a list of mappings merges in order") {
  CHECK(as_json("c: &c {x: 1, y: 2}\nt:\n  <<: *c\n  y: 3\n") == R"({"c":{"x":1,"y":2},"t":{"x":1,"y":3}})");
  CHECK(as_json("a: &a {x: 1}\nb: &b {x: 2, z: 2}\nt:\n  <<: [*a, *b]\n") ==
        R"({"a":{"x":1},"b":{"x":2,"z":2},"t":{"x":1,"z":2}})");
  // Quoted, "<<" is an ordinary key.
  CHECK(as_json("t:\n  '<<': 1\n") == R"({"t":{"<<":1}})");
  CHECK(read_error("t:\n  <<: 3\n") ==
        std::string("c.yaml:2:7: expected a mapping or a list of mappings after \"<<:\""));
}

TEST_CASE("an alias bomb stops with an error at the node where the budget runs out") {
  const std::string error = read_error("tests:\n  - vars:\n" + alias_bomb("      "));
  CHECK(error.starts_with("c.yaml:"));
  CHECK(error.find("alias expansion exceeds 500000 nodes") != std::string::npos);
}

TEST_CASE("yaml-cpp's own loops stop with an error") {
  const std::string loop = read_error("&a m\n?\n");
  CHECK_MESSAGE(loop.starts_with("c.yaml: the YAML parser did not finish within"), loop);
}

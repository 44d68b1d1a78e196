#include <doctest.h>

#include <filesystem>

#include <gate/config/config.hpp>
#include <gate/util/input.hpp>

#include "test_config_support.hpp"

namespace fs = std::filesystem;
using gate::config::test::k_minimal;
using gate::config::test::load_error;

// Inputs found by fuzz/fuzz_config.cpp. Each one made yaml-cpp 0.7 loop
// forever (growing past 2 GB) inside YAML::LoadAll; load() must refuse them
// before yaml-cpp sees them. All share one shape: a ',' outside brackets
// where a token begins, which is never valid YAML.

namespace {

const std::string k_refused =
    ": ',' outside [ ] or { } where a value begins; expected key: value lines (quote a value that starts with ',')";

std::string corpus_file(const char *name) {
  return gate::read_file(fs::path(__FILE__).parent_path().parent_path().parent_path() / "fuzz/corpus/config" / name);
}

} // namespace

TEST_CASE("every fuzz finding is refused before yaml-cpp sees it") {
  for (const char *name :
       {"regression-comma-left-of-root.yaml", "regression-anchor-with-colon.yaml", "regression-line-left-of-root.yaml",
        "regression-dedent-after-key.yaml", "regression-comma-first-left-of-key.yaml",
        "regression-comma-after-braces.yaml", "regression-lone-cr-in-anchor.yaml"}) {
    const std::string file = name;
    CAPTURE(file);
    const std::string error = load_error(corpus_file(name));
    CHECK((error.find(k_refused) != std::string::npos || error.find("carriage return") != std::string::npos));
  }
}

TEST_CASE("a lone carriage return is refused; CRLF line endings load") {
  CHECK(load_error("&p\rpa ,l\n") ==
        "gate.yaml:1:3: carriage return not followed by a line feed; expected \\n or \\r\\n line endings");
  CHECK(load_error("a: b\r") ==
        "gate.yaml:1:5: carriage return not followed by a line feed; expected \\n or \\r\\n line endings");
  gate::config::test::Scratch scratch;
  CHECK(gate::config::load(scratch.write("gate.yaml", "suite:\r\n  path: suite\r\nmodel:\r\n  name: m\r\n"))
            .model.name == "m");
}

TEST_CASE("a ',' that begins a token outside brackets is refused at its line and column") {
  struct Case {
    const char *text;
    const char *at;
  };
  const Case cases[] = {
      // The first finding: a comment line, then a line starting " ,".
      {"# The bundled demo\n ,eer#xtraction to JSON\nsuite:\n  path: suite\n", "2:2"},
      {",\n", "1:1"},
      // After a quoted scalar, an anchor, a tag, a list item, a key.
      {"\"a\" ,\n", "1:5"},
      {"&a ,\n", "1:4"},
      {"!t ,\n", "1:4"},
      {"- a\n,\n", "2:1"},
      {"- ,a\n", "1:3"},
      {"a: ,b\n", "1:4"},
      {"a: [x, y] ,b\n", "1:11"},
      // A ':' inside an anchor or tag name does not end a key (the second finding).
      {" &a: ,b\n", "1:6"},
      {"&a: ,b\n", "1:5"},
      {" !t: ,b\n", "1:6"},
      // Left of an indented root, and on lines that leave it (findings three to five).
      {"  a: 0\n,b: 3\n", "2:1"},
      {"  a: 0\n ,b: 3\n", "2:2"},
      {"  a:\n &b: ,c\n", "2:6"},
      {"do\n  name:\n &b: ,c\n", "3:6"},
      {"df\n  name:\n    a: b\n, c\n", "4:1"},
      // Inside the mapping, too: yaml-cpp happens to report some of these,
      // but the rule is the shape, not which ones it survives.
      {"suite:\n  path: suite\nmodel:\n  name: m\n,\n", "5:1"},
      {"  a: 0\n  ,b: 3\n", "2:3"},
      // After a document marker.
      {"suite:\n  path: suite\nmodel:\n  name: m\n---\n,\n", "6:1"},
      {"--- ,\n", "1:5"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.text);
    CHECK(load_error(c.text) == std::string("gate.yaml:") + c.at + k_refused);
  }
}

TEST_CASE("a ',' inside a plain, quoted or block scalar or inside brackets is text") {
  gate::config::test::Scratch scratch;
  const auto load = [&](const std::string &extra) {
    return gate::config::load(scratch.write("gate.yaml", "suite:\n  path: suite\n" + extra));
  };
  CHECK(load("model:\n  name: a,b , c\n").model.name == "a,b , c");
  CHECK(load("model:\n  name: \"a\n    ,b\"\n").model.name == "a ,b");
  CHECK(load("model:\n  name: m\ncache:\n  ignore: [\"/a\", \"/b\"]\n").cache.ignore.size() == 2);
  // A block scalar's lines may start with ','; the first line back at the
  // key's column ends it, and a ',' there is refused again.
  CHECK(load("model:\n  name: m\nprompt:\n  system: |\n    , first\n    ,second\n  user: x\n").prompt.system == ", first\n,second\n");
  CHECK(load("model:\n  name: m\nprompt:\n  system: >-\n    a\n    , b\n").prompt.system == "a , b");
  CHECK(load_error(k_minimal + "prompt:\n  system: |\n    , first\n  ,user: x\n") ==
        std::string("gate.yaml:8:3") + k_refused);
}

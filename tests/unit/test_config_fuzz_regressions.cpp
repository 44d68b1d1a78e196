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

const std::string k_refused = ": ',' outside [ ] or { } where a value begins; expected key: value lines "
                              "(quote a value that starts with ',')";

std::string corpus_file(const char* name) {
  return gate::read_file(fs::path(__FILE__).parent_path().parent_path().parent_path() / "fuzz/corpus/config" /
                         name);
}

} // namespace

TEST_CASE("every fuzz finding is refused before yaml-cpp sees it") {
  for (const char* name : {"regression-comma-left-of-root.yaml", "regression-anchor-with-colon.yaml",
                           "regression-line-left-of-root.yaml", "regression-dedent-after-key.yaml",
                           "regression-comma-first-left-of-key.yaml", "regression-comma-after-braces.yaml",
                           "regression-lone-cr-in-anchor.yaml", "regression-scalar-root-then-key.yaml",
                           "regression-tagged-flow-among-keys.yaml", "regression-tag-ends-at-quote.yaml",
                           "regression-block-scalar-dedent.yaml"}) {
    const std::string file = name;
    CAPTURE(file);
    const std::string error = load_error(corpus_file(name));
    CHECK(error.starts_with("gate.yaml:"));
    CHECK(error.find("YAML syntax error") == std::string::npos);
  }
}

TEST_CASE("a ',' that begins a token outside brackets is refused at its line and column") {
  struct Case {
    const char* text;
    const char* at;
  };
  const Case cases[] = {
      {",\n", "1:1"},
      {"a: ,b\n", "1:4"},
      {"a: - ,b\n", "1:6"},
      {"a: [x, y] ,b\n", "1:11"},
      {"a: \"x\" ,b\n", "1:8"},
      {"a: &x ,b\n", "1:7"},
      {"a: *x ,b\n", "1:7"},
      {"a:\n  - x\n  ,\n", "3:3"},
      // Inside the mapping, too: yaml-cpp happens to report some of these,
      // but the rule is the shape, not which ones it survives.
      {"suite:\n  path: suite\nmodel:\n  name: m\n,\n", "5:1"},
      {"  a: 0\n  ,b: 3\n", "2:3"},
      // After a document marker.
      {"suite:\n  path: suite\nmodel:\n  name: m\n---\n,\n", "6:1"},
      {"--- ,\n", "1:5"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK(load_error(c.text) == std::string("gate.yaml:") + c.at + k_refused);
  }
}

TEST_CASE("a top level that is not key: value lines in one column is refused") {
  const std::string not_mapping = ": expected a mapping of keys at top level (key: value lines)";
  const std::string k_tag = ": YAML tag: gate.yaml takes plain values; quote a value that starts with '!'";
  struct Case {
    const char* text;
    std::string error;
  };
  const Case cases[] = {
      // A scalar, a quoted scalar, an anchored or tagged scalar as the root,
      // then anything: yaml-cpp 0.7 loops on "&a m\n?" (the eighth finding).
      {"&a m\n?\n", "1:1" + not_mapping},
      {"!t m\n?\n", "1:1" + k_tag},
      {"\"a\" ,\n", "1:5" + k_refused},
      {"# The bundled demo\n ,eer#xtraction to JSON\nsuite:\n  path: suite\n", "2:2" + k_refused},
      {"- a\n,\n", "1:1" + not_mapping + ", got a list"},
      {"[a, b]\n", "1:1" + not_mapping + ", got a list"},
      {"{a: 1}\n", "1:1" + not_mapping},
      // A ':' inside an anchor or tag name is not a key's (the second finding).
      {" &a: ,b\n", "1:6" + k_refused},
      {" &a: b\n", "1:2" + not_mapping},
      {"df\n  name:\n    a: b\n, c\n", "1:1" + not_mapping},
      // yaml-cpp starts a new document, unasked, at a line left of an
      // indented root (findings three, four and nine).
      {"  a: 0\n,b: 3\n", "2:1" + k_refused},
      {"  a:\n &b: ,c\n",
       "2:2: line starts left of the top-level keys (column 3); expected each top-level key in "
       "that column"},
      {"  a: 0\n&x m\n?\n",
       "2:1: line starts left of the top-level keys (column 3); expected each top-level key "
       "in that column"},
      // Where keys are, a line that is neither a key nor an item: a tagged
      // flow list among the keys looped (the tenth finding).
      {"a: 1\n!!t[\n,b\n", "2:1" + k_tag},
      // A tag ends at a quote in yaml-cpp 0.7, so the quote opened a string
      // where YAML has none (the eleventh finding).
      {"a: !!o\"x: [e\", \"d\"\n", "1:4" + k_tag},
      {"a:\n  &b m\n  ?\n",
       "2:3: expected \"key: value\" or \"- item\" on this line; a value that goes on over "
       "several lines needs quotes or a block scalar (|)"},
      {"a: b\n  c\n",
       "2:3: expected \"key: value\" or \"- item\" on this line; a value that goes on over several "
       "lines needs quotes or a block scalar (|)"},
      // A second document is held to the same rule.
      {"a: 1\n---\n&x m\n", "3:1" + not_mapping},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK(load_error(c.text) == "gate.yaml:" + c.error);
  }
  // Lists, flow collections over several lines, comments, block scalars
  // and quoted continuations may start anywhere right of the root.
  gate::config::test::Scratch scratch;
  CHECK(gate::config::load(scratch.write("gate.yaml",
                                         "suite:\n  path: s\nmodel:\n  name: m\ncache:\n  ignore:\n  - "
                                         "/a\n  - /b\n"))
            .cache.ignore.size() == 2);
  CHECK(gate::config::load(scratch.write("gate.yaml",
                                         "suite:\n  path: s\nmodel:\n  name: m\ncache:\n  ignore: [\n"
                                         "    \"/a\",\n \"/b\"\n]\n"))
            .cache.ignore.size() == 2);
  CHECK(gate::config::load(
            scratch.write("gate.yaml", "  suite:\n# c\n    path: s\n  model:\n    name: \"a\nb\"\n"))
            .model.name == "a b");
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

TEST_CASE("a ',' inside a plain, quoted or block scalar or inside brackets is text") {
  gate::config::test::Scratch scratch;
  const auto load = [&](const std::string& extra) {
    return gate::config::load(scratch.write("gate.yaml", "suite:\n  path: suite\n" + extra));
  };
  CHECK(load("model:\n  name: a,b , c\n").model.name == "a,b , c");
  CHECK(load("model:\n  name: \"a\n    ,b\"\n").model.name == "a ,b");
  CHECK(load("model:\n  name: m\ncache:\n  ignore: [\"/a\", \"/b\"]\n").cache.ignore.size() == 2);
  // A block scalar's lines may start with ','; the first line back at the
  // key's column ends it, and a ',' there is refused again.
  CHECK(
      load("model:\n  name: m\nprompt:\n  system: |\n    , first\n    ,second\n  user: x\n").prompt.system ==
      ", first\n,second\n");
  CHECK(load("model:\n  name: m\nprompt:\n  system: >-\n    a\n    , b\n").prompt.system == "a , b");
  CHECK(load_error(k_minimal + "prompt:\n  system: |\n    , first\n  ,user: x\n") ==
        std::string("gate.yaml:8:3") + k_refused);
}

TEST_CASE("a block scalar's text ends only at its key's column or at a comment") {
  const std::string between = ": line indented less than the block scalar's text above it (column ";
  struct Case {
    const char* text;
    std::string error;
  };
  const Case cases[] = {
      // A root block scalar, then a line left of its text: yaml-cpp 0.7
      // started a second document there and looped on its ',' (the twelfth
      // finding, fuzz/corpus/config/regression-block-scalar-dedent.yaml).
      {"># A\n  name: x\n &p: ,u\n", "1:1: expected a mapping of keys at top level (key: value lines)"},
      {"--- |\n x\n", "1:5: expected a mapping of keys at top level (key: value lines)"},
      {"a: |\n    text\n  x: 1\n",
       "3:3" + between +
           "5) and more than its key (column 1); expected the text's column, or the key's column for "
           "the next key"},
      {"a:\n  b: |\n      t\n    c: 1\n",
       "4:5" + between +
           "7) and more than its key (column 3); expected the text's column, or the key's column for "
           "the next key"},
      {"a:\n- |\n    t\n  ,b\n",
       "4:3" + between +
           "5) and more than its key (column 1); expected the text's column, or the key's column for "
           "the next key"},
      // An indentation indicator counts from the key, as yaml-cpp counts it.
      {"a: |2\n   t\n  u\n x\n",
       "4:2" + between +
           "3) and more than its key (column 1); expected the text's column, or the key's column for "
           "the next key"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK(load_error(c.text) == "gate.yaml:" + c.error);
  }
  gate::config::test::Scratch scratch;
  const auto load = [&](const std::string& extra) {
    return gate::config::load(scratch.write("gate.yaml", k_minimal + extra));
  };
  // A comment left of the text ends the scalar; the next key follows.
  CHECK(load("prompt:\n  system: |\n      t\n    # c\n  user: x\n").prompt.system == "t\n");
  // With an indicator, text indented further keeps its leading blanks.
  CHECK(load("prompt:\n  system: |2\n      t\n    u\n").prompt.system == "  t\nu\n");
  CHECK(load("prompt:\n  system: >-2\n    t\n").prompt.system == "t");
}

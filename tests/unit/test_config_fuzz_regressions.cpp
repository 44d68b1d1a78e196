#include <doctest.h>

#include <filesystem>

#include <gate/config/config.hpp>
#include <gate/config/keys.hpp>
#include <gate/util/input.hpp>

#include "test_config_support.hpp"

namespace fs = std::filesystem;
using gate::config::test::k_minimal;
using gate::config::test::load_error;

// Inputs found by fuzz/fuzz_config.cpp. Each one made yaml-cpp 0.7 loop
// forever (growing past 2 GB) inside YAML::LoadAll; load() must stop on
// them with an error at gate.yaml, not loop: the parse runs first in a
// child process under a CPU and memory limit (gate/config/scan.cpp).

namespace {

const std::string k_looped = "gate.yaml: the YAML parser did not finish within 250 ms";

std::string corpus_file(const char* name) {
  return gate::read_file(fs::path(__FILE__).parent_path().parent_path().parent_path() / "fuzz/corpus/config" /
                         name);
}

} // namespace

TEST_CASE("every fuzz finding stops with an error") {
  for (const char* name : {"regression-comma-left-of-root.yaml", "regression-anchor-with-colon.yaml",
                           "regression-line-left-of-root.yaml", "regression-dedent-after-key.yaml",
                           "regression-comma-first-left-of-key.yaml", "regression-comma-after-braces.yaml",
                           "regression-lone-cr-in-anchor.yaml", "regression-scalar-root-then-key.yaml",
                           "regression-tagged-flow-among-keys.yaml", "regression-tag-ends-at-quote.yaml",
                           "regression-block-scalar-dedent.yaml"}) {
    const std::string file = name;
    CAPTURE(file);
    CHECK(load_error(corpus_file(name)).starts_with("gate.yaml:"));
  }
}

TEST_CASE("inputs yaml-cpp loops on stop with an error, and valid YAML around them loads") {
  // Where yaml-cpp loops the error says so; where it happens to report the
  // input, its own message stands. Either way load() returns.
  for (const char* text : {",\n",
                           "a: ,b\n",
                           "a: - ,b\n",
                           "a: [x, y] ,b\n",
                           "a: \"x\" ,b\n",
                           "a: &x ,b\n",
                           "a: *x ,b\n",
                           "a:\n  - x\n  ,\n",
                           "suite:\n  path: suite\nmodel:\n  name: m\n,\n",
                           "  a: 0\n  ,b: 3\n",
                           "--- ,\n",
                           "&a m\n?\n",
                           "!t m\n?\n",
                           "\"a\" ,\n",
                           " &a: ,b\n",
                           "  a: 0\n,b: 3\n",
                           "  a:\n &b: ,c\n",
                           "  a: 0\n&x m\n?\n",
                           "a: 1\n!!t[\n,b\n",
                           "a: !!o\"x: [e\", \"d\"\n",
                           "a:\n  &b m\n  ?\n",
                           "># A\n  name: x\n &p: ,u\n"}) {
    CAPTURE(text);
    CHECK(load_error(text).starts_with("gate.yaml:"));
  }
  CHECK(load_error("&a m\n?\n").starts_with(k_looped));
  CHECK(load_error(",\n").starts_with("gate.yaml:1:1: ',' outside [ ] or { } where a value begins"));
  CHECK(load_error("- a\n- b\n") == "gate.yaml:1:1: expected a mapping of keys at top level, got a list");
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
  CHECK(
      load_error(k_minimal + "prompt:\n  system: |\n    , first\n  ,user: x\n").starts_with("gate.yaml:8:3"));
}

TEST_CASE("block scalars load as YAML reads them") {
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

TEST_CASE("configs in the plain block form parse in place; only other YAML parses first in the child") {
  using gate::config::detail::prescan;
  using gate::config::detail::YamlGuard;
  // A fork costs milliseconds in a large process, so the configs people
  // write must not need one: every committed gate.yaml and promptfoo config.
  const fs::path root = fs::path(__FILE__).parent_path().parent_path().parent_path();
  for (const char* file :
       {"fixtures/demo/gate.yaml", "fixtures/agents/gate.yaml", "fixtures/checks/gate.yaml",
        "fixtures/compare/gate.yaml", "fixtures/promptfoo/support/promptfooconfig.yaml",
        "fixtures/promptfoo/orders/promptfooconfig.yaml", "fixtures/promptfoo/support/tests/more.yaml"}) {
    CAPTURE(file);
    CHECK(prescan(gate::read_file(root / file), file) == YamlGuard::plain_form);
  }
  CHECK(prescan("- a\n- b: [\n  1,\n2]\n", "t.yaml") == YamlGuard::plain_form);
  // Valid YAML outside the form: a { } mapping on a line of its own, a root
  // scalar, a line left of the root. The child finds that yaml-cpp finishes.
  CHECK(prescan("value:\n  { a: 1,\n    b: 2 }\n", "t.yaml") == YamlGuard::child);
  CHECK(prescan("|\n  text\n", "t.yaml") == YamlGuard::child);
  CHECK(prescan("  a: 1\nb: 2\n", "t.yaml") == YamlGuard::child);
}

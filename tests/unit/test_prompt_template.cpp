// gate/prompt: the {{var}} templates of gate.yaml's prompt: (docs/config.md
// "Prompts"), parsed and rendered into hand-made cases.
#include <doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gate/prompt/apply.hpp>
#include <gate/prompt/template.hpp>
#include <gate/suite/suite.hpp>

#include "test_suite_support.hpp"

namespace fs = std::filesystem;
using namespace gate::prompt;
using gate::suite::test::error_of;
using gate::suite::test::has;

namespace {

gate::suite::Case plain(const std::string& id, std::size_t line, Vars vars, std::string input = "") {
  gate::suite::Case c;
  c.id = id;
  c.line = line;
  c.vars = std::move(vars);
  if (!input.empty()) c.input.push_back({"user", input});
  return c;
}

gate::suite::Suite suite_of(std::vector<gate::suite::Case> cases) {
  gate::suite::Suite s;
  s.dir = "evals/support";
  s.version = "v3";
  s.cases = std::move(cases);
  return s;
}

Prompts prompts(const std::string& system, const std::string& user) {
  Prompts p;
  if (!system.empty()) p.system = parse(system, "prompts/support.md");
  if (!user.empty()) p.user = parse(user, "prompts/user.md");
  return p;
}

} // namespace

TEST_CASE("slots take their values; whitespace inside the braces is allowed; values are not expanded again") {
  Template t = parse("Hello {{name}}, order {{ order_id }} ({{\torder_id\t}}).\n", "t.md");
  REQUIRE(t.slots.size() == 3);
  CHECK(t.slots[1].name == "order_id");
  // The final line end an editor adds is dropped, once.
  CHECK(render(t, {{"name", "{{x}}"}, {"order_id", "42"}}, "case") == "Hello {{x}}, order 42 (42).");
  CHECK(render(parse("a\n\n", "t"), {}, "case") == "a\n");
  CHECK(render(parse("a\r\n", "t"), {}, "case") == "a");
}

TEST_CASE("\\{{ is a literal {{; a lone }} and other backslashes are text") {
  Template t = parse("json: \\{{\"a\": 1}} and \\n }} \\x", "t.md");
  CHECK(t.slots.empty());
  CHECK(render(t, {}, "case") == "json: {{\"a\": 1}} and \\n }} \\x");
}

TEST_CASE("a malformed {{ is an error at file:line:col") {
  CHECK(has(error_of([] { parse("line one\nsay {{ 1abc }}", "prompts/support.md"); }),
            "prompts/support.md:2:5: \"{{\" must open a variable"));
  CHECK(has(error_of([] { parse("{{name", "p.md"); }), "p.md:1:1:"));
  CHECK(has(error_of([] { parse("x {{a b}}", "p.md"); }), "p.md:1:3:"));
  CHECK(has(error_of([] { parse("{{}}", "p.md"); }), "write \\{{ for a literal {{"));
}

TEST_CASE("a variable the case does not define names the template's file and line and the case") {
  Template t = parse("You help {{customer}}.\nTheir order: {{order}}.", "prompts/support.md");
  std::string e = error_of([&] { render(t, {{"customer", "Ann"}}, "case \"refund-1\" (cases.jsonl:7)"); });
  CHECK(
      has(e, "prompts/support.md:2: variable \"order\" is not defined by case \"refund-1\" (cases.jsonl:7)"));
  CHECK(has(e, "(its vars: customer)"));
}

TEST_CASE("apply renders the system template into cases without their own, and the user template into "
          "cases without an input") {
  gate::suite::Case own = plain("own", 3, {});
  own.system = "Own system.";
  own.input.push_back({"user", "Q?"});
  auto s = suite_of({plain("a", 1, {{"name", "Ann"}, {"q", "Where is my parcel?"}}), own});
  apply(s, prompts("Support for {{name}}.", "{{q}}"));
  CHECK(s.cases[0].system == "Support for Ann.");
  REQUIRE(s.cases[0].input.size() == 1);
  CHECK(s.cases[0].input[0].content == "Where is my parcel?");
  CHECK(s.cases[1].system == "Own system."); // a case's own system prompt is kept
  CHECK(s.cases[1].input[0].content == "Q?");
  CHECK(conversation_text(s.cases[0]) == "system: Support for Ann.\n\nuser: Where is my parcel?");
}

TEST_CASE("apply refuses a missing variable, an unknown one and a case with no input at all") {
  auto missing = suite_of({plain("b", 4, {{"nme", "Ann"}}, "hi")});
  std::string e = error_of([&] { apply(missing, prompts("Hi {{name}}", "")); });
  CHECK(has(e, "prompts/support.md:1: variable \"name\" is not defined by case \"b\""));
  CHECK(has(e, "evals/support/versions/v3/cases.jsonl:4"));

  auto unknown = suite_of({plain("c", 9, {{"name", "Ann"}, {"extra", "x"}}, "hi")});
  e = error_of([&] { apply(unknown, prompts("Hi {{name}}", "")); });
  CHECK(has(e,
            "evals/support/versions/v3/cases.jsonl:9: case \"c\": variable \"extra\" is unknown: not used by "
            "prompts/support.md"));

  auto no_input = suite_of({plain("d", 2, {{"q", "x"}})});
  e = error_of([&] { apply(no_input, prompts("S", "")); });
  CHECK(has(e, "cases.jsonl:2: case \"d\" has no \"input\" and gate.yaml sets no prompt.user"));
}

TEST_CASE("load reads files relative names, hashes them and refuses a role given twice") {
  const fs::path dir = fs::temp_directory_path() / ("gate-prompt-test-" + std::to_string(::getpid()));
  fs::create_directories(dir / "prompts");
  std::ofstream(dir / "prompts" / "support.md") << "Be kind to {{name}}.\n";
  gate::config::Config cfg;
  cfg.file = dir / "gate.yaml";
  cfg.prompt.system_file = dir / "prompts" / "support.md";
  cfg.prompt.user = "{{q}}";
  Prompts p = load(cfg);
  REQUIRE(p.used.size() == 2);
  CHECK(p.used[0].role == "system");
  CHECK(p.used[0].name == "prompts/support.md");
  // sha256 of the file's bytes, final newline included (`printf 'Be kind to {{name}}.\n' | sha256sum`).
  CHECK(p.used[0].sha256 == "30129e1631fc195587973e2c87583123fd71088a6ebb65feaf219801e92aa672");
  CHECK(p.used[1].name == "prompt.user");
  cfg.prompt.system = "inline too";
  cfg.origin["prompt.system"] = "gate.yaml:3";
  cfg.origin["prompt.system_file"] = "gate.yaml:4";
  CHECK(has(error_of([&] { load(cfg); }),
            "gate.yaml:3 prompt.system and gate.yaml:4 prompt.system_file: give the "
            "system prompt once"));
  fs::remove_all(dir);
}

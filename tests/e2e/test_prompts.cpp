// End-to-end: the prompt is configuration, not dataset (issue 15 item 1).
// A suite with a prompt file: editing it changes the fingerprints of the
// tasks it renders into and no others; `gate check` compares without a
// suite-change flag and names the prompt; `gate baseline update` takes the
// result without --force; a bad variable stops with exit 2 before any call.
#include <doctest.h>

#include <boost/json.hpp>
#include <map>
#include <string>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

using namespace gate::e2e;
namespace fs = std::filesystem;

namespace {

// task id → the fingerprints of its runs, and task id → scenario.
std::map<std::string, std::string> fingerprints(const boost::json::value& report) {
  std::map<std::string, std::string> out;
  for (const auto& t : report.at("tasks").as_array()) {
    std::string fp;
    for (const auto& r : t.at("runs").as_array())
      fp += std::string(r.at("fingerprint").as_string()) + ",";
    out[std::string(t.at("id").as_string())] = fp;
  }
  return out;
}

bool has(const std::string& hay, const std::string& needle) {
  bool found = hay.find(needle) != std::string::npos;
  if (!found) MESSAGE("expected \"" << needle << "\" in:\n" << hay);
  return found;
}

} // namespace

TEST_CASE("a prompt edit is an ordinary change: only its tasks' fingerprints move, check compares, update "
          "needs no --force") {
  gate::testing::FakeUpstream upstream(
      gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json")));
  upstream.start();
  TempDir tmp;
  const fs::path config = copy_demo(tmp.path());
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "mode", "replay");
  const std::map<std::string, std::string> key = {{"GATE_DEMO_API_KEY", "demo-not-a-secret"}};

  // The recorded demo: every request is in the cache.
  Result base = run_gate({"run", "--config", config.string(), "--out", "base", "--quiet"}, tmp.path(), key);
  INFO(base.out << base.err);
  REQUIRE(base.exit_code == 0);
  CHECK(upstream.requests() == 0);
  Result promote =
      run_gate({"baseline", "update", "--report", "base/report.json", "--baseline", "bl.json"}, tmp.path());
  INFO(promote.out << promote.err);
  REQUIRE(promote.exit_code == 0);
  auto before = read_json(tmp.path() / "base" / "report.json");
  REQUIRE(before.at("prompts").as_array().size() == 1);
  CHECK(before.at("prompts").at(0).at("name").as_string() == "prompts/support.md");

  // A pull request edits the prompt file, nothing else.
  const fs::path prompt = tmp.path() / "demo" / "prompts" / "support.md";
  std::string text = slurp(prompt);
  text.insert(text.size() - 1, " Always thank the customer.");
  spit(prompt, text);

  Result check = run_gate({"check", "--config", config.string(), "--baseline", "bl.json", "--out", "cur"},
                          tmp.path(), key);
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK(has(check.out, "✅ gate passed"));
  CHECK(has(check.out,
            "prompt changed: prompts/support.md (system); 11 of 44 paired tasks sent another input"));
  CHECK(check.err.find("suite") == std::string::npos);
  // Only the support tasks went upstream, with the edited prompt.
  CHECK(upstream.requests() == 33);
  CHECK(has(upstream.log().front().body, "Always thank the customer."));

  auto after = read_json(tmp.path() / "cur" / "report.json");
  CHECK(after.at("suite") == before.at("suite")); // the dataset did not change
  CHECK(after.at("prompts").at(0).at("sha256") != before.at("prompts").at(0).at("sha256"));
  const auto fb = fingerprints(before), fa = fingerprints(after);
  REQUIRE(fb.size() == 44);
  int moved = 0;
  for (const auto& entry : fb) {
    const std::string& id = entry.first;
    const auto& fp = entry.second;
    const bool support = id.starts_with("support-");
    CHECK_MESSAGE((fa.at(id) != fp) == support, id);
    moved += fa.at(id) != fp;
  }
  CHECK(moved == 11);

  Result accept =
      run_gate({"baseline", "update", "--report", "cur/report.json", "--baseline", "bl.json"}, tmp.path());
  INFO(accept.out << accept.err);
  CHECK(accept.exit_code == 0);
  CHECK(fingerprints(read_json(tmp.path() / "bl.json")) == fa);

  // A variable no case defines: exit 2 before any call, naming the
  // template's file and line and the case.
  spit(prompt, "You are the support assistant.\nGreet {{customer_name}} by name.\n");
  const std::size_t calls = upstream.requests();
  Result bad = run_gate({"run", "--config", config.string(), "--out", "bad", "--quiet"}, tmp.path(), key);
  CHECK(bad.exit_code == 2);
  CHECK(has(bad.err, "prompts/support.md:2: variable \"customer_name\" is not defined by case \"support-"));
  CHECK(has(bad.err, "versions/v2/cases.jsonl:"));
  CHECK(upstream.requests() == calls);
  CHECK_FALSE(fs::exists(tmp.path() / "bad" / "report.json"));
}

TEST_CASE("cases with vars and no input get their user message from prompt.user_file; an unknown var is "
          "exit 2 at the case's line") {
  gate::testing::FakeUpstream upstream(gate::testing::Script{});
  upstream.start();
  TempDir tmp;
  const fs::path dir = tmp.path();
  spit(
      dir / "cases.jsonl",
      R"({"id": "q1", "vars": {"q": "What is 2+2?", "tone": "brief"}, "checks": [{"type": "contains", "value": "2+2"}]})"
      "\n"
      R"({"id": "q2", "input": "Say hi.", "checks": [{"type": "contains", "value": "hi"}]})"
      "\n");
  Result created = run_gate({"suite", "create", "suite", "--name", "qa", "--from", "cases.jsonl"}, dir);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
  fs::create_directories(dir / "prompts");
  spit(dir / "prompts" / "question.md", "Question: {{ q }}\n");
  spit(dir / "gate.yaml",
       "suite:\n  path: suite\nmodel:\n  base_url: " + upstream.base_url() +
           "\n  name: m\nprompt:\n  system: \"Answer {{tone}}.\"\n  user_file: prompts/question.md\n"
           "runs: 1\ncache:\n  dir: cache\n");
  const std::map<std::string, std::string> key = {{"OPENAI_API_KEY", "k-test"}};

  Result run = run_gate({"run", "--config", "gate.yaml", "--out", "out", "--quiet"}, dir, key);
  INFO(run.out << run.err);
  // q2 has no vars, so "{{tone}}" in the system template has nothing to take.
  CHECK(run.exit_code == 2);
  CHECK(has(run.err, "gate.yaml prompt.system:1: variable \"tone\" is not defined by case \"q2\""));
  CHECK(upstream.requests() == 0);

  spit(dir / "gate.yaml",
       "suite:\n  path: suite\nmodel:\n  base_url: " + upstream.base_url() +
           "\n  name: m\nprompt:\n  user_file: prompts/question.md\nruns: 1\ncache:\n  dir: cache\n");
  // Now "tone" is used by no template: an unknown variable, named at its line.
  run = run_gate({"run", "--config", "gate.yaml", "--out", "out", "--quiet"}, dir, key);
  CHECK(run.exit_code == 2);
  CHECK(has(run.err, "versions/v1/cases.jsonl:1: case \"q1\": variable \"tone\" is unknown: not used by"));

  spit(dir / "prompts" / "question.md", "Question ({{tone}}): {{ q }}\n");
  run = run_gate({"run", "--config", "gate.yaml", "--out", "out", "--quiet"}, dir, key);
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  REQUIRE(upstream.requests() == 2);
  bool rendered = false;
  for (const auto& req : upstream.log())
    rendered =
        rendered || req.body.find("\"content\":\"Question (brief): What is 2+2?\"") != std::string::npos;
  CHECK(rendered);
  // The report keeps the question of every task, with its hash.
  auto report = read_json(dir / "out" / "report.json");
  CHECK(report.at("tasks").at(0).at("input").as_string() == "user: Question (brief): What is 2+2?");
  CHECK(report.at("tasks").at(0).at("input_sha256").as_string().size() == 64);
  CHECK(report.at("prompts").at(0).at("name").as_string() == "prompts/question.md");
}

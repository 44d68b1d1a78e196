// End-to-end: promptfoo's inline python assertions, imported as script
// checks that run the generated promptfoo_python.py, record their verdicts
// on answers from the fake upstream and give the same ones on the replay.
// Needs python3 on PATH (a skip without it), as the checks themselves do.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <map>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

// "task label" → passed, and the reason a script check gave.
std::map<std::string, std::string> verdicts(const boost::json::value& report) {
  std::map<std::string, std::string> out;
  for (const auto& t : report.at("tasks").as_array()) {
    const std::string id(t.at("id").as_string());
    const auto& run = t.at("runs").as_array().at(0);
    for (const auto& c : run.at("checks").as_array()) {
      const auto* reason = c.as_object().if_contains("reason");
      out[id + " " + std::string(c.at("label").as_string())] =
          std::string(c.at("passed").as_bool() ? "pass" : "fail") + ": " +
          (reason != nullptr ? std::string(reason->as_string()) : "");
    }
  }
  return out;
}

} // namespace

TEST_CASE("inline python assertions run as promptfoo runs them, recorded and replayed offline") {
  TempDir tmp;
  const fs::path dir = tmp.path();
  if (sh(dir, "command -v python3").exit_code != 0)
    return gate::testing::skip_test("python3 is not on PATH; script checks run it");
  gate::testing::FakeUpstream upstream(gate::testing::parse_script(R"({"rules": [
    {"match": "capital", "answers": ["Paris is the capital."]},
    {"match": "apologise", "answers": ["Sorry, I cannot."]}]})"));
  upstream.start();
  spit(dir / "promptfooconfig.yaml", "prompts: ['{{q}}']\nproviders:\n  - id: openai:chat:m\n    config:\n"
                                     "      apiBaseUrl: " +
                                         upstream.base_url() + R"(
tests:
  - description: capital
    vars: {q: Name the capital of France.}
    assert:
      - type: python
        value: "'Paris' in output"
        metric: paris
      - type: not-python
        value: len(output) > 100
        metric: short
      - type: python
        value: |
          a = output.count('a')
          return a / 10
        threshold: 0.5
        metric: a-count
  - description: apology
    vars: {q: Please apologise.}
    assert:
      - type: python
        value: "{'pass': output.startswith('Sorry'), 'score': 1, 'reason': 'starts with Sorry'}"
        metric: sorry
      - type: not-python
        value: 1 / 0
        metric: crash
)");
  Result im = run_gate({"import", "promptfoo", "promptfooconfig.yaml", "--out", "evals/py"}, dir);
  INFO(im.out << im.err);
  REQUIRE(im.exit_code == 0);
  CHECK(fs::exists(dir / "evals" / "py" / "suite" / "promptfoo_python.py"));
  Result rec = run_gate({"run", "--config", "evals/py/gate.yaml", "--runs", "1", "--out", "rec", "--quiet"},
                        dir, {{"OPENAI_API_KEY", "k"}});
  INFO(rec.out << rec.err);
  REQUIRE(fs::exists(dir / "rec" / "report.json"));
  CHECK(upstream.requests() == 2);
  Result rep = run_gate({"run", "--config", "evals/py/gate.yaml", "--runs", "1", "--out", "rep", "--quiet",
                         "--mode", "replay-only"},
                        dir, {{"OPENAI_API_KEY", ""}});
  INFO(rep.out << rep.err);
  CHECK(rep.exit_code == rec.exit_code);
  CHECK(upstream.requests() == 2);
  // "Paris is the capital." has 3 a's: 0.3 is under the threshold 0.5. A
  // crash fails the assertion even when negated, as in promptfoo.
  const std::map<std::string, std::string> want = {
      {"capital script:paris", "pass: Python code returned true"},
      {"capital script:short", "pass: Python code returned false"},
      {"capital script:a-count", "fail: Python code returned false"},
      {"apology script:sorry", "pass: starts with Sorry"},
      {"apology script:crash", "fail: Python code execution failed: division by zero"},
  };
  CHECK(verdicts(read_json(dir / "rec" / "report.json")) == want);
  CHECK(verdicts(read_json(dir / "rep" / "report.json")) == want);
}

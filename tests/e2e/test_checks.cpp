// End-to-end: the reply, group, similarity and refusal checks on answers
// recorded from the fake upstream (tool calls, finish reasons), then
// replayed offline with the same outcomes.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

// Each run's checks as label → passed, and the run's own verdict.
std::map<std::string, bool> outcomes(const boost::json::value& report) {
  std::map<std::string, bool> out;
  for (const auto& t : report.at("tasks").as_array()) {
    const std::string id(t.at("id").as_string());
    for (const auto& r : t.at("runs").as_array()) {
      out[id] = r.at("passed").as_bool();
      for (const auto& c : r.at("checks").as_array())
        out[id + " " + std::string(c.at("label").as_string())] = c.at("passed").as_bool();
    }
  }
  return out;
}

} // namespace

TEST_CASE("checks on tool calls, finish reasons, similarity and refusals: record, then replay offline") {
  gate::testing::FakeUpstream upstream(gate::testing::parse_script(R"({"rules": [
    {"match": "weather", "answers": ["Let me look that up."],
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},
                    {"name": "get_forecast", "arguments": {"city": "Paris"}}]},
    {"match": "capital", "answers": ["The capital of France is Paris."]},
    {"match": "essay", "answers": ["I'm sorry, but I can't write that"], "finish_reason": "length"}]})"));
  upstream.start();
  TempDir tmp;
  const fs::path dir = tmp.path();
  spit(
      dir / "cases.jsonl",
      R"({"id": "weather", "input": "What is the weather in Paris?", "checks": [)"
      R"({"type": "tool_called", "tool": "get_weather", "count": 1}, )"
      R"({"type": "tool_args", "tool": "get_weather", "paths": [{"path": "/city", "equals": "Paris"}]}, )"
      R"({"type": "tool_order", "equals": ["get_weather", "get_forecast"]}, )"
      R"({"type": "finish_reason", "equals": "tool_calls"}, {"type": "latency_ms", "max": 60000}]})"
      "\n"
      R"({"id": "capital", "input": "Name the capital of France.", "expected": "The capital of France is Paris", )"
      R"("checks": [{"type": "similar", "threshold": 0.9}, {"type": "similar", "method": "rouge_l"}, )"
      R"({"type": "refusal"}, {"type": "no_tool_call"}, {"type": "finish_reason", "not": "length"}, )"
      R"({"type": "any_of", "checks": [{"type": "contains", "value": "Rome"}, {"type": "contains", "value": "Paris"}]}, )"
      R"({"not": {"type": "tool_called", "tool": "get_weather"}}]})"
      "\n"
      R"({"id": "essay", "input": "Write an essay.", "checks": [{"not": {"type": "refusal"}}, )"
      R"({"type": "finish_reason", "not": "length"}]})"
      "\n");
  Result created = run_gate({"suite", "create", "suite", "--name", "checks", "--from", "cases.jsonl"}, dir);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
  spit(dir / "gate.yaml", "suite:\n  path: suite\nmodel:\n  base_url: " + upstream.base_url() +
                              "\n  name: m\nruns: 1\ncache:\n  dir: cache\n");

  Result rec =
      run_gate({"run", "--config", "gate.yaml", "--out", "rec", "--quiet"}, dir, {{"OPENAI_API_KEY", "k"}});
  INFO(rec.out << rec.err);
  REQUIRE(fs::exists(dir / "rec" / "report.json"));
  CHECK(upstream.requests() == 3);
  const auto a = read_json(dir / "rec" / "report.json");
  const std::map<std::string, bool> want = {
      {"weather", true},
      {"weather tool_called", true},
      {"weather tool_args", true},
      {"weather tool_order", true},
      {"weather finish_reason", true},
      {"weather latency_ms", true},
      {"capital", true},
      {"capital similar", true},
      {"capital refusal", true},
      {"capital no_tool_call", true},
      {"capital finish_reason", true},
      {"capital any_of(contains, contains)", true},
      {"capital not(tool_called)", true},
      {"essay", false},
      {"essay not(refusal)", true},
      {"essay finish_reason", false},
  };
  CHECK(outcomes(a) == want);
  // The model task's tool calls feed the trajectory numbers, as an agent's do.
  CHECK(a.at("stats").at("trajectory_inconsistency_pp").is_number());

  Result rep = run_gate({"run", "--config", "gate.yaml", "--out", "rep", "--quiet", "--mode", "replay-only"},
                        dir, {{"OPENAI_API_KEY", ""}});
  INFO(rep.out << rep.err);
  CHECK(rep.exit_code == rec.exit_code);
  CHECK(upstream.requests() == 3); // all replayed, latency_ms included
  CHECK(outcomes(read_json(dir / "rep" / "report.json")) == want);
}

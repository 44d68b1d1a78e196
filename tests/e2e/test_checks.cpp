// End-to-end: the reply, group, similarity and refusal checks on answers
// recorded from the fake upstream (tool calls, finish reasons), then
// replayed offline with the same outcomes.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

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

// Creates the suite from dir/cases.jsonl (after `prepare`, which may add
// files to it), records every answer from `upstream`, then replays offline
// with no key: the two reports, after checking that the replay made no call
// and exited as the recording did.
std::pair<boost::json::value, boost::json::value>
record_then_replay(const fs::path& dir, gate::testing::FakeUpstream& upstream, std::size_t calls,
                   const std::string& yaml_extra = "", const std::function<void()>& prepare = {}) {
  Result created = run_gate({"suite", "create", "suite", "--name", "checks", "--from", "cases.jsonl"}, dir);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
  if (prepare) prepare();
  spit(dir / "gate.yaml", "suite:\n  path: suite\nmodel:\n  base_url: " + upstream.base_url() +
                              "\n  name: m\nruns: 1\ncache:\n  dir: cache\n" + yaml_extra);
  Result rec =
      run_gate({"run", "--config", "gate.yaml", "--out", "rec", "--quiet"}, dir, {{"OPENAI_API_KEY", "k"}});
  INFO(rec.out << rec.err);
  REQUIRE(fs::exists(dir / "rec" / "report.json"));
  CHECK(upstream.requests() == calls);
  Result rep = run_gate({"run", "--config", "gate.yaml", "--out", "rep", "--quiet", "--mode", "replay-only"},
                        dir, {{"OPENAI_API_KEY", ""}});
  INFO(rep.out << rep.err);
  CHECK(rep.exit_code == rec.exit_code);
  CHECK(upstream.requests() == calls); // all replayed
  return {read_json(dir / "rec" / "report.json"), read_json(dir / "rep" / "report.json")};
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
  const auto [a, b] = record_then_replay(dir, upstream, 3);
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
  CHECK(outcomes(b) == want); // latency_ms included
}

namespace {

// Each run's checks as label → detail, and label → reason where there is one.
std::map<std::string, std::string> details(const boost::json::value& report) {
  std::map<std::string, std::string> out;
  for (const auto& t : report.at("tasks").as_array()) {
    const std::string id(t.at("id").as_string());
    for (const auto& r : t.at("runs").as_array())
      for (const auto& c : r.at("checks").as_array()) {
        const std::string label = id + " " + std::string(c.at("label").as_string());
        out[label] = std::string(c.at("detail").as_string());
        if (const auto* reason = c.as_object().if_contains("reason"))
          out[label + " reason"] = std::string(reason->as_string());
      }
  }
  return out;
}

} // namespace

TEST_CASE("json_schema and script checks: record, then replay offline with the same details and reasons") {
  gate::testing::FakeUpstream upstream(gate::testing::parse_script(R"({"rules": [
    {"match": "order", "answers": ["Here it is:\n```json\n{\"id\": \"A1\", \"items\": [{\"qty\": 0}]}\n```"]},
    {"match": "sum", "answers": ["5"]}]})"));
  upstream.start();
  TempDir tmp;
  const fs::path dir = tmp.path();
  const std::string schema =
      R"({"type": "object", "required": ["id", "items"], "properties": {"items": {"type": "array", "items": )"
      R"({"$ref": "#/$defs/item"}}}, "$defs": {"item": {"properties": {"qty": {"type": "integer", "minimum": 1}}}}})";
  spit(
      dir / "cases.jsonl",
      R"({"id": "order", "input": "Give the order as JSON.", "checks": [)"
      R"({"type": "json_schema", "schema": )" +
          schema +
          R"(}, {"type": "json_schema", "name": "id", "path": "/id", "schema": {"type": "string", "pattern": "^A\\d+$"}}, )"
          R"({"type": "script", "argv": ["sh", "grade.sh"]}, )"
          R"({"type": "any_of", "checks": [{"type": "contains", "value": "nope"}, {"type": "script", "argv": ["sh", "grade.sh"]}]}, )"
          R"({"not": {"type": "json_schema", "schema": {"type": "array"}}}]})"
          "\n"
          R"({"id": "sum", "input": "What is the sum of 2 and 2?", "expected": "4", "checks": [{"type": "script", "argv": ["sh", "grade.sh"]}]})"
          "\n"
          R"({"id": "broken", "input": "What is the sum of 1 and 1?", "checks": [{"type": "script", "argv": ["./missing.sh"]}]})"
          "\n");
  // From the suite directory: compares the answer with the case's expected
  // (in GATE_CASE), passes the JSON answer.
  const auto [a, b] = record_then_replay(dir, upstream, 3, "thresholds:\n  max_errored_runs_pct: 100\n", [&] {
    spit(dir / "suite" / "grade.sh",
         "answer=$(cat)\n"
         "case \"$answer\" in *'\"id\"'*) echo \"order of $GATE_TASK_ID looks fine\"; exit 0;; esac\n"
         "case \"$GATE_CASE\" in *\"\\\"expected\\\":\\\"$answer\\\"\"*) echo ok; exit 0;; esac\n"
         "echo \"expected 4, got $answer\"; exit 1\n");
  });
  const std::map<std::string, bool> want = {
      {"order", false},
      {"order json_schema", false},
      {"order json_schema:id", true},
      {"order script", true},
      {"order any_of(contains, script)", true},
      {"order not(json_schema)", true},
      {"sum", false},
      {"sum script", false},
      {"broken", false},
      {"broken script", false},
  };
  CHECK(outcomes(a) == want);
  const auto d = details(a);
  CHECK(d.at("order json_schema") == "/items/0/qty: 0 is less than minimum 1");
  CHECK(d.at("order script reason") == "order of order looks fine");
  CHECK(d.at("sum script") ==
        "expected [\"sh\", \"grade.sh\"] to exit 0; it exited with 1: expected 4, got 5");
  CHECK(d.at("sum script reason") == "expected 4, got 5");
  CHECK(d.at("broken script").find("cannot start") != std::string::npos);
  // The script that could not start is an errored run, not a failed one.
  for (const auto& t : a.at("tasks").as_array())
    CHECK((t.at("runs").at(0).at("error").as_string() == "check") == (t.at("id").as_string() == "broken"));
  CHECK(outcomes(b) == want);
  CHECK(details(b) == d);
}

TEST_CASE("fixtures/checks: every check type issue 19 added replays offline from its committed cassette") {
  TempDir tmp;
  // No key, and nothing listens at the recorded base URL: all from the cache.
  Result r = run_gate({"run", "--config", (source_dir() / "fixtures" / "checks" / "gate.yaml").string(),
                       "--out", (tmp.path() / "out").string(), "--quiet"},
                      tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("10 of 10 runs replayed; 0 errored") != std::string::npos);
  const boost::json::value report = read_json(tmp.path() / "out" / "report.json");

  std::set<std::string> types; // from the labels: "any_of(contains, contains)" → any_of
  for (const auto& [label, passed] : outcomes(report))
    if (const std::size_t space = label.find(' '); space != std::string::npos)
      types.insert(label.substr(space + 1, label.find_first_of("(:", space) - space - 1));
  for (const char* t :
       {"tool_called", "tool_args", "no_tool_call", "tool_order", "finish_reason", "latency_ms", "cost",
        "not", "any_of", "all_of", "similar", "refusal", "json_schema", "script"}) {
    CAPTURE(t);
    CHECK(types.count(t) == 1);
  }
  const std::map<std::string, bool> want = {
      {"weather", true},
      {"weather tool_called", true},
      {"weather tool_args", true},
      {"weather tool_order", true},
      {"weather finish_reason", true},
      {"weather latency_ms", true},
      {"weather cost", true},
      {"capital", true},
      {"capital similar", true},
      {"capital refusal", true},
      {"capital no_tool_call", true},
      {"capital finish_reason", true},
      {"capital any_of(contains, contains)", true},
      {"capital all_of(starts_with, contains)", true},
      {"capital not(tool_called)", true},
      {"essay", false},
      {"essay not(refusal)", true},
      {"essay finish_reason", false},
      {"essay cost", false},
      {"order", false},
      {"order json_schema", false},
      {"order json_schema:id", true},
      {"order script", true},
      {"order not(json_schema)", true},
      {"sum", false},
      {"sum script", false},
  };
  CHECK(outcomes(report) == want);
  const auto d = details(report);
  CHECK(d.at("order json_schema") == "/items/0/qty: 0 is less than minimum 1");
  CHECK(d.at("order script reason") == "order of order looks fine");
  CHECK(d.at("sum script reason") == "expected the case's answer, got 5");
  CHECK(d.at("essay finish_reason").find("length") != std::string::npos);
  // The model tasks' tool calls are trajectories, and the pricing table prices every run.
  CHECK(report.at("stats").at("trajectory_inconsistency_pp").is_number());
  CHECK(report.at("stats").at("cached_cost_usd").is_number());
}

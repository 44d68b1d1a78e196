// Reading τ-bench and τ²-bench result files (gate/ingest/harness.cpp): the
// format picked by shape, and each trial's outcome, tokens, trajectory,
// route and failure note as read_record turns them into a run.
#include <doctest.h>

#include <gate/ingest/ingest.hpp>
#include <gate/util/error.hpp>

using namespace gate;
using namespace gate::ingest;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<Record> read_all(const FileRecords& f) {
  std::vector<Record> out;
  for (const auto& l : f.records)
    out.push_back(read_record(l, {}));
  return out;
}

std::string error_of(const std::string& text, const Options& o = {}) {
  try {
    records_of({"r.json", text}, o);
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    return e.what();
  }
  return "";
}

// Two τ-bench trials as run.py dumps them (indent=2 in the real file).
const std::string k_tau_bench = R"([
  {"task_id": 7, "reward": 0.0, "trial": 1,
   "info": {"task": {"user_id": "u"}, "user_cost": 0.001,
            "reward_info": {"reward": 0.0, "info": {"r_actions": 0.0, "gt_data_hash": "ab"}, "actions": []}},
   "traj": [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
              {"id": "c0", "type": "function", "function": {"name": "get_order", "arguments": "{\"id\": 1}"}}]},
            {"role": "tool", "tool_call_id": "c0", "name": "get_order", "content": "{}"}]},
  {"task_id": 7, "reward": 1.0, "trial": 0, "info": {}, "traj": []}
])";

// A τ²-bench Results object with one simulation; the user simulator calls a
// tool of its own and reports usage, neither of which is the agent's.
const std::string k_tau2 = R"({
  "timestamp": "2025-06-01T10:05:00",
  "info": {"git_commit": "abc", "num_trials": 1, "max_steps": 30, "max_errors": 10,
           "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1-mini", "llm_args": {}},
           "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1", "llm_args": {"temperature": 0.0}},
           "environment_info": {"domain_name": "telecom"}, "seed": 300},
  "tasks": [],
  "simulations": [
    {"id": "s0", "task_id": "t1", "trial": 0, "seed": 42, "duration": 2.5, "termination_reason": "max_steps",
     "agent_cost": 0.01, "user_cost": 0.001,
     "reward_info": {"reward": 0.0, "db_check": {"db_match": false, "db_reward": 0.0},
                     "communicate_checks": [{"info": "x", "met": true, "justification": ""},
                                            {"info": "y", "met": false, "justification": ""}]},
     "messages": [
       {"role": "assistant", "content": "Hi", "usage": {"prompt_tokens": 100, "completion_tokens": 10}},
       {"role": "user", "content": null, "usage": {"prompt_tokens": 40, "completion_tokens": 4},
        "tool_calls": [{"id": "u1", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}]},
       {"role": "tool", "id": "u1", "content": "ok", "requestor": "user"},
       {"role": "assistant", "content": null, "usage": {"prompt_tokens": 150, "completion_tokens": 20},
        "tool_calls": [{"id": "a1", "name": "get_customer", "arguments": {"id": "C1"}, "requestor": "assistant"}]}
     ]}
  ]
})";

} // namespace

TEST_CASE("parse_format: the names; anything else is bad input naming them") {
  CHECK(parse_format("auto") == Format::automatic);
  CHECK(parse_format("jsonl") == Format::jsonl);
  CHECK(parse_format("tau-bench") == Format::tau_bench);
  CHECK(parse_format("tau2") == Format::tau2);
  CHECK_THROWS_WITH_AS(parse_format("tau"),
                       "--format \"tau\": expected auto, jsonl, tau-bench, tau2, inspect or promptfoo",
                       Error);
}

TEST_CASE("a τ-bench results list: trial is the run, reward == 1 passes, traj is the trajectory") {
  auto f = records_of({"r.json", k_tau_bench}, {});
  CHECK(f.format == Format::tau_bench);
  auto recs = read_all(f);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].task_id == "7");
  CHECK(recs[0].run_id == "1");
  CHECK_FALSE(recs[0].run.passed);
  CHECK(recs[0].where == "r.json: trial [0]");
  REQUIRE(recs[0].run.tool_calls.size() == 1);
  CHECK(recs[0].run.tool_calls[0].name == "get_order");
  CHECK_FALSE(recs[0].run.usage_known); // τ-bench keeps no token usage: n/a, not 0
  CHECK(recs[0].run.route.empty());     // nor the model: no route
  CHECK(f.records[0].note == "r_actions 0");
  CHECK(recs[1].run.passed);
  CHECK(recs[1].run.tool_calls.empty());
}

TEST_CASE("a τ-bench trial that raised (info.error) is an errored run, not a failure") {
  auto f = records_of({"r.json", R"([{"task_id": 1, "trial": 0, "reward": 0.0, "traj": [],
                                      "info": {"error": "RateLimitError", "traceback": "..."}}])"},
                      {});
  auto recs = read_all(f);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].run.errored());
  CHECK(recs[0].run.error == "exception");
}

TEST_CASE("a τ²-bench results file: the agent's tokens and calls, model and user model in the route") {
  auto f = records_of({"results.json", k_tau2}, {});
  CHECK(f.format == Format::tau2);
  auto recs = read_all(f);
  REQUIRE(recs.size() == 1);
  const auto& run = recs[0].run;
  CHECK(recs[0].task_id == "t1");
  CHECK(recs[0].run_id == "0");
  CHECK(recs[0].where == "results.json: simulations[0]");
  CHECK_FALSE(run.passed);
  CHECK(run.usage_known);
  CHECK(run.prompt_tokens == 250); // 100 + 150: the user simulator's 40 are not the agent's
  CHECK(run.completion_tokens == 30);
  REQUIRE(run.tool_calls.size() == 1); // toggle_airplane_mode was the user's
  CHECK(run.tool_calls[0].name == "get_customer");
  CHECK(run.latency_ms == doctest::Approx(2500));
  CHECK(run.route.at("model") == "gpt-4.1");
  CHECK(run.route.at("user_model") == "gpt-4.1-mini");
  CHECK(run.route.at("temperature") == "0");
  CHECK(run.route.at("seed") == "42");
  CHECK(f.records[0].note == "ended: max_steps; db_reward 0; communicate_checks 1 of 2 met");
}

TEST_CASE("τ²-bench: a results file on one line is still τ²-bench's, not one JSONL record") {
  std::string text = k_tau2;
  for (auto& ch : text)
    if (ch == '\n') ch = ' ';
  auto f = records_of({"results.json", text}, {});
  CHECK(f.format == Format::tau2);
  CHECK(f.records.size() == 1);
}

TEST_CASE("τ²-bench: the canned greeting (usage null) is no missing measurement; a later message is") {
  // Every real τ²-bench conversation where the agent speaks first opens with
  // the orchestrator's fixed greeting, which carries usage: null.
  std::string text = k_tau2;
  const std::string greeting =
      R"({"role": "assistant", "content": "Hi", "usage": {"prompt_tokens": 100, "completion_tokens": 10}})";
  REQUIRE(text.find(greeting) != std::string::npos);
  text.replace(
      text.find(greeting), greeting.size(),
      R"({"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": null, "usage": null, "raw_data": null, "cost": 0.0})");
  auto recs = read_all(records_of({"results.json", text}, {}));
  REQUIRE(recs[0].run.usage_known);
  CHECK(recs[0].run.prompt_tokens == 150); // the model's message alone
  CHECK(recs[0].run.completion_tokens == 20);
  // A null usage on a model's later message is a missing measurement.
  text.replace(text.find(R"("usage": {"prompt_tokens": 150, "completion_tokens": 20},)"),
               std::string(R"("usage": {"prompt_tokens": 150, "completion_tokens": 20},)").size(),
               R"("usage": null,)");
  CHECK_FALSE(read_all(records_of({"results.json", text}, {}))[0].run.usage_known);
}

TEST_CASE("τ²-bench: an agent message without usage makes the run's tokens n/a") {
  std::string text = k_tau2;
  text.replace(text.find(R"("usage": {"prompt_tokens": 150, "completion_tokens": 20},)"),
               std::string(R"("usage": {"prompt_tokens": 150, "completion_tokens": 20},)").size(), "");
  auto recs = read_all(records_of({"results.json", text}, {}));
  CHECK_FALSE(recs[0].run.usage_known);
}

TEST_CASE("τ²-bench: an infrastructure error is an errored run, as τ²-bench leaves it out of its metrics") {
  std::string text = k_tau2;
  const std::string ended = R"("termination_reason": "max_steps")";
  text.replace(text.find(ended), ended.size(), R"("termination_reason": "infrastructure_error")");
  auto recs = read_all(records_of({"results.json", text}, {}));
  CHECK(recs[0].run.errored());
  CHECK(recs[0].run.error == "infrastructure_error");
}

TEST_CASE("bad input: the file, the record, the field and what was expected") {
  // A trial without reward.
  CHECK(error_of(R"([{"task_id": 1, "trial": 0, "info": {}, "traj": []}])") ==
        "r.json: trial [0]: field \"reward\": expected a number (the trial's reward), none found");
  // A simulation without reward_info.
  std::string text = k_tau2;
  text.replace(text.find("\"reward\": 0.0"), 13, "\"score\": 0.0");
  CHECK(error_of(text) ==
        "r.json: simulations[0]: field \"reward_info.reward\": expected a number (the simulation's reward), "
        "none found");
  // Usage that is no token count.
  text = k_tau2;
  text.replace(text.find("\"prompt_tokens\": 150"), 20, "\"prompt_tokens\": 1.5");
  CHECK(error_of(text) ==
        "r.json: simulations[0]: field \"messages[3].usage.prompt_tokens\": expected a whole "
        "number >= 0, got a number");
  // One object over several lines that is neither format.
  CHECK(has(
      error_of("{\n  \"runs\": []\n}\n"),
      "r.json: one JSON object that no harness's results file matches; expected a τ²-bench results file"));
  // A truncated results file: the place in the file, not its first line.
  CHECK(has(error_of("{\n  \"info\": {},\n  \"simulations\": [\n"), "r.json:4:1:"));
  // A format asked for that the file is not.
  CHECK(has(error_of("[]", Options{Format::tau2, {}, {}}), "r.json: expected a τ²-bench results file"));
  CHECK(has(error_of(k_tau2, Options{Format::tau_bench, {}, {}}),
            "r.json: expected a τ-bench results list (a JSON array of trials), got an object"));
  // --map is for the generic records.
  CHECK(has(error_of(k_tau2, Options{Format::tau2, {{"model", "m"}}, {}}), "--map"));
}

TEST_CASE("auto: JSONL and arrays of generic records stay the generic format; --map means generic") {
  CHECK(records_of({"l.jsonl", "{\"task_id\": 1, \"passed\": true}\n"}, {}).format == Format::jsonl);
  CHECK(records_of({"a.json", "[{\"task_id\": 1, \"passed\": true}]"}, {}).format == Format::jsonl);
  Options mapped;
  mapped.map = {{"messages", "traj"}};
  CHECK(records_of({"r.json", k_tau_bench}, mapped).format == Format::jsonl);
}

TEST_CASE("τ²-bench's directory format: the simulations in their own files, checked against the index") {
  // k_tau2's header with its simulation in simulations/s0.json.
  const std::string meta = R"({"timestamp": "t", "info": {"agent_info": {"llm": "gpt-4.1"}}, "tasks": [],
    "simulation_index": [{"id": "s0", "task_id": "t1", "trial": 0, "reward": 0.0}]})";
  std::string sim = k_tau2.substr(k_tau2.find("{\"id\": \"s0\""));
  sim = sim.substr(0, sim.rfind(']'));
  Input in{"run/results.json", meta, {{"run/simulations/s0.json", sim}}};
  auto f = records_of(in, {});
  CHECK(f.format == Format::tau2);
  auto recs = read_all(f);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].where == "run/simulations/s0.json");
  CHECK(recs[0].task_id == "t1");
  CHECK(recs[0].run.prompt_tokens == 250);
  CHECK(recs[0].run.route.at("model") == "gpt-4.1");
  // No simulations beside it; one not in the index; a malformed one.
  in.simulations.clear();
  CHECK(has(error_of(meta), "r.json: a τ²-bench results.json of the directory format"));
  in.simulations = {{"run/simulations/s9.json", R"({"id": "s9", "task_id": "t1", "trial": 1})"}};
  try {
    records_of(in, {});
    FAIL("an extra simulation must be an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "run/simulations/s9.json: simulation \"s9\" is not in run/results.json's "
                                   "simulation_index; expected only the indexed simulations");
  }
  in.simulations = {{"run/simulations/s0.json", "{\"id\": \"s0\",\n"}};
  try {
    records_of(in, {});
    FAIL("a truncated simulation must be an error");
  } catch (const Error& e) {
    CHECK(has(e.what(), "run/simulations/s0.json:2:1:"));
  }
}

TEST_CASE("τ-bench: the model, temperature and user model from the file name run.py gives it") {
  auto route = [](const std::string& file) {
    return read_all(records_of({file, k_tau_bench}, {}))[0].run.route;
  };
  // <strategy>-<model>-<temperature>_range_<start>-<end>_user-<user model>-<user strategy>_<time>.json
  auto r =
      route("results/tool-calling-claude-3-5-sonnet-20241022-0.0_range_0--1_user-gpt-4o-llm_1120101530.json");
  CHECK(r.at("model") == "claude-3-5-sonnet-20241022");
  CHECK(r.at("temperature") == "0");
  CHECK(r.at("user_model") == "gpt-4o");
  r = route("few-shot-gpt-4o-mini-0.7_range_10-20_user-gpt-4-turbo-reflection_0101000000.json");
  CHECK(r.at("model") == "gpt-4o-mini");
  CHECK(r.at("temperature") == "0.7");
  CHECK(r.at("user_model") == "gpt-4-turbo");
  // Renamed, or not run.py's pattern: no route, as before.
  for (const char* other : {"retail.json", "tool-calling-gpt-4o-0.0_range_0--1_user-gpt-4o-llm.json",
                            "chat-gpt-4o-0.0_range_0--1_user-gpt-4o-llm_1120101530.json",
                            "act-gpt-4o-0.0_range_0--1_user-gpt-4o-robot_1120101530.json",
                            "act-gpt-4o-hot_range_0--1_user-gpt-4o-llm_1120101530.json"})
    CHECK(route(other).count("model") == 0);
}

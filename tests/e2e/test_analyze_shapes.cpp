// End-to-end: `gate analyze` on logs shaped like the common harnesses'
// published results (synthetic content, the published field layout): what
// the data hold is measured, what they do not hold reads n/a, and a seed
// that the harness gives each trial by design is not route pollution. The
// native result files of τ-bench, τ²-bench, Inspect AI (JSON) and promptfoo
// are read with --format auto: the format is picked by shape, and pass^k,
// success, the consistency gap, tokens and cost equal what the harness
// computes from the file (its own totals, read from the fixture, or its
// formula by hand).
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

fs::path fixture(const char* name) { return source_dir() / "fixtures" / "analyze" / name; }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

double number(const boost::json::value& v) { return v.to_number<double>(); }

// Compared with itself: nothing moves, and the verdict carries the cost.
void compare_with_itself(const TempDir& tmp, const std::string& cost_line) {
  Result c = run_gate({"compare", "--baseline", "out/report.json", "--current", "out/report.json", "--json",
                       "v.json", "--markdown", "v.md"},
                      tmp.path());
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  const auto verdict = read_json(tmp.path() / "v.json");
  CHECK(verdict.at("cost").at("current").at("priced").as_bool());
  CHECK(has(slurp(tmp.path() / "v.md"), cost_line));
}

} // namespace

TEST_CASE("a tau-bench results list: pass^k as tau-bench computes it; answers, usage, routes, latency n/a") {
  TempDir tmp;
  // A JSON list of trials {task_id, trial, reward, info, traj}; traj holds
  // the OpenAI-form messages, tool calls included.
  Result r =
      run_gate({"analyze", fixture("tau_bench_results.json").string(), "--map", "run_id=trial", "--map",
                "messages=traj", "--suite-name", "tau-retail", "--suite-version", "1", "--out", "out"},
               tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "4 tasks, 12 runs, success 58.3%"));
  CHECK(has(r.out, "n/a route-polluted tasks"));
  const auto stats = read_json(tmp.path() / "out" / "report.json").at("stats").as_object();
  // tau-bench: pass^k = mean over tasks of C(c, k)/C(n, k); c = 2, 0, 2, 3 of 3.
  const auto& hat = stats.at("pass_hat_k").as_array();
  REQUIRE(hat.size() == 3);
  CHECK(number(hat[0]) == doctest::Approx(7.0 / 12));
  CHECK(number(hat[1]) == doctest::Approx(5.0 / 12)); // (1/3 + 0 + 1/3 + 1)/4
  CHECK(number(hat[2]) == doctest::Approx(0.25));
  // Every task's third trial took another path: trajectories read from traj.
  CHECK(number(stats.at("trajectory_inconsistency_pp")) == doctest::Approx(100));
  CHECK(number(stats.at("trajectory_similarity")) < 1.0);
  // Not in the data: answers, token usage, route fields, latency.
  CHECK(stats.at("answer_inconsistency_pp").is_null());
  CHECK(stats.at("token_band_outliers").is_null());
  CHECK(stats.at("polluted_tasks").is_null());
  CHECK(stats.at("call_latency").at("count").as_int64() == 0);
  const std::string md = slurp(tmp.path() / "out" / "report.md");
  CHECK(has(md, "| Answer inconsistency | n/a (not in the data) |"));
  CHECK(has(md, "| Token band outliers | n/a (not in the data) |"));
  CHECK(has(md, "| Route-polluted tasks | n/a (not in the data) |"));
  CHECK(has(md, "n/a (not in the data): no fresh run carries a latency"));
  CHECK_FALSE(has(md, "shared one route"));
  CHECK_FALSE(has(md, "Model calls"));

  // Compared with itself: nothing moved, the runs carry no fingerprints, the
  // token and latency rows are n/a and not gated.
  Result c = run_gate(
      {"compare", "--baseline", "out/report.json", "--current", "out/report.json", "--json", "v.json"},
      tmp.path());
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  CHECK(has(c.out, "(fingerprints unknown)"));
  const auto verdict = read_json(tmp.path() / "v.json");
  for (const auto& m : verdict.at("metrics").as_array())
    if (m.at("key") == "tokens_per_task" || m.at("key") == "p95_latency") {
      CHECK_FALSE(m.at("available").as_bool());
      CHECK_FALSE(m.at("gated").as_bool());
    }
}

TEST_CASE("tau2-bench simulations: the seed each trial gets by design is reported once, not pollution") {
  TempDir tmp;
  // Simulation records {task_id, trial, seed, reward_info, messages, …}:
  // trial r runs with seed s_r in every task.
  Result r = run_gate({"analyze", fixture("tau2_simulations.json").string(), "--map", "run_id=trial", "--map",
                       "reward=reward_info.reward", "--suite-name", "tau2-airline", "--suite-version", "1",
                       "--out", "out"},
                      tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto stats = read_json(tmp.path() / "out" / "report.json").at("stats").as_object();
  CHECK(stats.at("polluted_tasks").as_int64() == 0);
  const auto& seeds = stats.at("route_by_run").at("seed").as_array();
  REQUIRE(seeds.size() == 4);
  CHECK(seeds[0].as_string() == "626729");
  CHECK(seeds[1].as_string() == "373753");
  // airline_1 (3 of 4) and airline_3 (3 of 4) are mixed, airline_2 never
  // passes: the gap is 2 of 3 tasks, not 0 as when every task was polluted.
  CHECK(number(stats.at("consistency_gap_pp")) == doctest::Approx(200.0 / 3));
  CHECK(has(slurp(tmp.path() / "out" / "report.md"),
            "| Route by run: seed | 626729, 373753, 918475, 104459 |"));
  Result c = run_gate(
      {"compare", "--baseline", "out/report.json", "--current", "out/report.json", "--json", "v.json"},
      tmp.path());
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  CHECK_FALSE(has(c.out, "routes differ"));
  const auto verdict = read_json(tmp.path() / "v.json");
  for (const auto& m : verdict.at("metrics").as_array())
    if (m.at("key") == "consistency_gap") CHECK(m.at("gated").as_bool());
}

TEST_CASE("τ-bench results list: picked by shape; pass^k by tau_bench/run.py's formula") {
  TempDir tmp;
  Result r = run_gate(
      {"analyze", "--format", "auto", fixture("tau_bench_retail.json").string(), "--out", "out"}, tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "3 tasks, 9 runs, success 66.7%"));
  const auto report = read_json(tmp.path() / "out" / "report.json");
  CHECK(report.at("config").at("formats").as_array()[0].as_string() == "tau-bench");
  const auto stats = report.at("stats").as_object();
  // run.py's display_metrics: passed = reward within 1e-6 of 1; per task
  // pass^k = C(c, k) / C(num_trials, k), averaged over tasks. Here
  // num_trials = 3 and c = 3, 1, 2 for tasks 0, 1, 2:
  //   k=1: (3/3 + 1/3 + 2/3) / 3 = 2/3
  //   k=2: (3/3 + 0/3 + 1/3) / 3 = 4/9
  //   k=3: (1/1 + 0   + 0  ) / 3 = 1/3
  const auto& hat = stats.at("pass_hat_k").as_array();
  REQUIRE(hat.size() == 3);
  CHECK(number(hat[0]) == doctest::Approx(2.0 / 3));
  CHECK(number(hat[1]) == doctest::Approx(4.0 / 9));
  CHECK(number(hat[2]) == doctest::Approx(1.0 / 3));
  // pass@3 = 1 for every task (each passed at least once): gap = 1 − 1/3.
  CHECK(number(stats.at("consistency_gap_pp")) == doctest::Approx(200.0 / 3));
  // τ-bench keeps no token usage and no model: tokens and routes are n/a.
  CHECK(stats.at("runs_without_usage").as_int64() == 9);
  CHECK(stats.at("token_band_outliers").is_null());
  CHECK(stats.at("polluted_tasks").is_null());
  // Task 1's failing trials stop after its first call: it alone is not
  // trajectory-consistent (task 2 has one call, made by every trial).
  CHECK(number(stats.at("trajectory_inconsistency_pp")) == doctest::Approx(100.0 / 3));
  // The failing verdict carries the reward's part τ-bench recorded.
  CHECK(has(slurp(tmp.path() / "out" / "report.md"),
            "| 1 |  | 1/3 | flaky | reward (2 runs): 0 (needed 1); r\\_actions 0 |"));
}

TEST_CASE("τ²-bench results file: picked by shape; pass^k, tokens and route as τ²-bench has them") {
  TempDir tmp;
  Result r = run_gate({"analyze", fixture("tau2_airline_results.json").string(), "--out", "out"}, tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "3 tasks, 6 runs, success 50.0%"));
  const auto report = read_json(tmp.path() / "out" / "report.json");
  CHECK(report.at("config").at("formats").as_array()[0].as_string() == "tau2");
  const auto stats = report.at("stats").as_object();
  // tau2/metrics/agent_metrics.py: pass^k = C(c, k) / C(n, k) per task,
  // averaged; n = 2, c = 2, 1, 0:
  //   k=1: (1 + 1/2 + 0) / 3 = 1/2;  k=2: (1 + 0 + 0) / 3 = 1/3.
  const auto& hat = stats.at("pass_hat_k").as_array();
  REQUIRE(hat.size() == 2);
  CHECK(number(hat[0]) == doctest::Approx(0.5));
  CHECK(number(hat[1]) == doctest::Approx(1.0 / 3));
  // pass@2 = (1 + 1 + 0) / 3; gap = 2/3 − 1/3.
  CHECK(number(stats.at("consistency_gap_pp")) == doctest::Approx(100.0 / 3));
  // The agent's tokens summed over its messages; the user simulator's are
  // not counted, and task 2's second trial reports none (n/a, not 0):
  //   prompt 550 + 550 + 500 + 580 + 250, completion 45 + 45 + 36 + 31 + 35.
  CHECK(stats.at("prompt_tokens").as_int64() == 2430);
  CHECK(stats.at("completion_tokens").as_int64() == 192);
  CHECK(stats.at("runs_without_usage").as_int64() == 1);
  const auto& route = report.at("route").as_object();
  CHECK(route.at("model").as_string() == "gpt-4.1");
  CHECK(route.at("user_model").as_string() == "gpt-4.1-mini");
  CHECK(stats.at("polluted_tasks").as_int64() == 0); // the per-trial seed is by design
  // Task 1's second trial ran out of steps: the failing verdict says so.
  const auto& runs = report.at("tasks").as_array()[1].at("runs").as_array();
  CHECK(runs[1].at("checks").as_array()[0].at("detail").as_string() ==
        "0 (needed 1); ended: max_steps; db_reward 0; communicate_checks 0 of 1 met");
  // The user simulator's toggle_airplane_mode is not the agent's call.
  const auto& calls = runs[0].at("tool_calls").as_array();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].at("name").as_string() == "get_customer_by_phone");
}

TEST_CASE("a τ²-bench results file read as the generic format fails as before; a format it is not, exit 2") {
  TempDir tmp;
  const std::string file = fixture("tau2_airline_results.json").string();
  Result r = run_gate({"analyze", "--format", "jsonl", file, "--out", "out"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "tau2_airline_results.json:1:2: incomplete JSON (truncated?)"));
  r = run_gate({"analyze", "--format", "tau-bench", file, "--out", "out"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "expected a τ-bench results list (a JSON array of trials), got an object"));
  r = run_gate({"analyze", "--format", "tau3", file, "--out", "out"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "--format \"tau3\": expected auto, jsonl, tau-bench, tau2, inspect or promptfoo"));
  // A trial without reward, and one object that is neither harness's file.
  spit(tmp.path() / "trials.json", R"([{"task_id": 0, "trial": 0, "info": {}, "traj": []}])");
  r = run_gate({"analyze", "trials.json", "--out", "out"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err,
            "trials.json: trial [0]: field \"reward\": expected a number (the trial's reward), none found"));
  spit(tmp.path() / "other.json", "{\n  \"runs\": []\n}\n");
  r = run_gate({"analyze", "other.json", "--out", "out"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "other.json: one JSON object that no harness's results file matches; "
                   "expected a τ²-bench results file"));
  CHECK_FALSE(fs::exists(tmp.path() / "out" / "report.json"));
}

TEST_CASE("an Inspect AI eval log: epochs as runs; accuracy, tokens and cost as Inspect has them") {
  TempDir tmp;
  const fs::path log = fixture("inspect_capitals.json");
  Result r =
      run_gate({"analyze", log.string(), "--suite-name", "capitals", "--suite-version", "1", "--out", "out"},
               tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "3 tasks, 9 runs, success 55.6%"));
  const auto report = read_json(tmp.path() / "out" / "report.json");
  CHECK(report.at("config").at("formats").as_array()[0].as_string() == "inspect");
  const auto stats = report.at("stats").as_object();
  const auto inspect = read_json(log);
  // Inspect's accuracy (the mean of value_to_float over samples, each
  // sample's epochs reduced by their mean) is gate's success rate on a
  // C/I scorer with every epoch scored: (3/3 + 2/3 + 0/3) / 3 = 5/9.
  const double accuracy =
      number(inspect.at("results").at("scores").as_array()[0].at("metrics").at("accuracy").at("value"));
  CHECK(accuracy == doctest::Approx(5.0 / 9));
  CHECK(number(stats.at("overall").at("success_rate")) == doctest::Approx(accuracy));
  // pass^k = C(c, k)/C(3, k) per sample, averaged; c = 3, 2, 0:
  //   k=1: 5/9;  k=2: (1 + 1/3 + 0)/3 = 4/9;  k=3: (1 + 0 + 0)/3 = 1/3.
  const auto& hat = stats.at("pass_hat_k").as_array();
  REQUIRE(hat.size() == 3);
  CHECK(number(hat[0]) == doctest::Approx(5.0 / 9));
  CHECK(number(hat[1]) == doctest::Approx(4.0 / 9));
  CHECK(number(hat[2]) == doctest::Approx(1.0 / 3));
  // pass@3 = (1 + 1 + 0)/3: gap = 2/3 − 1/3.
  CHECK(number(stats.at("consistency_gap_pp")) == doctest::Approx(100.0 / 3));
  // Inspect's own totals over the samples (stats.model_usage): the prompt is
  // input_tokens plus cache reads (Inspect's input_tokens excludes them).
  const auto& usage = inspect.at("stats").at("model_usage").at("openai/gpt-4o-mini");
  CHECK(stats.at("prompt_tokens").as_int64() ==
        usage.at("input_tokens").as_int64() + usage.at("input_tokens_cache_read").as_int64());
  CHECK(stats.at("prompt_tokens").as_int64() == 950);
  CHECK(stats.at("completion_tokens").as_int64() == usage.at("output_tokens").as_int64());
  CHECK(number(stats.at("cost_usd")) == doctest::Approx(number(usage.at("total_cost"))));
  CHECK(number(stats.at("cost_usd")) == doctest::Approx(0.0001755));
  CHECK_FALSE(stats.contains("user_cost_usd")); // Inspect simulates no user
  CHECK(report.at("route").at("model").as_string() == "openai/gpt-4o-mini");
  // Samples 2 and 3 call lookup in some epochs only.
  CHECK(number(stats.at("trajectory_inconsistency_pp")) == doctest::Approx(100));
  // Sample 3's second epoch hit the message limit: its verdict says so.
  const auto& runs = report.at("tasks").as_array()[2].at("runs").as_array();
  CHECK(runs[1].at("checks").as_array()[0].at("detail").as_string() ==
        "0 (needed 1); match I; ended: message limit 6");
  CHECK(has(slurp(tmp.path() / "out" / "report.md"), "Cost (as the harness recorded it, measured runs): $"));
  compare_with_itself(tmp, "**Cost (not gated)**: paid $");
}

TEST_CASE(
    "promptfoo results: repeats as runs; successes, failures, errors, tokens and cost as promptfoo counts") {
  TempDir tmp;
  const fs::path file = fixture("promptfoo_results.json");
  // One ERROR row in nine is above the default 5% of errored runs (exit 3).
  Result r = run_gate({"analyze", file.string(), "--suite-name", "capitals", "--suite-version", "1",
                       "--max-errored-runs-pct", "20", "--out", "out"},
                      tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = read_json(tmp.path() / "out" / "report.json");
  CHECK(report.at("config").at("formats").as_array()[0].as_string() == "promptfoo");
  const auto stats = report.at("stats").as_object();
  const auto pf = read_json(file).at("results");
  const auto& pf_stats = pf.at("stats");
  const std::int64_t successes = pf_stats.at("successes").as_int64(),
                     failures = pf_stats.at("failures").as_int64(), errors = pf_stats.at("errors").as_int64();
  CHECK(successes == 5);
  CHECK(failures == 3);
  CHECK(errors == 1);
  // promptfoo's pass rate is successes / (successes + failures + errors) =
  // 5/9; gate counts an ERROR row apart (METRICS.md "Errors"): its success
  // is successes / (successes + failures) and its error rate errors / all.
  CHECK(stats.at("total_runs").as_int64() == successes + failures + errors);
  CHECK(stats.at("errored_runs").as_int64() == errors);
  CHECK(number(stats.at("overall").at("success_rate")) ==
        doctest::Approx(static_cast<double>(successes) / static_cast<double>(successes + failures)));
  CHECK(number(stats.at("error_rate")) == doctest::Approx(1.0 / 9));
  // Three tests × --repeat 3: each repeat a testIdx of its own, one task per test.
  const auto& tasks = report.at("tasks").as_array();
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0].at("id").as_string() == "capital of France [openai:gpt-4o-mini, prompt 0]");
  CHECK(tasks[2].at("id").as_string() == R"({"country":"Japan"} [openai:gpt-4o-mini, prompt 0])");
  CHECK(tasks[2].at("runs").as_array().size() == 3);
  // pass^k over the tasks with K = 3 measured runs (Peru's error leaves it
  // 2, so it is left out: METRICS.md "Common k"); c = 3 (France), 2 (Japan):
  //   k=1: (1 + 2/3)/2 = 5/6;  k=2: (1 + 1/3)/2 = 2/3;  k=3: (1 + 0)/2 = 1/2.
  CHECK(stats.at("pass_k_left_out").as_int64() == 1);
  const auto& hat = stats.at("pass_hat_k").as_array();
  REQUIRE(hat.size() == 3);
  CHECK(number(hat[0]) == doctest::Approx(5.0 / 6));
  CHECK(number(hat[1]) == doctest::Approx(2.0 / 3));
  CHECK(number(hat[2]) == doctest::Approx(0.5));
  CHECK(number(stats.at("consistency_gap_pp")) == doctest::Approx(50)); // pass@3 = 1
  // Tokens and cost: promptfoo's stats.tokenUsage and the prompt's metrics.cost.
  CHECK(stats.at("prompt_tokens").as_int64() == pf_stats.at("tokenUsage").at("prompt").as_int64());
  CHECK(stats.at("completion_tokens").as_int64() == pf_stats.at("tokenUsage").at("completion").as_int64());
  CHECK(stats.at("prompt_tokens").as_int64() == 114);
  CHECK(stats.at("runs_without_usage").as_int64() == 1); // the ERROR row
  const double pf_cost = number(pf.at("prompts").as_array()[0].at("metrics").at("cost"));
  CHECK(number(stats.at("cost_usd")) == doctest::Approx(pf_cost));
  CHECK(number(stats.at("cost_usd")) == doctest::Approx(0.000029));
  // Why Peru's first repeat failed, as promptfoo graded it.
  CHECK(tasks[1].at("runs").as_array()[0].at("checks").as_array()[0].at("detail").as_string() ==
        "the harness reported passed: false; assertions 0 of 1 passed; Expected output to contain \"Lima\"");
  CHECK(has(slurp(tmp.path() / "out" / "report.md"), "Cost (as the harness recorded it, measured runs): $"));
}

TEST_CASE("τ²-bench results: the agent's and the user simulator's recorded cost, apart") {
  TempDir tmp;
  Result r = run_gate({"analyze", fixture("tau2_airline_results.json").string(), "--suite-name", "airline",
                       "--suite-version", "1", "--out", "out"},
                      tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = read_json(tmp.path() / "out" / "report.json");
  const auto stats = report.at("stats").as_object();
  // The simulations' agent_cost and user_cost, summed over each task's
  // runs. Task 2's second trial records no agent cost (agent_cost null, its
  // messages without cost): that task's and the suite's cost are n/a, not
  // a sum that leaves a run out.
  const auto& tasks = report.at("tasks").as_array();
  CHECK(number(tasks[0].at("stats").at("cost_usd")) == doctest::Approx(0.005 + 0.005));
  CHECK(number(tasks[1].at("stats").at("cost_usd")) == doctest::Approx(0.005 + 0.006));
  CHECK(tasks[2].at("stats").at("cost_usd").is_null());
  CHECK(stats.at("cost_usd").is_null());
  double user = 0;
  const auto tau2 = read_json(fixture("tau2_airline_results.json"));
  for (const auto& s : tau2.at("simulations").as_array())
    user += number(s.at("user_cost"));
  CHECK(user == doctest::Approx(0.0011));
  CHECK(number(stats.at("user_cost_usd")) == doctest::Approx(user));
  const std::string md = slurp(tmp.path() / "out" / "report.md");
  CHECK(has(md,
            "Cost (as the harness recorded it, measured runs): n/a (a measured run has no recorded cost)."));
  CHECK(has(md, "Simulated user's cost (as the harness recorded it, not in the cost above): $"));
  compare_with_itself(tmp, "**Cost (not gated)**: paid n/a → n/a");
}

TEST_CASE("native formats: a format the file is not, and an Inspect .eval zip, exit 2 naming the file") {
  TempDir tmp;
  Result r = run_gate(
      {"analyze", "--format", "promptfoo", fixture("inspect_capitals.json").string(), "--out", "out"},
      tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "inspect_capitals.json: expected a promptfoo results file"));
  spit(tmp.path() / "run.eval", std::string("PK\x03\x04\x14\x00\x00\x00", 8) + "_journal/start.json");
  r = run_gate({"analyze", "run.eval", "--out", "out"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "run.eval: a zip archive (an Inspect AI .eval log?); expected JSON"));
  r = run_gate({"analyze", "--scorer", "", fixture("inspect_capitals.json").string(), "--out", "out"},
               tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "--scorer: expected a scorer's name"));
  CHECK_FALSE(fs::exists(tmp.path() / "out" / "report.json"));
}

TEST_CASE("τ²-bench's directory format reads as its monolithic file; a simulation missing is exit 2") {
  TempDir tmp;
  // Results.save(format="dir"): results.json (metadata and a
  // simulation_index) and simulations/<id>.json, the same six simulations
  // as tau2_airline_results.json. Given as the directory or its results.json.
  Result mono = run_gate({"analyze", fixture("tau2_airline_results.json").string(), "--suite-name", "airline",
                          "--suite-version", "1", "--out", "mono"},
                         tmp.path());
  REQUIRE(mono.exit_code == 0);
  const fs::path dir = fixture("tau2_airline_dir");
  for (const fs::path& arg : {dir, dir / "results.json"}) {
    Result r =
        run_gate({"analyze", arg.string(), "--suite-name", "airline", "--suite-version", "1", "--out", "out"},
                 tmp.path());
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(has(r.out, "3 tasks, 6 runs, success 50.0%"));
    const auto a = read_json(tmp.path() / "out" / "report.json"),
               b = read_json(tmp.path() / "mono" / "report.json");
    CHECK(a.at("config").at("formats").as_array()[0].as_string() == "tau2");
    CHECK(a.at("stats") == b.at("stats"));
    CHECK(a.at("tasks") == b.at("tasks"));
  }
  // A copy with one simulation file missing is not read as a smaller run.
  const fs::path copy = tmp.path() / "copy";
  fs::create_directories(copy / "simulations");
  fs::copy_file(dir / "results.json", copy / "results.json");
  for (const char* id : {"sim-0-0", "sim-0-1", "sim-1-0", "sim-1-1", "sim-2-0"})
    fs::copy_file(dir / "simulations" / (std::string(id) + ".json"),
                  copy / "simulations" / (std::string(id) + ".json"));
  Result r = run_gate({"analyze", "copy", "--out", "bad"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "copy/results.json: simulation_index names \"sim-2-1\", whose file is missing from "
                   "simulations/; expected every indexed simulation"));
  CHECK_FALSE(fs::exists(tmp.path() / "bad" / "report.json"));
}

TEST_CASE("τ-bench: the route from the name run.py gave the file") {
  TempDir tmp;
  const std::string name = "tool-calling-gpt-4o-0.0_range_0--1_user-gpt-4o-mini-llm_1120101530.json";
  fs::copy_file(fixture("tau_bench_retail.json"), tmp.path() / name);
  Result r = run_gate({"analyze", name, "--out", "out"}, tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = read_json(tmp.path() / "out" / "report.json");
  CHECK(report.at("route").at("model").as_string() == "gpt-4o");
  CHECK(report.at("route").at("temperature").as_string() == "0");
  CHECK(report.at("route").at("user_model").as_string() == "gpt-4o-mini");
  CHECK(report.at("stats").at("polluted_tasks").as_int64() == 0);
}

namespace {

struct Sim {
  std::string task;
  int trial;
  double reward;
};

// A τ²-bench results file: trial r runs with seed 1000 + 7r in every task,
// as τ²-bench's run.py draws one seed per trial for the whole run.
std::string tau2_results(const std::vector<Sim>& sims) {
  std::string out = R"({"timestamp": "2025-06-01T10:05:00", "info": {"num_trials": 4, "seed": 300,
    "agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1", "llm_args": {"temperature": 0.0}},
    "user_info": {"implementation": "user_simulator", "llm": "gpt-4.1-mini", "llm_args": {}}},
    "tasks": [], "simulations": [)";
  for (std::size_t i = 0; i < sims.size(); ++i) {
    const Sim& s = sims[i];
    out += std::string(i == 0 ? "" : ",") + "\n  {\"id\": \"s" + std::to_string(i) + "\", \"task_id\": \"" +
           s.task + "\", \"trial\": " + std::to_string(s.trial) +
           ", \"seed\": " + std::to_string(1000 + 7 * s.trial) +
           ", \"duration\": 1.0, \"termination_reason\": \"agent_stop\", \"reward_info\": {\"reward\": " +
           (s.reward == 1 ? "1.0" : "0.0") +
           "}, \"messages\": [{\"role\": \"assistant\", \"content\": \"Done\", \"usage\": "
           "{\"prompt_tokens\": 10, \"completion_tokens\": 2}}]}";
  }
  return out + "]}\n";
}

boost::json::object analyze_stats(const TempDir& tmp, const std::string& body, Result& r) {
  spit(tmp.path() / "results.json", body);
  r = run_gate({"analyze", (tmp.path() / "results.json").string(), "--out", "out"}, tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  return read_json(tmp.path() / "out" / "report.json").at("stats").as_object();
}

} // namespace

TEST_CASE(
    "τ²-bench: a one-task file's per-trial seed is the harness's design; its mixed runs are a 100pp gap") {
  TempDir tmp;
  Result r;
  const auto stats =
      analyze_stats(tmp, tau2_results({{"t1", 0, 1}, {"t1", 1, 0}, {"t1", 2, 1}, {"t1", 3, 0}}), r);
  CHECK(stats.at("polluted_tasks").as_int64() == 0);
  // One task, mixed: pass@4 = 1, pass^4 = 0.
  CHECK(number(stats.at("consistency_gap_pp")) == doctest::Approx(100.0));
  CHECK(has(r.out, "consistency gap 100.0pp, 0 route-polluted tasks"));
  CHECK(stats.at("route_by_run").at("seed").as_array().size() == 4);
}

TEST_CASE(
    "τ²-bench: a gap in trial numbers keeps each run at its trial, so the per-trial seed is no pollution") {
  TempDir tmp;
  Result r;
  // t1's trial 1 is missing (an interrupted run): its runs are trials 0 and
  // 2, which had seeds 1000 and 1014 like every other task's trials 0 and 2.
  const auto stats = analyze_stats(tmp,
                                   tau2_results({{"t1", 0, 1},
                                                 {"t1", 2, 0},
                                                 {"t2", 0, 1},
                                                 {"t2", 1, 1},
                                                 {"t2", 2, 1},
                                                 {"t3", 0, 0},
                                                 {"t3", 1, 1},
                                                 {"t3", 2, 0}}),
                                   r);
  CHECK(stats.at("polluted_tasks").as_int64() == 0);
  const auto report = read_json(tmp.path() / "out" / "report.json");
  const auto& t1_runs = report.at("tasks").as_array()[0].at("runs").as_array();
  REQUIRE(t1_runs.size() == 2);
  CHECK(t1_runs[1].at("index").as_int64() == 2);
  // k = 3, the runs most tasks have; t1's two are left out of pass^k and the
  // gap (METRICS.md, common k): t2 3 of 3 → 0, t3 1 of 3 → 1; (0 + 1) / 2.
  CHECK(stats.at("pass_k_left_out").as_int64() == 1);
  CHECK(number(stats.at("consistency_gap_pp")) == doctest::Approx(50.0));
}

TEST_CASE("a gap over no task that can have one is n/a, not 0.0pp") {
  TempDir tmp;
  Result r;
  // Every task route-polluted (the temperature changed between its runs):
  // no task is left to measure a gap on.
  spit(tmp.path() / "runs.jsonl",
       R"({"task_id": "a", "run_id": 0, "passed": true, "model": "m", "temperature": 0}
{"task_id": "a", "run_id": 1, "passed": false, "model": "m", "temperature": 1}
)");
  r = run_gate({"analyze", (tmp.path() / "runs.jsonl").string(), "--out", "out"}, tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto stats = read_json(tmp.path() / "out" / "report.json").at("stats").as_object();
  CHECK(stats.at("polluted_tasks").as_int64() == 1);
  CHECK(stats.at("consistency_gap_pp").is_null());
  CHECK(has(r.out, "consistency gap n/a"));
  CHECK(has(slurp(tmp.path() / "out" / "report.md"),
            "| Consistency gap | n/a (no task with 2 measured runs on one route) |"));
}

#include <doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <gate/metrics/summary.hpp>

using namespace gate::metrics;
using doctest::Approx;
using gate::results::Run;
using gate::results::Task;
using gate::results::ToolCall;

namespace {

Run run(int index, bool passed) {
  Run r;
  r.index = index;
  r.passed = passed;
  r.answer_sha256 = "answer";
  r.prompt_tokens = 100;
  r.completion_tokens = 20;
  r.latency_ms = 100;
  r.route = {{"model", "m1"}, {"temperature", "0"}};
  return r;
}

Run errored(int index, const std::string& bucket) {
  Run r = run(index, false);
  r.error = bucket;
  return r;
}

// One run per outcome, indices 0, 1, ...
Task task(const std::string& id, const std::vector<bool>& outcomes) {
  Task t;
  t.id = id;
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    t.runs.push_back(run(static_cast<int>(i), outcomes[i]));
  return t;
}

std::vector<ToolCall> calls(const std::vector<std::string>& names) {
  std::vector<ToolCall> out;
  for (const std::string& n : names)
    out.push_back({n, "h-" + n});
  return out;
}

struct Computed {
  std::vector<TaskStats> per_task;
  SuiteStats suite;
};

Computed compute(const std::vector<Task>& tasks, const Options& o = {}) {
  Computed c;
  for (const Task& t : tasks)
    c.per_task.push_back(task_stats(t, o));
  c.suite = suite_stats(tasks, c.per_task, o);
  return c;
}

} // namespace

TEST_CASE("errored runs are left out of success") {
  Task t = task("t", {true, false});
  t.runs.push_back(errored(2, "timeout"));
  TaskStats s = task_stats(t, {});
  CHECK(s.n == 2);
  CHECK(s.c == 1);
  CHECK(s.errored == 1);
  CHECK(s.rate == Approx(0.5)); // 1 of 2, not 1 of 3
  CHECK(s.mixed);
  CHECK_FALSE(s.outcome_consistent);
  REQUIRE(s.pass_at_k.size() == 2);
  // n=2, c=1: pass@2 = 1 − C(1,2)/C(2,2) = 1; pass^2 = C(1,2)/C(2,2) = 0.
  CHECK(s.pass_at_k[1] == 1.0);
  CHECK(s.pass_hat_k[1] == 0.0);
}

TEST_CASE("a task whose runs all errored") {
  Task dead;
  dead.id = "dead";
  dead.runs = {errored(0, "auth"), errored(1, "auth")};
  dead.runs[1].answer_sha256 = "other";
  Task alive = task("alive", {true, true});
  Computed c = compute({dead, alive});
  const TaskStats& s = c.per_task[0];
  CHECK(s.n == 0);
  CHECK(s.rate == 0.0);
  CHECK(s.pass_at_k.empty());
  CHECK(s.outcome_consistent);
  CHECK(s.answer_consistent);           // only non-errored answers are compared
  CHECK_FALSE(s.trajectory_similarity); // no tool calls: n/a
  // Success sees only the live task: 2 of 2.
  CHECK(c.suite.overall.tasks == 1);
  CHECK(c.suite.overall.runs == 2);
  CHECK(c.suite.overall.success_rate == 1.0);
  // Errors see all 4 runs: 2 errored → 0.5.
  CHECK(c.suite.total_runs == 4);
  CHECK(c.suite.errored_runs == 2);
  CHECK(c.suite.error_rate == Approx(0.5));
  CHECK(c.suite.errors_by_bucket.at("auth") == 2);
  // Tokens too: 4 runs × 120 over 2 tasks = 240 per task.
  CHECK(c.suite.tokens_per_task == Approx(240.0));
  CHECK(c.suite.answer_inconsistency_pp == 0.0);
}

TEST_CASE("all tasks errored: no success numbers, no division by zero") {
  Task dead;
  dead.runs = {errored(0, "connection")};
  Computed c = compute({dead});
  CHECK(c.suite.overall.tasks == 0);
  CHECK(c.suite.overall.success_rate == 0.0);
  CHECK(c.suite.overall.interval.low == 0.0);
  CHECK(c.suite.overall.interval.high == 1.0);
  CHECK(c.suite.pass_at_k.empty());
  CHECK(!c.suite.consistency_gap_pp); // no task to have a gap: n/a, not 0
  CHECK(!c.suite.mixed_share_pp);
  CHECK(!c.suite.trajectory_similarity); // no tool calls in the data: n/a, not 1.0
  CHECK(!c.suite.answer_inconsistency_pp);
  CHECK(c.suite.error_rate == 1.0);
  CHECK(c.suite.call_latency.count == 0);
}

TEST_CASE("empty suite") {
  Computed c = compute({});
  CHECK(c.suite.total_runs == 0);
  CHECK(c.suite.error_rate == 0.0);
  CHECK(c.suite.tokens_per_task == 0.0);
  CHECK_FALSE(c.suite.group_completion.has_value());
}

TEST_CASE("pass@k per task for every k") {
  TaskStats s = task_stats(task("t", {false, true, false}), {});
  REQUIRE(s.pass_at_k.size() == 3);
  // n=3, c=1: pass@1 = 1 − C(2,1)/C(3,1) = 1/3; pass@2 = 1 − C(2,2)/C(3,2) = 2/3;
  // pass@3 = 1 − C(2,3)/C(3,3) = 1.
  CHECK(s.pass_at_k[0] == Approx(1.0 / 3));
  CHECK(s.pass_at_k[1] == Approx(2.0 / 3));
  CHECK(s.pass_at_k[2] == 1.0);
  // pass^1 = 1/3, pass^2 = C(1,2)/C(3,2) = 0, pass^3 = 0.
  CHECK(s.pass_hat_k[0] == Approx(1.0 / 3));
  CHECK(s.pass_hat_k[1] == 0.0);
  CHECK(s.pass_hat_k[2] == 0.0);
}

TEST_CASE("suite pass@k and pass^k at the common k, over one set of tasks") {
  // Runs per task 3, 2, 1, 2: K = 2 (the most common), over a, b and d; c
  // has fewer and is left out of every k, not counted at k = 1 only.
  Computed c = compute({task("a", {false, true, false}), task("b", {true, true}), task("c", {false}),
                        task("d", {true, false})});
  REQUIRE(c.suite.pass_at_k.size() == 2);
  CHECK(c.suite.pass_k_tasks == 3);
  CHECK(c.suite.pass_k_left_out == 1);
  // pass@1 = (1/3 + 1 + 1/2)/3 = 11/18; pass@2 = (2/3 + 1 + 1)/3 = 8/9.
  CHECK(c.suite.pass_at_k[0] == Approx(11.0 / 18));
  CHECK(c.suite.pass_at_k[1] == Approx(8.0 / 9));
  // pass^1 = 11/18; pass^2 = (C(1,2)/C(3,2) = 0, 1, 0)/3 = 1/3: never above pass^1.
  CHECK(c.suite.pass_hat_k[0] == Approx(11.0 / 18));
  CHECK(c.suite.pass_hat_k[1] == Approx(1.0 / 3));
  // Gap at k = 2: a 2/3, b 0, d 1 → 5/9.
  CHECK(c.suite.consistency_gap_pp == Approx(500.0 / 9));
  // Σc/Σn = (1 + 2 + 0 + 1)/(3 + 2 + 1 + 2) = 0.5.
  CHECK(c.suite.overall.success_rate == Approx(0.5));
  CHECK(c.suite.overall.interval_method == "t over tasks");
}

TEST_CASE("success interval with one run per task is Wilson on the tasks") {
  std::vector<Task> tasks;
  for (int i = 0; i < 10; ++i)
    tasks.push_back(task("t" + std::to_string(i), {i < 7}));
  Task dead;
  dead.runs = {errored(0, "timeout")}; // n = 0: does not turn the suite into k > 1
  tasks.push_back(dead);
  Computed c = compute(tasks);
  CHECK(c.suite.overall.interval_method == "wilson");
  CHECK(c.suite.overall.tasks == 10);
  CHECK(c.suite.overall.success_rate == Approx(0.7));
  // Wilson 7/10 (test_metrics_stats): [0.396778, 0.892209].
  CHECK(c.suite.overall.interval.low == Approx(0.396778).epsilon(1e-5));
  CHECK(c.suite.overall.interval.high == Approx(0.892209).epsilon(1e-5));
}

TEST_CASE("success interval with several runs is the t interval over task rates") {
  // Rates {1, 0.5, 0.5, 0, 0.5}: mean 0.5, squares 0.25 + 0 + 0 + 0.25 + 0 = 0.5,
  // sd = √(0.5/4) = 0.353553, se = 0.353553/√5 = 0.158114,
  // half = t(0.975, 4)·se = 2.776445·0.158114 = 0.438995.
  Computed c = compute({task("a", {true, true}), task("b", {true, false}), task("c", {false, true}),
                        task("d", {false, false}), task("e", {true, false})});
  CHECK(c.suite.overall.interval_method == "t over tasks");
  CHECK(c.suite.overall.success_rate == Approx(0.5)); // 5 of 10
  CHECK(c.suite.overall.interval.low == Approx(0.061005).epsilon(1e-5));
  CHECK(c.suite.overall.interval.high == Approx(0.938995).epsilon(1e-5));
}

TEST_CASE("success interval for rates {1, 2/3, 0, 1/3} is clipped") {
  // mean 0.5 ± 3.182446·0.215166 = 0.5 ± 0.684752 → [0, 1] (test_metrics_stats).
  Computed c = compute({task("a", {true, true, true}), task("b", {true, true, false}),
                        task("c", {false, false, false}), task("d", {false, false, true})});
  CHECK(c.suite.overall.success_rate == Approx(0.5)); // 6 of 12
  CHECK(c.suite.overall.interval.low == 0.0);
  CHECK(c.suite.overall.interval.high == 1.0);
}

TEST_CASE("per scenario and per difficulty") {
  Task a = task("a", {true});
  a.scenario = "billing";
  a.difficulty = "hard";
  Task b = task("b", {false});
  b.scenario = "billing";
  Task c = task("c", {true});
  c.difficulty = "hard";
  Computed r = compute({a, b, c});
  REQUIRE(r.suite.by_scenario.size() == 2);
  CHECK(r.suite.by_scenario.at("billing").tasks == 2);
  CHECK(r.suite.by_scenario.at("billing").success_rate == Approx(0.5)); // a passed, b failed
  CHECK(r.suite.by_scenario.at("").success_rate == 1.0);                // c
  CHECK(r.suite.by_scenario.at("billing").interval_method == "wilson");
  REQUIRE(r.suite.by_difficulty.size() == 2);
  CHECK(r.suite.by_difficulty.at("hard").tasks == 2);
  CHECK(r.suite.by_difficulty.at("hard").success_rate == 1.0); // a, c
  CHECK(r.suite.by_difficulty.at("").success_rate == 0.0);     // b
}

TEST_CASE("consistency gap equals the mixed share and skips polluted tasks") {
  Task mixed = task("mixed", {true, false, false});
  Task pass = task("pass", {true, true, true});
  Task fail = task("fail", {false, false, false});
  Task polluted = task("polluted", {true, false, true});
  polluted.runs[2].route["temperature"] = "0.7";
  Computed c = compute({mixed, pass, fail, polluted});
  CHECK(c.per_task[3].route_polluted);
  CHECK(c.suite.polluted_tasks == 1);
  // Unpolluted: mixed, pass, fail → 1 mixed of 3 = 33.333pp.
  CHECK(c.suite.consistency_gap_pp == Approx(100.0 / 3));
  CHECK(c.suite.mixed_share_pp == Approx(100.0 / 3));
  Options with;
  with.include_polluted = true;
  Computed all = compute({mixed, pass, fail, polluted}, with);
  // All four: 2 mixed of 4 = 50pp.
  CHECK(all.suite.consistency_gap_pp == Approx(50.0));
  CHECK(all.suite.mixed_share_pp == Approx(50.0));
}

TEST_CASE("answer consistency ignores errored runs") {
  Task same = task("same", {true, true});
  same.runs.push_back(errored(2, "timeout"));
  same.runs[2].answer_sha256 = "different";
  Task differs = task("differs", {true, true, true});
  differs.runs[1].answer_sha256 = "other";
  Task single = task("single", {true});
  Computed c = compute({same, differs, single});
  CHECK(c.per_task[0].answer_consistent);
  CHECK_FALSE(c.per_task[1].answer_consistent);
  CHECK(c.per_task[1].outcome_consistent); // all passed, yet answers differ
  CHECK(c.per_task[2].answer_consistent);
  // 1 of 3 tasks → 33.333pp.
  CHECK(c.suite.answer_inconsistency_pp == Approx(100.0 / 3));
}

TEST_CASE("trajectory similarity is the mean pairwise Jaccard of call sets") {
  Task t = task("t", {true, true, true});
  t.runs[0].tool_calls = calls({"search", "read"});
  t.runs[1].tool_calls = calls({"read", "search"});
  t.runs[2].tool_calls = calls({"search", "write"});
  TaskStats s = task_stats(t, {});
  // J(0,1) = 1 (same set), J(0,2) = J(1,2) = |{search}|/|{search,read,write}| = 1/3;
  // mean = (1 + 1/3 + 1/3)/3 = 5/9.
  CHECK(s.trajectory_similarity == Approx(5.0 / 9));
  CHECK_FALSE(s.trajectory_consistent);
}

TEST_CASE("calls differ by argument hash, not only by name") {
  Task t = task("t", {true, true});
  t.runs[0].tool_calls = {{"search", "h1"}};
  t.runs[1].tool_calls = {{"search", "h2"}};
  TaskStats s = task_stats(t, {});
  CHECK_FALSE(s.trajectory_consistent);
  CHECK(s.trajectory_similarity == 0.0); // {search:h1} vs {search:h2}: 0 of 2
  REQUIRE(s.first_divergence.has_value());
  CHECK(*s.first_divergence == 0);
}

TEST_CASE("plain tasks without tool calls are trajectory-consistent") {
  TaskStats s = task_stats(task("t", {true, false, true}), {});
  CHECK(s.trajectory_consistent);
  // No run made a tool call: nothing to compare, so n/a (null), not 1.0.
  CHECK_FALSE(s.trajectory_similarity.has_value());
  CHECK_FALSE(s.first_divergence.has_value());
}

TEST_CASE("first divergence against the modal sequence") {
  Task t = task("t", {true, true, true});
  t.runs[0].tool_calls = calls({"search", "read", "write"});
  t.runs[1].tool_calls = calls({"search", "read", "write"});
  t.runs[2].tool_calls = calls({"search", "read", "delete"});
  TaskStats s = task_stats(t, {});
  // Modal = run 0's (2 of 3); run 2 leaves it at step 2.
  REQUIRE(s.first_divergence.has_value());
  CHECK(*s.first_divergence == 2);
}

TEST_CASE("first divergence: a shorter run diverges at its length") {
  Task t = task("t", {true, true, true});
  t.runs[0].tool_calls = calls({"search", "read", "write"});
  t.runs[1].tool_calls = calls({"search"});
  t.runs[2].tool_calls = calls({"search", "read", "write"});
  TaskStats s = task_stats(t, {});
  REQUIRE(s.first_divergence.has_value());
  CHECK(*s.first_divergence == 1);
}

TEST_CASE("first divergence with a tie and with a late majority") {
  // The common prefix length is an ultrametric, so the minimum over runs is
  // the same whichever sequence is modal; the tie rule (first seen) fixes the
  // definition, not the number. X = [a], Y = [b, c], two runs each → 0.
  Task t = task("t", {true, true, true, true});
  t.runs[0].tool_calls = calls({"a"});
  t.runs[1].tool_calls = calls({"b", "c"});
  t.runs[2].tool_calls = calls({"b", "c"});
  t.runs[3].tool_calls = calls({"a"});
  CHECK(task_stats(t, {}).first_divergence == 0);
  // The majority [s, r] appears second; [s, r, w] extends it and so leaves it
  // at step 2, its length.
  Task m = task("m", {true, true, true});
  m.runs[0].tool_calls = calls({"s", "r", "w"});
  m.runs[1].tool_calls = calls({"s", "r"});
  m.runs[2].tool_calls = calls({"s", "r"});
  CHECK(task_stats(m, {}).first_divergence == 2);
}

TEST_CASE("first divergence histogram over tasks") {
  Task a = task("a", {true, true});
  a.runs[0].tool_calls = calls({"s", "r"});
  a.runs[1].tool_calls = calls({"s", "w"});
  Task b = task("b", {true, true});
  b.runs[0].tool_calls = calls({"s", "r"});
  b.runs[1].tool_calls = calls({"s", "x"});
  Task c = task("c", {true, true});
  c.runs[0].tool_calls = calls({"s"});
  c.runs[1].tool_calls = calls({"q"});
  Task d = task("d", {true, true});
  d.runs[0].tool_calls = calls({"s"});
  d.runs[1].tool_calls = calls({"s"});
  Computed r = compute({a, b, c, d});
  // a, b diverge at 1; c at 0; d is consistent.
  CHECK(r.suite.first_divergence_histogram == std::map<int, std::int64_t>{{0, 1}, {1, 2}});
  // 3 of 4 tasks inconsistent → 75pp.
  CHECK(r.suite.trajectory_inconsistency_pp == Approx(75.0));
  // Similarity: a: {s, r} vs {s, w} = 1/3; b = 1/3; c = 0; d = 1 → (2/3 + 1)/4 = 5/12.
  CHECK(r.suite.trajectory_similarity == Approx(5.0 / 12));
}

TEST_CASE("group completion") {
  // g1 = {A, B}, g2 = {C}; D has no group and does not count.
  Task a = task("A", {true, true, false});
  a.group = "g1";
  Task b = task("B", {true, false, true});
  b.group = "g1";
  Task c = task("C", {true, true, true});
  c.group = "g2";
  Task d = task("D", {false, false, false});
  Computed r = compute({a, b, c, d});
  // r0: g1 complete, g2 complete → 2/2; r1: B failed → 1/2; r2: A failed → 1/2.
  // mean = (1 + 0.5 + 0.5)/3 = 2/3.
  REQUIRE(r.suite.group_completion.has_value());
  CHECK(*r.suite.group_completion == Approx(2.0 / 3));
}

TEST_CASE("group completion: errored and missing runs are not complete") {
  Task a = task("A", {true, true});
  a.group = "g";
  Task b = task("B", {true});
  b.runs.push_back(errored(1, "timeout"));
  b.runs.back().passed = true; // an errored run never counts, whatever the flag says
  b.group = "g";
  Task c = task("C", {true, true, true});
  c.group = "h";
  Computed r = compute({a, b, c});
  // Run indices 0..2. g: r0 complete; r1 B errored; r2 A and B have no run.
  // h: complete in r0, r1, r2. (2/2 + 1/2 + 1/2)/3 = 2/3.
  REQUIRE(r.suite.group_completion.has_value());
  CHECK(*r.suite.group_completion == Approx(2.0 / 3));
}

TEST_CASE("group completion ignores run indices out of range") {
  Task a = task("A", {true, true});
  a.runs[1].index = 2147483647; // malformed: only 2 runs, so indices 0 and 1
  a.group = "g";
  Computed r = compute({a});
  // R = 2: r0 complete, r1 has no run with index 1 → (1 + 0)/2.
  REQUIRE(r.suite.group_completion.has_value());
  CHECK(*r.suite.group_completion == Approx(0.5));
}

TEST_CASE("group completion counts a task once per run index") {
  Task a = task("A", {true, true});
  a.runs[1].index = 0; // a malformed task listing index 0 twice
  a.group = "g";
  Task b = task("B", {false, false});
  b.group = "g";
  Computed r = compute({a, b});
  // B never passed: no run completes g, whatever A's duplicates do.
  REQUIRE(r.suite.group_completion.has_value());
  CHECK(*r.suite.group_completion == 0.0);
}

TEST_CASE("token band flags runs far from the task median") {
  Task t = task("t", {true, true, true, true, true});
  std::vector<std::int64_t> totals = {100, 110, 90, 200, 5};
  for (std::size_t i = 0; i < totals.size(); ++i) {
    t.runs[i].prompt_tokens = totals[i];
    t.runs[i].completion_tokens = 0;
  }
  t.runs[4].usage_known = false; // not counted, not flagged
  TaskStats s = task_stats(t, {});
  // Median of {90, 100, 110, 200} = 105; band 25% = 26.25; |200 − 105| = 95 > 26.25,
  // |90 − 105| = 15 and |110 − 105| = 5 are inside.
  CHECK(s.token_band_outliers == std::vector<int>{3});
  CHECK(s.usage_missing);
  Options narrow;
  narrow.token_band_pct = 10; // band 10.5: 90 (15 away) is now out too
  CHECK(task_stats(t, narrow).token_band_outliers == std::vector<int>{2, 3});
}

TEST_CASE("token band edge is inside") {
  Task t = task("t", {true, true, true});
  std::vector<std::int64_t> totals = {100, 125, 75};
  for (std::size_t i = 0; i < totals.size(); ++i) {
    t.runs[i].prompt_tokens = totals[i];
    t.runs[i].completion_tokens = 0;
  }
  // Median 100, band 25: 125 and 75 are exactly 25 away, not more.
  CHECK(task_stats(t, {}).token_band_outliers.empty());
  t.runs[1].prompt_tokens = 126;
  Computed c = compute({t});
  CHECK(c.per_task[0].token_band_outliers == std::vector<int>{1});
  CHECK(c.suite.token_band_outliers == 1);
}

TEST_CASE("route pollution names the fields that differ") {
  Task t = task("t", {true, true, true});
  t.runs[0].route = {{"model", "m1"}, {"seed", "1"}};
  t.runs[1].route = {{"model", "m1"}, {"seed", "2"}};
  t.runs[2].route = {{"model", "m1"}, {"seed", "1"}, {"top_p", "0.9"}};
  TaskStats s = task_stats(t, {});
  CHECK(s.route_polluted);
  CHECK(s.route_diff == std::vector<std::string>{"seed", "top_p"});
}

TEST_CASE("route pollution looks at errored runs too") {
  Task t = task("t", {true});
  t.runs.push_back(errored(1, "rate_limit"));
  t.runs[1].route["model"] = "m2";
  TaskStats s = task_stats(t, {});
  CHECK(s.route_polluted);
  CHECK(s.route_diff == std::vector<std::string>{"model"});
  TaskStats clean = task_stats(task("u", {true, false}), {});
  CHECK_FALSE(clean.route_polluted);
  CHECK(clean.route_diff.empty());
}

TEST_CASE("errors and tokens over the whole chain") {
  Task a = task("a", {true, false});
  a.runs[1].cache_hit = true; // 120 cached tokens
  a.runs.push_back(errored(2, "timeout"));
  a.runs.push_back(errored(3, "rate_limit"));
  Task b = task("b", {true});
  b.runs[0].usage_known = false;
  b.runs[0].prompt_tokens = 0;
  b.runs[0].completion_tokens = 0;
  b.runs.push_back(errored(1, "timeout"));
  Computed c = compute({a, b});
  CHECK(c.suite.total_runs == 6);
  CHECK(c.suite.errored_runs == 3);
  CHECK(c.suite.error_rate == Approx(0.5)); // 3 of 6
  CHECK(c.suite.errors_by_bucket == std::map<std::string, std::int64_t>{{"rate_limit", 1}, {"timeout", 2}});
  // Prompt: 5 runs × 100 (b's unknown run counts 0) = 500; completion 5 × 20 = 100.
  CHECK(c.suite.prompt_tokens == 500);
  CHECK(c.suite.completion_tokens == 100);
  CHECK(c.suite.cached_tokens == 120);
  CHECK(c.suite.paid_tokens == 480);
  CHECK(c.suite.tokens_per_task == Approx(300.0)); // 600 / 2
  CHECK(c.suite.runs_without_usage == 1);
  CHECK(c.suite.cache_hits == 1);
  CHECK(c.per_task[0].prompt_tokens == 400);
  CHECK(c.per_task[0].cached_tokens == 120);
  CHECK_FALSE(c.per_task[0].usage_missing);
  CHECK(c.per_task[1].usage_missing);
}

TEST_CASE("latency over fresh, non-errored runs") {
  Task t = task("t", {true, true, true, true, true, true});
  std::vector<double> ms = {400, 100, 300, 200, 0, 5000};
  for (std::size_t i = 0; i < ms.size(); ++i)
    t.runs[i].latency_ms = ms[i];
  t.runs[4].cache_hit = true;
  t.runs[5].error = "timeout";
  Computed c = compute({t});
  // {100, 200, 300, 400}: p50 rank 1.5 → 250; p95 rank 2.85 → 300 + 0.85·100 = 385.
  CHECK(c.suite.call_latency.count == 4);
  CHECK(c.suite.call_latency.p50 == Approx(250.0));
  CHECK(c.suite.call_latency.p95 == Approx(385.0));
  CHECK(c.suite.call_latency.max == 400.0);
  CHECK(c.suite.run_latency.p95 == Approx(385.0));
}

TEST_CASE("suite_stats needs stats parallel to the tasks") {
  std::vector<Task> tasks = {task("a", {true})};
  CHECK_THROWS_AS(suite_stats(tasks, {}, {}), std::invalid_argument);
  std::vector<TaskStats> wrong = {task_stats(tasks[0], {})};
  wrong[0].pass_at_k.clear();
  CHECK_THROWS_AS(suite_stats(tasks, wrong, {}), std::invalid_argument);
}

TEST_CASE("suite_stats over 20,000 tasks x 5 runs counts every run once") {
  std::vector<Task> tasks;
  tasks.reserve(20000);
  for (int i = 0; i < 20000; ++i) {
    Task t = task("task-" + std::to_string(i), {i % 2 == 0, true, i % 3 == 0, true, i % 5 == 0});
    t.scenario = "s" + std::to_string(i % 17);
    t.difficulty = i % 2 ? "easy" : "hard";
    t.group = "g" + std::to_string(i / 4);
    for (Run& r : t.runs) {
      r.tool_calls = calls({"search", "read", i % 7 == r.index ? "write" : "read"});
      r.latency_ms = 50 + (i * 7 + r.index * 13) % 400;
    }
    tasks.push_back(std::move(t));
  }
  Options o;
  std::vector<TaskStats> per_task;
  per_task.reserve(tasks.size());
  for (const Task& t : tasks)
    per_task.push_back(task_stats(t, o));
  // Its speed is measured in bench/ (stages), never here.
  SuiteStats s = suite_stats(tasks, per_task, o);
  CHECK(s.total_runs == 100000);
  CHECK(s.overall.tasks == 20000);
  REQUIRE(s.group_completion.has_value());
}

#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gate/config/config.hpp>
#include <gate/metrics/stats.hpp>
#include <gate/report/report.hpp>
#include <gate/util/error.hpp>

// Comparing a current report with a baseline (METRICS.md "Comparing with a
// baseline"). Pure: reports in, a Verdict out. Rendering (Markdown, JSON,
// JUnit, HTML, annotations) only formats a Verdict.
namespace gate::compare {

struct Options {
  config::Thresholds thresholds;
  bool allow_suite_change = false; // else a different suite name/version/sha256 is Error(bad_input)
  bool allow_partial = false;      // else an interrupted, sharded or partly merged report is Error(bad_input)
  bool include_polluted = false;
};

// What the comparison concluded (METRICS.md "Comparing with a baseline").
enum class Status {
  passed,       // measured, and no gated change beyond the noise
  failed,       // a rule failed: exit 1
  inconclusive, // a worsening no test could call significant on this data: thresholds.on_inconclusive
  unmeasured,   // too many runs errored on a side (METRICS.md "Measured runs"): exit 3
};
// "passed", "failed", "inconclusive", "could not measure".
const char* to_string(Status s);

// One gated (or informational) suite metric.
struct MetricRow {
  std::string key;  // success_rate, consistency_gap, pass_hat_k, tokens_per_task, p95_latency, error_rate
  std::string name; // for people: "success rate", "consistency gap", "pass^3", ...
  std::string unit; // "pp" or "%"
  std::string value_unit; // unit of baseline and current: "%" (rates), "tokens", "ms"
  // False when the data holds none of the row's inputs (no tokens, no fresh
  // latency, ...): every number below is then meaningless, shown as n/a
  // with `unavailable` as the reason, and never gated.
  bool available = true;
  std::string unavailable = {};
  // Both sides over the same `tasks` paired, measured tasks (the mean of
  // the per-task values for pp metrics, the mean per-task total for tokens;
  // p95 latency alone is each report's own p95), so suite_delta = current −
  // baseline.
  double baseline = 0, current = 0;
  std::int64_t tasks = 0;
  double suite_delta = 0;
  // The change the threshold, the test, the interval and the noise floor are
  // about (METRICS.md "Scope"): over the `scope_tasks` affected tasks, since
  // a task whose inputs are unchanged cannot move by chance. Equal to
  // suite_delta when every task is affected. For % metrics a relative change
  // in percent.
  double delta = 0;
  std::int64_t scope_tasks = 0;
  std::optional<std::int64_t> k; // the common run count a k-dependent row is compared at
  bool higher_is_better = true;
  std::optional<double> threshold;  // the allowed worsening; absent = not gated (shown, not checked)
  metrics::Interval delta_interval; // 95% interval of delta, in `unit`
  std::optional<double> p_value;    // one-sided, "worse"; absent when no test fits
  std::optional<double> p_adjusted; // Holm over the gated metrics
  // The smallest true worsening that the test, at its Holm-adjusted level,
  // over the scope, detects with 80% power (METRICS.md "Noise floor").
  std::optional<double> noise_floor;
  std::optional<double> min_p; // the smallest one-sided p the test could reach on these data
  std::string test;     // "sign-flip exact", "sign-flip Monte Carlo (20000, seeded)", "McNemar exact", ...
  bool gated = false;   // threshold set and a p-value exists: part of the Holm family
  bool crossed = false; // worsening >= threshold
  bool significant = false; // p_adjusted < alpha
  bool failed = false;      // crossed && significant
  // Crossed, yet even the most extreme data of this size could not be
  // significant after Holm: the comparison cannot decide this row.
  bool inconclusive = false;
};

struct TaskDiff {
  std::string id, scenario;
  std::int64_t c_b = 0, n_b = 0, c_a = 0, n_a = 0;
  bool flipped = false;   // baseline all-pass, current not
  bool regressed = false; // Fisher + BH, or an outcome change on unchanged inputs
  bool fixed = false;
  bool became_flaky = false;  // outcome-consistent → mixed
  bool became_stable = false; // mixed → outcome-consistent (stable_failing: every run now fails)
  bool stable_failing = false;
  // Every run's request fingerprint and answer equal the baseline's run of
  // the same replica: nothing that could vary did.
  bool inputs_unchanged = false;
  bool rerecorded = false;    // same requests, replayed, other answers: the cache was re-recorded
  bool grader_change = false; // outcome changed although the inputs were unchanged: a check or grader change
  double p_value = 1, q_value = 1; // Fisher one-sided (worse for regressed, better for fixed) and its BH q
  std::vector<std::string> failing_checks; // labels (with detail) failing in current runs, deduplicated
  std::string answer_excerpt;              // a current failing run's answer, ≤ 200 bytes, UTF-8 safe
  // The current side's rendered input (the report's task "input", at most
  // results::k_input_limit bytes); "" = unknown.
  std::string input;
  std::optional<int> first_divergence;
};

struct ScenarioRow {
  std::string scenario;
  double baseline = 0, current = 0; // success rates in [0,1]
  std::int64_t tasks = 0;
};

// A task's fresh runs in a confirmation (METRICS.md "Confirmation").
struct ConfirmedTask {
  std::string id;
  std::int64_t baseline_passed = 0, baseline_runs = 0, current_passed = 0, current_runs = 0;
  bool worse = false; // the baseline side passed more often in the fresh runs
};

// What the confirmation runs did to the verdict; absent when none ran.
struct Confirmation {
  enum class State {
    confirmed,   // the fresh runs show the selected tasks worse: the verdict failed
    dismissed,   // they do not: the doubt was noise
    needs_calls, // replay-only and not recorded: `missing` lists the runs, `command` records them
    incomplete,  // some fresh runs errored and the rest showed no regression: the doubt stands
    unmeasured,  // more fresh runs errored than thresholds.max_errored_runs_pct: could not measure
  };
  State state = State::dismissed;
  int runs = 0;                   // fresh runs per side per task
  std::int64_t max_calls = 0;     // the budget
  std::int64_t planned_calls = 0; // what the picked tasks may use, at most max_calls
  std::int64_t calls = 0;         // fresh calls made (replayed ones are free)
  std::int64_t errored = 0;       // fresh runs that errored: neither a pass nor a fail
  std::string error;              // the first of their errors
  // Their tokens; absent when a fresh call's provider reported no usage
  // (never a 0 for "unknown").
  std::optional<std::int64_t> tokens;
  double p_value = 1;                // stratified exact, one-sided
  double level = 0.05;               // alpha / (gated rows + 1)
  std::vector<ConfirmedTask> tasks;  // the picked tasks, in pick order
  std::vector<std::string> left_out; // candidates the budget left out
  std::vector<std::string> missing;  // needs_calls only: "task "a" baseline runs 3-5"
  std::string command;               // needs_calls only
};
const char* to_string(Confirmation::State s);

// One report's cost (METRICS.md "Cost"): its suite stats' cost fields.
struct CostSide {
  bool priced = false;                // the report's config has a pricing table
  std::optional<double> paid, cached; // cost_usd, cached_cost_usd; absent = n/a
};

// The suites' cost, baseline → current: shown, never gated.
struct Cost {
  CostSide baseline, current;
};

struct Verdict {
  Status status = Status::passed;
  bool passed() const { return status == Status::passed; }
  Exit exit =
      Exit::pass; // pass, threshold (failed, or inconclusive with on_inconclusive: fail) or cannot_run
  // The first line: "✅ gate passed: …" / "❌ gate failed: …" / "⚠ gate
  // inconclusive: …" / "⛔ gate could not measure: …", route warning first.
  std::string headline;
  std::vector<std::string> reasons;      // why it failed (or could not measure), one per rule
  std::vector<std::string> inconclusive; // why a row cannot be decided, and what would decide it
  std::vector<std::string> warnings;     // route differs, suite change allowed, partial report, …
  report::SuiteInfo baseline_suite, current_suite;
  std::vector<MetricRow> metrics;
  std::vector<TaskDiff> tasks; // paired tasks with any change (flipped, regressed, fixed, flaky, stable)
  std::vector<std::string> added, removed;
  // Per added task (parallel to `added`): its passed and measured runs in
  // the current report, so that a new task shows how it does.
  struct AddedRuns {
    std::int64_t passed = 0, runs = 0;
  };
  std::vector<AddedRuns> added_runs;
  std::vector<std::string> unmeasured; // paired tasks without a measured run on a side (left out)
  // paired counts the measured pairs; affected = paired − unchanged_inputs.
  std::int64_t paired = 0, unchanged_inputs = 0, affected = 0, rerecorded = 0;
  bool fingerprints_known = true; // false: runs without request fingerprints (imported logs)
  std::string coverage; // "" = both reports hold the whole suite; else which part the verdict covers
  std::int64_t flips = 0, regressed = 0, fixed = 0, became_flaky = 0, became_stable = 0;
  std::vector<std::string> route_diff; // "model: a → b"
  std::vector<ScenarioRow> scenarios;
  double alpha = 0.05;
  std::optional<std::int64_t> max_new_failures;
  std::string on_inconclusive = "warn";  // thresholds.on_inconclusive: pass | warn | fail
  double max_errored_runs_pct = 5;       // thresholds.max_errored_runs_pct
  std::vector<std::string> route_fields; // route fields whose modal values differ, for the headline
  std::optional<Confirmation> confirmation;
  std::optional<Cost> cost; // absent when neither report has a pricing table
};

// Status, exit code and headline from the reasons and inconclusive rows:
// failed when any reason, else inconclusive when any row cannot be decided
// (exit per on_inconclusive), else passed.
void decide(Verdict& v);

// The gate fails (exit threshold) when a metric failed, a task regressed, or
// flips exceed max_new_failures; it could not measure (exit cannot_run)
// when a side's errored runs exceed thresholds.max_errored_runs_pct. Throws
// Error(bad_input) for a suite mismatch without allow_suite_change, a
// partial report without allow_partial, or a task id listed twice.
Verdict compare(const report::Report& baseline, const report::Report& current, const Options& o);

} // namespace gate::compare

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
  bool include_polluted = false;
};

// One gated (or informational) suite metric.
struct MetricRow {
  std::string key;  // success_rate, consistency_gap, pass_hat_k, tokens_per_task, p95_latency, error_rate
  std::string name; // for people: "success rate", "consistency gap", "pass^3", ...
  std::string unit; // "pp" or "%"
  std::string value_unit; // unit of baseline and current: "%" (rates), "tokens", "ms"
  // Each report's own suite value. delta is measured over the paired tasks
  // (the mean per-task difference for pp metrics, the relative change of the
  // paired totals for tokens; p95 latency alone compares the two reports'
  // p95), so with added/removed tasks or different run counts it may differ
  // from current − baseline.
  double baseline = 0, current = 0;
  double delta = 0; // current − baseline, in `unit` (for % metrics: relative change in percent)
  bool higher_is_better = true;
  std::optional<double> threshold;   // the allowed worsening; absent = not gated (shown, not checked)
  metrics::Interval delta_interval;  // 95% interval of delta, in `unit`
  std::optional<double> p_value;     // one-sided, "worse"; absent when no test fits
  std::optional<double> p_adjusted;  // Holm over the gated metrics
  std::optional<double> noise_floor; // smallest worsening this suite size and k would detect, in `unit`
  std::string test;     // "sign-flip exact", "sign-flip Monte Carlo (20000, seeded)", "McNemar exact", ...
  bool gated = false;   // threshold set and a p-value exists: part of the Holm family
  bool crossed = false; // worsening >= threshold
  bool significant = false; // p_adjusted < alpha
  bool failed = false;      // crossed && significant
};

struct TaskDiff {
  std::string id, scenario;
  std::int64_t c_b = 0, n_b = 0, c_a = 0, n_a = 0;
  bool flipped = false;   // baseline all-pass, current not
  bool regressed = false; // Fisher + BH, or an outcome change on unchanged inputs
  bool fixed = false;
  bool became_flaky = false;     // outcome-consistent → mixed
  bool became_stable = false;    // mixed → outcome-consistent
  bool inputs_unchanged = false; // every request fingerprint equals the baseline's and all runs replayed
  bool grader_change = false; // outcome changed although the inputs were unchanged: a check or grader change
  double p_value = 1, q_value = 1; // Fisher one-sided (worse for regressed, better for fixed) and its BH q
  std::vector<std::string> failing_checks; // labels (with detail) failing in current runs, deduplicated
  std::string answer_excerpt;              // a current failing run's answer, ≤ 200 bytes, UTF-8 safe
  std::optional<int> first_divergence;
};

struct ScenarioRow {
  std::string scenario;
  double baseline = 0, current = 0; // success rates in [0,1]
  std::int64_t tasks = 0;
};

struct Verdict {
  bool passed = true;
  Exit exit = Exit::pass; // pass or threshold
  std::string headline; // the first line: "✅ gate passed: …" / "❌ gate failed: …", route warning first
  std::vector<std::string> reasons;  // why it failed, one per failed rule
  std::vector<std::string> warnings; // route differs, suite change allowed, incomplete report, …
  report::SuiteInfo baseline_suite, current_suite;
  std::vector<MetricRow> metrics;
  std::vector<TaskDiff> tasks; // paired tasks with any change (flipped, regressed, fixed, flaky, stable)
  std::vector<std::string> added, removed;
  std::int64_t paired = 0, unchanged_inputs = 0, affected = 0;
  std::int64_t flips = 0, regressed = 0, fixed = 0, became_flaky = 0, became_stable = 0;
  std::vector<std::string> route_diff; // "model: a → b"
  std::vector<ScenarioRow> scenarios;
  double alpha = 0.05;
  std::optional<std::int64_t> max_new_failures;
};

// The gate fails (exit threshold) when a metric failed, a task regressed, or
// flips exceed max_new_failures. Throws Error(bad_input) for a suite mismatch
// without allow_suite_change, or a task id listed twice in one report.
Verdict compare(const report::Report& baseline, const report::Report& current, const Options& o);

} // namespace gate::compare

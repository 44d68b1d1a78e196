#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gate/metrics/stats.hpp>
#include <gate/results/results.hpp>

namespace gate::metrics {

// Per task, from its runs (METRICS.md "Success" and "Consistency").
struct TaskStats {
  std::int64_t n = 0;             // runs that did not error
  std::int64_t c = 0;             // of those, passed
  std::int64_t errored = 0;
  double rate = 0;                // c / n (0 when n == 0)
  std::vector<double> pass_at_k;  // index k-1, k = 1..n
  std::vector<double> pass_hat_k; // index k-1, k = 1..n
  bool mixed = false;             // some runs passed, some failed
  bool outcome_consistent = true;
  bool answer_consistent = true;
  bool trajectory_consistent = true;
  double trajectory_similarity = 1.0;
  std::optional<int> first_divergence; // step index, when not trajectory-consistent
  bool route_polluted = false;
  std::vector<std::string> route_diff;  // names of route fields that differ between runs
  std::vector<int> token_band_outliers; // run indices outside ±band of the task median
  std::int64_t prompt_tokens = 0, completion_tokens = 0; // whole chain, all runs
  std::int64_t cached_tokens = 0, paid_tokens = 0;
  bool usage_missing = false;     // some run had no usage reported
};

struct RateSummary {
  std::int64_t tasks = 0;
  std::int64_t runs = 0;          // non-errored runs
  std::int64_t passed = 0;
  double success_rate = 0;
  Interval interval;              // 95%
  std::string interval_method;    // "wilson" (k = 1) or "t over tasks" (k > 1)
};

struct Latency {
  std::int64_t count = 0;
  double p50 = 0, p95 = 0, max = 0;
};

struct SuiteStats {
  RateSummary overall;
  std::map<std::string, RateSummary> by_scenario;
  std::map<std::string, RateSummary> by_difficulty;
  std::vector<double> pass_at_k;   // k = 1..K over tasks with n >= k
  std::vector<double> pass_hat_k;
  double consistency_gap_pp = 0;   // pass@n − pass^n, non-polluted tasks, in pp
  double mixed_share_pp = 0;       // share of tasks with mixed outcomes, pp
  double answer_inconsistency_pp = 0;
  double trajectory_inconsistency_pp = 0;
  double trajectory_similarity = 1.0;
  std::optional<double> group_completion; // absent when no case names a group
  std::map<int, std::int64_t> first_divergence_histogram;
  std::int64_t token_band_outliers = 0;
  std::int64_t polluted_tasks = 0;
  std::int64_t total_runs = 0;     // including errored
  std::int64_t errored_runs = 0;
  double error_rate = 0;           // errored / total
  std::map<std::string, std::int64_t> errors_by_bucket;
  std::int64_t prompt_tokens = 0, completion_tokens = 0;
  std::int64_t cached_tokens = 0, paid_tokens = 0;
  double tokens_per_task = 0;
  std::int64_t runs_without_usage = 0;
  std::int64_t cache_hits = 0;
  Latency call_latency;            // fresh calls only
  Latency run_latency;
};

struct Options {
  double token_band_pct = 25.0;
  bool include_polluted = false;   // count route-polluted tasks in the consistency gap
};

TaskStats task_stats(const results::Task& t, const Options& o);
SuiteStats suite_stats(const std::vector<results::Task>& tasks, const std::vector<TaskStats>& per_task,
                       const Options& o);

} // namespace gate::metrics

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
// Errored runs are counted apart: success, pass@k and the consistency flags
// look only at the n runs that did not error; a task whose runs all errored
// has n == 0, is consistent, and is left out of the suite's success numbers
// (but not of its error and token numbers). Tasks with fewer than two
// non-errored runs are consistent in every sense.
struct TaskStats {
  std::int64_t n = 0; // runs that did not error
  std::int64_t c = 0; // of those, passed
  std::int64_t errored = 0;
  double rate = 0;                // c / n (0 when n == 0)
  std::vector<double> pass_at_k;  // index k-1, k = 1..n
  std::vector<double> pass_hat_k; // index k-1, k = 1..n
  bool mixed = false;             // some runs passed, some failed
  bool outcome_consistent = true;
  bool answer_consistent = true;     // every non-errored run has the same answer_sha256
  bool trajectory_consistent = true; // ... the same sequence of (name, arguments_sha256)
  // Mean pairwise Jaccard of the runs' SETS of "name:arguments_sha256"; two
  // empty sets are identical (1.0), as is a task with fewer than two runs.
  double trajectory_similarity = 1.0;
  // Smallest step at which some run's sequence differs from the modal one (the
  // most frequent sequence; ties go to the one that appears first in run
  // order); a shorter sequence differs at its length.
  std::optional<int> first_divergence; // step index, when not trajectory-consistent
  bool route_polluted = false;         // the routes of ALL runs (errored too) are not all equal
  std::vector<std::string> route_diff; // names of route fields that differ between runs (sorted;
                                       // a key missing in one run differs)
  // Run.index of runs, among those with usage_known, whose prompt + completion
  // tokens differ from the task's median by more than token_band_pct% of it.
  std::vector<int> token_band_outliers;
  std::int64_t prompt_tokens = 0, completion_tokens = 0; // whole chain, all runs
  std::int64_t cached_tokens = 0, paid_tokens = 0;       // prompt + completion of cache hits / the rest
  bool usage_missing = false;                            // some run had no usage reported
};

// success_rate = Σc/Σn over tasks with n >= 1. The interval is Wilson on
// (Σc, Σn) when every such task has n <= 1, else the t interval over the
// per-task rates (task_mean_interval); Σn == 0 → Wilson's [0, 1].
struct RateSummary {
  std::int64_t tasks = 0; // tasks with n >= 1 (the T of the interval)
  std::int64_t runs = 0;  // non-errored runs
  std::int64_t passed = 0;
  double success_rate = 0;
  Interval interval;           // 95%
  std::string interval_method; // "wilson" (k = 1) or "t over tasks" (k > 1)
};

// Fresh (not cache_hit), non-errored runs; percentiles as percentile().
struct Latency {
  std::int64_t count = 0;
  double p50 = 0, p95 = 0, max = 0;
};

struct SuiteStats {
  RateSummary overall;
  std::map<std::string, RateSummary> by_scenario;
  std::map<std::string, RateSummary> by_difficulty;
  std::vector<double> pass_at_k; // k = 1..K (K = max n) over tasks with n >= k
  std::vector<double> pass_hat_k;
  // Both over tasks with n >= 1 that are not route-polluted (unless
  // Options.include_polluted); they are equal by construction.
  double consistency_gap_pp = 0;          // pass@n − pass^n, non-polluted tasks, in pp
  double mixed_share_pp = 0;              // share of tasks with mixed outcomes, pp
  double answer_inconsistency_pp = 0;     // over all tasks with n >= 1
  double trajectory_inconsistency_pp = 0; // over all tasks with n >= 1
  double trajectory_similarity = 1.0;     // mean over tasks with n >= 1
  // Mean over run indices r = 0..R−1 (R = the most runs any task has,
  // errored runs included) of the share of groups complete in run r: every
  // task of the group has a run with index r, and it passed (an errored run
  // did not pass). Absent when no case names a group.
  std::optional<double> group_completion;
  std::map<int, std::int64_t> first_divergence_histogram;
  std::int64_t token_band_outliers = 0;
  std::int64_t polluted_tasks = 0;
  std::int64_t total_runs = 0; // including errored
  std::int64_t errored_runs = 0;
  double error_rate = 0; // errored / total (0 when there are no runs)
  std::map<std::string, std::int64_t> errors_by_bucket;
  std::int64_t prompt_tokens = 0, completion_tokens = 0;
  std::int64_t cached_tokens = 0, paid_tokens = 0;
  double tokens_per_task = 0; // (prompt + completion) / all tasks; 0 with no tasks
  std::int64_t runs_without_usage = 0;
  std::int64_t cache_hits = 0;
  // The same set today: a plain task makes one model call per run. Agent runs
  // will carry per-call latencies, and call_latency will then count calls.
  Latency call_latency; // fresh calls only
  Latency run_latency;
};

struct Options {
  double token_band_pct = 25.0;
  bool include_polluted = false; // count route-polluted tasks in the consistency gap
};

TaskStats task_stats(const results::Task& t, const Options& o);
// `per_task` is parallel to `tasks` (task_stats of each); a size mismatch
// throws std::invalid_argument. Linear in the number of runs.
SuiteStats suite_stats(const std::vector<results::Task>& tasks, const std::vector<TaskStats>& per_task,
                       const Options& o);

} // namespace gate::metrics

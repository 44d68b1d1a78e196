#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
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
  // Whether the data hold what the flags above compare: some non-errored
  // run carries an answer hash / made a tool call. Without, the suite's
  // answer and trajectory numbers leave the task out (n/a, not "consistent").
  bool has_answers = false;
  bool has_tool_calls = false;
  // Mean pairwise Jaccard of the runs' SETS of "name:arguments_sha256"; two
  // empty sets are identical (1.0), as is a task with fewer than two runs.
  // n/a (absent) when no run made a tool call: there is no trajectory to
  // compare, and 1.0 would read as a perfect score.
  std::optional<double> trajectory_similarity;
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
  // METRICS.md "Cost", over the measured runs: what the fresh ones cost
  // (a cache hit pays nothing) and what the replayed ones had cost when they
  // were recorded. Absent (n/a) when a run they sum has no cost (run_cost)
  // or the task has no measured run; `priced` is false, and neither is
  // written, when no pricing is configured.
  bool priced = false;
  std::optional<double> cost_usd;
  std::optional<double> cached_cost_usd;
  // A run carries the cost its harness recorded (gate analyze): that cost is
  // the run's, priced or not; `priced` is then true too.
  bool recorded_cost = false;
  // A simulated user's cost the harness recorded apart from the agent's
  // (τ²-bench's user_cost), over the measured runs; written only when some
  // run carries one, n/a when a measured run does not.
  bool user_costed = false;
  std::optional<double> user_cost_usd;
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

// Fresh (not cache_hit), non-errored runs that carry a latency (a replayed or
// imported run without one has 0); percentiles as percentile().
inline bool timed_fresh(const results::Run& r) { return !r.cache_hit && !r.errored() && r.latency_ms > 0; }
struct Latency {
  std::int64_t count = 0;
  double p50 = 0, p95 = 0, max = 0;
};

struct SuiteStats {
  RateSummary overall;
  std::map<std::string, RateSummary> by_scenario;
  std::map<std::string, RateSummary> by_difficulty;
  // METRICS.md "Common k": K = the number of measured runs most tasks have
  // (metrics::common_runs); pass@k and pass^k for k = 1..K, every one over
  // the same pass_k_tasks tasks with n >= K (through the unbiased per-task
  // estimators), so no task counts at one k and vanishes at another.
  std::vector<double> pass_at_k;
  std::vector<double> pass_hat_k;
  std::int64_t pass_k_tasks = 0;
  std::int64_t pass_k_left_out = 0; // measured tasks with fewer than K runs
  // Both over tasks with n >= K that are not route-polluted (unless
  // Options.include_polluted); equal when every such task has n == K.
  // Absent (n/a) when there is no such task: a gap over nothing is not 0.
  std::optional<double> consistency_gap_pp; // pass@K − pass^K, in pp
  std::optional<double> mixed_share_pp;     // share of those tasks with mixed outcomes, pp
  // Absent (n/a) when no measured run carries what they compare.
  std::optional<double> answer_inconsistency_pp;     // over tasks with answers
  std::optional<double> trajectory_inconsistency_pp; // over tasks with tool calls
  std::optional<double> trajectory_similarity;       // mean over tasks with tool calls
  // Mean over run indices r = 0..R−1 (R = the most runs any task has,
  // errored runs included) of the share of groups complete in run r: every
  // task of the group has a run with index r, and it passed (an errored run
  // did not pass). Absent when no case names a group.
  std::optional<double> group_completion;
  std::map<int, std::int64_t> first_divergence_histogram;
  std::optional<std::int64_t> token_band_outliers;              // absent: no run reported usage
  std::optional<std::int64_t> polluted_tasks;                   // absent: no run carries a route
  std::map<std::string, std::vector<std::string>> route_by_run; // RouteRules::by_run, reported once
  std::int64_t total_runs = 0;                                  // including errored
  std::int64_t errored_runs = 0;
  double error_rate = 0; // errored / total (0 when there are no runs)
  std::map<std::string, std::int64_t> errors_by_bucket;
  std::int64_t prompt_tokens = 0, completion_tokens = 0;
  std::int64_t cached_tokens = 0, paid_tokens = 0;
  double tokens_per_task = 0; // (prompt + completion) / all tasks; 0 with no tasks
  std::int64_t runs_without_usage = 0;
  std::int64_t cache_hits = 0;
  // The sums of the measured tasks' costs (TaskStats); absent when one of
  // them is, or no task was measured. Not written unless `priced`.
  bool priced = false;
  std::optional<double> cost_usd;
  std::optional<double> cached_cost_usd;
  bool recorded_cost = false; // some task's runs carry their harness's cost
  // The tasks' user_cost_usd summed, as cost_usd is.
  bool user_costed = false;
  std::optional<double> user_cost_usd;
  // The same set today: a plain task makes one model call per run. Agent runs
  // will carry per-call latencies, and call_latency will then count calls.
  Latency call_latency; // fresh calls only
  Latency run_latency;
};

// Run indexes above this are not a harness's trial numbers.
inline constexpr int k_max_run_index = 10000;

// How the runs' routes are compared (report::compute fills it in).
struct RouteRules {
  results::Route shared; // the route of a run whose own is empty (a report's shared route)
  // Fields the harness's format sets per trial by design (τ²-bench's seed),
  // as the report's config names them ("route_by_design"): each is a
  // by_run field as soon as its value per run index agrees across tasks,
  // one task being enough.
  std::set<std::string> by_design;
  // Fields that vary with the run index, the same way in every task (a
  // harness that gives trial r the seed s_r): the harness's design, not
  // pollution. Value per run index.
  std::map<std::string, std::vector<std::string>> by_run;
  bool ignored(const std::string& key) const {
    return !results::compared_route_key(key) || by_run.count(key) > 0;
  }
};

// USD per million tokens, as gate.yaml's `pricing` gives them.
struct Price {
  double prompt = 0;
  double completion = 0;
  // Prompt tokens the provider's cache served, and those written to it
  // (Anthropic); absent: priced as any prompt token.
  std::optional<double> cached_prompt = {}, cache_write = {};
};

// Who pays what (METRICS.md "Cost"): a run's tokens at the price of its
// route's model, the llm_judge calls' share at the judge model's.
struct Pricing {
  std::map<std::string, Price> models; // by model name; empty: no pricing configured
  std::string judge_model;             // the model behind llm_judge checks
  bool configured() const { return !models.empty(); }
};

// prompt × price.prompt / 1e6 + completion × price.completion / 1e6, in USD.
double tokens_cost(const Price& price, std::int64_t prompt_tokens, std::int64_t completion_tokens);
// The same with the prompt's cached parts at their own prices: the read and
// written parts of `prompt_tokens` at cached_prompt and cache_write (each
// at the prompt price when the row has none). Absent when the row prices a
// part whose count the provider did not report.
std::optional<double> tokens_cost(const Price& price, std::int64_t prompt_tokens,
                                  std::int64_t completion_tokens, std::optional<std::int64_t> cache_read,
                                  std::optional<std::int64_t> cache_write);

// Adds `cost` to `sum`; an absent cost makes the sum absent for good (a
// sum of costs with one unknown is unknown, never a smaller number).
void add_cost(std::optional<double>& sum, const std::optional<double>& cost);

// A run's cost in USD over its whole chain (retries, judge calls), at the
// prices of `model` (its route's) and of the judge model: absent when its
// usage is unknown, `model` has no row, or it made judge calls with tokens
// and the judge model has none.
std::optional<double> run_cost(const results::Run& r, const std::string& model, const Pricing& p);
// The same at the model of the run's route, or of `shared` (the suite's
// route) when the run keeps none; absent when neither names a model.
std::optional<double> run_cost(const results::Run& r, const results::Route& shared, const Pricing& p);

struct Options {
  double token_band_pct = 25.0;
  bool include_polluted = false; // count route-polluted tasks in the consistency gap
  RouteRules routes = {};
  Pricing pricing = {};
};

TaskStats task_stats(const results::Task& t, const Options& o);

// RouteRules::by_run of these tasks: each field (concurrency aside) whose
// value at run index r is the same in every task with two or more runs, in
// at least two such tasks (one, for a field of `by_design`), and differs
// between indexes. `shared` stands for a run's empty route.
std::map<std::string, std::vector<std::string>>
route_fields_by_run(const std::vector<results::Task>& tasks, const results::Route& shared,
                    const std::set<std::string>& by_design = {});
// `per_task` is parallel to `tasks` (task_stats of each); a size mismatch
// throws std::invalid_argument. Linear in the number of runs.
SuiteStats suite_stats(const std::vector<results::Task>& tasks, const std::vector<TaskStats>& per_task,
                       const Options& o);

} // namespace gate::metrics

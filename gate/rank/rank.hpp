#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gate/metrics/stats.hpp>
#include <gate/rank/bradley_terry.hpp>
#include <gate/report/report.hpp>

// Ranking strategies of one suite by Bradley–Terry Elo per token (METRICS.md
// "Ranking strategies", docs/rank.md). Pure: reports in, a Ranking out;
// rendering (gate/render/rank_output.hpp) only formats a Ranking.
namespace gate::rank {

// "file.json:name" as given on the command line.
struct StrategySpec {
  std::filesystem::path file;
  std::string name;
};

// Splits at the last ':'. A missing or empty name, a name with a '/' (a path
// without a name), control characters or more than 64 bytes are
// Error(bad_input) quoting the argument.
StrategySpec parse_strategy(std::string_view arg);

struct Strategy {
  std::string name;
  std::string file;                       // where the report came from, for people
  const report::Report* report = nullptr; // not owned
};

// Every report names the same suite (name, version and sha256), else
// Error(bad_input) naming the two files that differ and their suites.
void check_same_suite(const std::vector<Strategy>& strategies);

enum class BudgetOrder {
  tokens, // ascending tokens per task (ties: the order given)
  given,  // the order the strategies were given in
};

struct Options {
  std::string anchor;            // the name of the baseline strategy (Elo 1000)
  std::uint64_t seed = 1;        // of the bootstrap
  std::int64_t bootstrap = 1000; // resamples of the tasks, >= 1
  BudgetOrder order = BudgetOrder::tokens;
  std::size_t top_tasks = 3; // gains and losses listed per strategy
};

// A task where a strategy moved most against the anchor in the per-task fit.
struct TaskMove {
  std::string id, scenario;
  double delta_elo = 0;   // per-task Elo − 1000
  double anchor_rate = 0; // pass rates on this task
  double rate = 0;
};

// A strategy's mean per-task ΔElo against the anchor on one scenario.
struct ScenarioGain {
  std::string scenario;
  std::int64_t tasks = 0;
  double mean_delta_elo = 0;
};

struct StrategyResult {
  std::string name, file;
  bool anchor = false;
  bool complete = true;          // the report was not interrupted
  std::int64_t tasks = 0;        // tasks in its report
  std::int64_t scored_tasks = 0; // of those, with at least one run that did not error (they play games)
  // Σ over all runs (errored runs included) of prompt_tokens +
  // completion_tokens (the sum over every attempt, retries included) +
  // judge_prompt_tokens + judge_completion_tokens (llm_judge calls), divided
  // by `tasks`: the whole chain.
  double tokens_per_task = 0;
  std::int64_t runs_without_usage = 0; // their tokens are unknown: tokens_per_task is a lower bound
  double success_rate = 0;             // the report's overall success rate
  metrics::Interval success_interval;
  std::int64_t won = 0, drawn = 0, lost = 0; // games on the real data
  double elo = 0;                            // the pooled (cross-task) fit
  metrics::Interval elo_interval;            // 95%, bootstrap percentiles
  double delta_elo = 0;                      // elo − 1000
  std::optional<double> delta_elo_per_1k;    // delta_elo / (tokens_per_task / 1000); none at 0 tokens
  // Against the previous strategy in budget order (none for the first):
  std::optional<double> step_gain;                // elo − previous elo
  std::optional<metrics::Interval> step_interval; // 95% bootstrap interval of step_gain
  std::optional<double> marginal_per_1k;          // step_gain / (Δ tokens per task / 1000); none when Δ = 0
  // Per-task fits (tasks where this strategy and the anchor both played):
  std::int64_t per_task_tasks = 0;
  double per_task_mean = 0;                 // mean per-task Elo
  double per_task_sd = 0;                   // sample standard deviation across tasks (0 for fewer than 2)
  std::vector<TaskMove> gains, losses;      // the largest moves up and down, at most Options.top_tasks each
  std::vector<ScenarioGain> scenarios;      // sorted by name
  std::optional<std::string> only_scenario; // it helps one task type and no other (docs/rank.md)
};

struct Ranking {
  std::string suite_name, suite_version, suite_sha256;
  std::string anchor;
  BudgetOrder order = BudgetOrder::tokens;
  std::uint64_t seed = 0;
  std::int64_t bootstrap = 0;
  std::vector<StrategyResult> strategies; // in budget order
  std::int64_t tasks = 0;                 // distinct task ids over all reports
  std::int64_t games = 0;                 // real games played (pairs of strategies on a task)
  // The pooled fit had no finite solution without the prior; who caused it.
  bool prior = false;
  std::vector<std::string> unbeaten;             // strategies that never lost a game
  std::vector<std::string> winless;              // strategies that never won or drew one
  std::int64_t per_task_prior = 0;               // per-task fits that needed the prior
  std::int64_t bootstrap_prior = 0;              // resamples whose fit needed it
  bool converged = true;                         // every fit met the tolerance
  std::vector<std::string> tasks_without_anchor; // played, but the anchor did not: no per-task Elo
  std::vector<std::string> tasks_without_games;  // fewer than two strategies scored a run
  std::string verdict;                           // see k_still_scaling, …
  std::string verdict_reason;
};

inline constexpr const char* k_still_scaling = "still scaling";
inline constexpr const char* k_returns_falling = "returns falling: check per task";
inline constexpr const char* k_flat = "flat: stop adding budget";

// The mean per-task ΔElo a scenario needs to count as helped (docs/rank.md).
inline constexpr double k_helped_elo = 25.0;
// The last step's marginal value below this share of the best earlier
// step's means falling returns.
inline constexpr double k_falling_share = 0.5;

// The whole method. Requires at least two strategies with distinct names and
// the anchor among them (else Error(bad_input)); a comparison graph that is
// not connected is Error(bad_input) naming the groups. Does not check the
// suites (check_same_suite does; `gate compare --elo` pairs by id instead).
// Deterministic for a given seed.
Ranking rank(const std::vector<Strategy>& strategies, const Options& o);

// The verdict in words and its reason from strategies in budget order with
// their step gains, intervals and marginal values filled in (docs/rank.md).
void decide(Ranking& r);

// A small deterministic generator (splitmix64, Steele et al. 2014), so that
// a seed gives the same resamples with every standard library.
struct SplitMix64 {
  std::uint64_t state = 0;
  std::uint64_t next();
  // Uniform in [0, bound), bound >= 1, without modulo bias (Lemire 2019).
  std::uint64_t below(std::uint64_t bound);
};

} // namespace gate::rank

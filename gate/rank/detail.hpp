#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gate/rank/bradley_terry.hpp>
#include <gate/rank/rank.hpp>

// Internals of gate_rank shared by its .cpp files.
namespace gate::rank::detail {

inline constexpr double k_absent = std::numeric_limits<double>::quiet_NaN();

// Every task id of any report (sorted) and each strategy's pass rate on it:
// k_absent when the task is not in its report or every run of it errored.
struct Table {
  std::size_t players = 0;
  std::vector<std::string> ids, scenarios;
  std::vector<double> rates; // ids.size() × players
  double rate(std::size_t task, std::size_t player) const { return rates[task * players + player]; }
};
Table build_table(const std::vector<Strategy>& strategies);

// Each task's games (every pair of strategies present on it plays one),
// deduplicated: tasks with identical games share a pattern, so the
// bootstrap and the per-task fits work per pattern rather than per task.
struct Patterns {
  std::size_t players = 0;
  std::vector<std::int32_t> half_points; // patterns × players², as Games::half_points
  std::vector<std::int32_t> lost;        // patterns × players: games each player lost
  std::vector<std::uint32_t> of_task;
  std::size_t size() const { return players == 0 ? 0 : half_points.size() / (players * players); }
};
Patterns build_patterns(const Table& t);

// Σ over patterns of weight[p] × the pattern's games, and of the games each
// player lost.
struct Pooled {
  Games games;
  std::vector<std::int64_t> lost;
};
Pooled pooled(const Patterns& p, const std::vector<std::int64_t>& weight);

// Fits pooled games, with the prior when a player never lost; with
// `prior_if_apart` a graph in pieces gets the prior too (a resample may miss
// the tasks linking two groups), else std::invalid_argument as fit().
Fit fit_pooled(const Pooled& g, bool prior_if_apart);

struct Resamples {
  std::vector<double> elo; // resamples × players, anchored
  std::int64_t prior = 0;  // resamples whose fit needed the prior
  bool converged = true;
};
// Resamples the tasks with replacement `count` times from `seed` and fits
// each resample.
Resamples bootstrap(const Patterns& p, std::size_t anchor, std::int64_t count, std::uint64_t seed);

struct PerTask {
  std::vector<double> elo; // tasks × players; k_absent where the strategy or the anchor did not play
  std::int64_t prior = 0;  // tasks whose fit needed the prior
  bool converged = true;
};
PerTask per_task_elo(const Patterns& p, std::size_t anchor);

} // namespace gate::rank::detail

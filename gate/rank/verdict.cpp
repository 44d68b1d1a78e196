#include <gate/rank/rank.hpp>

#include <cmath>

#include <gate/util/format.hpp>

namespace gate::rank {

namespace {

std::string elo_text(double x) { return signed_fixed(x, 0, true); }
std::string per_1k(double x) { return signed_fixed(x, 1, true); }

std::string step_name(const StrategyResult& from, const StrategyResult& to) {
  return "\"" + from.name + "\" → \"" + to.name + "\" (" +
         signed_fixed(to.tokens_per_task - from.tokens_per_task, 0, true) + " tokens per task)";
}

} // namespace

// docs/rank.md "The verdict": the last step in budget order decides.
// 1. Its gain's 95% bootstrap interval reaches 0 or below: flat.
// 2. Else its marginal ΔElo per 1k tokens is under k_falling_share of the
//    best earlier step's: returns falling.
// 3. Else: still scaling.
void decide(Ranking& r) {
  const auto& s = r.strategies;
  if (s.size() < 2 || !s.back().step_gain || !s.back().step_interval) {
    r.verdict = k_flat;
    r.verdict_reason = "fewer than two strategies in budget order: nothing to scale";
    return;
  }
  const StrategyResult& last = s.back();
  const StrategyResult& before = s[s.size() - 2];
  const std::string step = step_name(before, last);
  const std::string gain = elo_text(*last.step_gain) + " Elo (95% interval " +
                           elo_text(last.step_interval->low) + " to " + elo_text(last.step_interval->high) +
                           ")";
  if (last.step_interval->low <= 0) {
    r.verdict = k_flat;
    r.verdict_reason = "the last step, " + step + ", bought " + gain + ": not clearly above zero";
    return;
  }
  const StrategyResult* best = nullptr;
  for (std::size_t k = 1; k + 1 < s.size(); ++k)
    if (s[k].marginal_per_1k && (best == nullptr || *s[k].marginal_per_1k > *best->marginal_per_1k))
      best = &s[k];
  if (best != nullptr && last.marginal_per_1k &&
      *last.marginal_per_1k < k_falling_share * *best->marginal_per_1k) {
    r.verdict = k_returns_falling;
    r.verdict_reason = "the last step, " + step + ", bought " + gain + ", " + per_1k(*last.marginal_per_1k) +
                       " Elo per 1k tokens: under half of the best earlier step's " +
                       per_1k(*best->marginal_per_1k) + " (to \"" + best->name + "\")";
    return;
  }
  r.verdict = k_still_scaling;
  r.verdict_reason =
      "the last step, " + step + ", bought " + gain +
      (last.marginal_per_1k ? ", " + per_1k(*last.marginal_per_1k) + " Elo per 1k tokens" : "") +
      (best != nullptr ? ": at least half of the best earlier step's " + per_1k(*best->marginal_per_1k) : "");
}

} // namespace gate::rank

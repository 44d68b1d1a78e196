#include <doctest.h>

#include <gate/rank/rank.hpp>

using namespace gate;
using rank::Ranking;
using rank::StrategyResult;

namespace {

// Strategies in budget order with (tokens, Elo, step interval); step gains
// and marginal values as rank() fills them in.
Ranking chain(const std::vector<std::tuple<double, double, double, double>>& points) {
  Ranking r;
  for (std::size_t k = 0; k < points.size(); ++k) {
    auto [tokens, elo, low, high] = points[k];
    StrategyResult s;
    s.name = "s" + std::to_string(k);
    s.tokens_per_task = tokens;
    s.elo = elo;
    if (k > 0) {
      const auto& prev = r.strategies.back();
      s.step_gain = elo - prev.elo;
      s.step_interval = metrics::Interval{low, high};
      s.marginal_per_1k = *s.step_gain / ((tokens - prev.tokens_per_task) / 1000);
    }
    r.strategies.push_back(s);
  }
  rank::decide(r);
  return r;
}

} // namespace

TEST_CASE("verdict: the last step's interval reaching zero is flat") {
  // 1000 → 1100 (+100 for 1k tokens), then +10 with interval [−5, 25].
  Ranking r = chain({{1000, 1000, 0, 0}, {2000, 1100, 60, 140}, {3000, 1110, -5, 25}});
  CHECK(r.verdict == rank::k_flat);
  CHECK(r.verdict_reason.find("\"s1\" → \"s2\" (+1000 tokens per task)") != std::string::npos);
  CHECK(r.verdict_reason.find("+10 Elo (95% interval -5 to +25)") != std::string::npos);
}

TEST_CASE("verdict: a clear gain at under half the best earlier marginal value is falling returns") {
  // Marginals: 100 / 1k = 100 per 1k; then 40 over 2k tokens = 20 per 1k < 50.
  Ranking r = chain({{1000, 1000, 0, 0}, {2000, 1100, 60, 140}, {4000, 1140, 10, 70}});
  CHECK(r.verdict == rank::k_returns_falling);
  CHECK(r.verdict_reason.find("+20.0 Elo per 1k tokens: under half of the best earlier step's +100.0") !=
        std::string::npos);
}

TEST_CASE("verdict: a clear gain at half the best earlier marginal value or more is still scaling") {
  // 100 per 1k, then 60 over 1k = 60 per 1k >= 50.
  Ranking r = chain({{1000, 1000, 0, 0}, {2000, 1100, 60, 140}, {3000, 1160, 20, 100}});
  CHECK(r.verdict == rank::k_still_scaling);
  // Two strategies: a clear gain is still scaling (no earlier step to compare).
  CHECK(chain({{1000, 1000, 0, 0}, {2000, 1100, 60, 140}}).verdict == rank::k_still_scaling);
  CHECK(chain({{1000, 1000, 0, 0}, {2000, 1100, 0, 140}}).verdict == rank::k_flat);
}

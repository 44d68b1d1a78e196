#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

// Bradley–Terry strengths from pairwise games (METRICS.md "Ranking
// strategies"): the MM iteration of Hunter (2004), the prior for data with
// no finite maximum-likelihood fit, and the Elo scale. Pure functions.
namespace gate::rank {

// Results among n players in half-points: a game i won against j adds 2 to
// at(i, j), a draw adds 1 to at(i, j) and to at(j, i). So the games played
// between i and j are (at(i, j) + at(j, i)) / 2 and the score of i (wins
// plus half the draws) is Σ_j at(i, j) / 2.
struct Games {
  std::size_t n = 0;
  std::vector<std::int64_t> half_points; // row-major n × n, diagonal 0

  explicit Games(std::size_t players = 0) : n(players), half_points(players * players, 0) {}
  std::int64_t& at(std::size_t i, std::size_t j) { return half_points[i * n + j]; }
  std::int64_t at(std::size_t i, std::size_t j) const { return half_points[i * n + j]; }
  std::int64_t games(std::size_t i, std::size_t j) const { return (at(i, j) + at(j, i)) / 2; }
};

// One game between i and j: the higher value wins, equal values draw.
void add_game(Games& g, std::size_t i, std::size_t j, double value_i, double value_j);

// The connected components of the comparison graph (i and j linked when
// they played at least once), each sorted, ordered by their first player.
// More than one component: the groups share no scale and cannot be ranked.
std::vector<std::vector<std::size_t>> components(const Games& g);

// Every player reaches every other through "scored against" edges (i → j
// when i won or drew a game against j): Hunter's (2004) condition for a
// finite maximum-likelihood fit. A player that never loses, or never scores,
// breaks it.
bool strongly_connected(const Games& g);

// The weak prior: one virtual draw between every pair of players.
void add_prior(Games& g);

struct Fit {
  std::vector<double> strength; // p_i > 0, Σ p_i = 1
  bool prior = false;           // the data alone had no finite fit; add_prior was applied
  int iterations = 0;
  bool converged = false; // the largest change fell below k_tolerance within k_max_iterations
};

inline constexpr double k_tolerance = 1e-10;
inline constexpr int k_max_iterations = 100'000;

// p_i ← W_i / Σ_j n_ij/(p_i + p_j), normalized to Σ p = 1 after each step,
// from p_i = 1/n until the largest change of a p_i is below k_tolerance.
// The prior is added first (Fit.prior) when `unbeaten` (the caller saw a
// player that never lost a game: METRICS.md adds it then, although a player
// with draws still has a finite fit) or when the data are not strongly
// connected. Requires n >= 1 and a single component (throws
// std::invalid_argument otherwise; callers say which groups are apart).
Fit fit(Games g, bool unbeaten = false);

// 1000 + (400 / ln 10) · ln(p / p_anchor): the anchor's Elo is exactly 1000.
double elo(double p, double p_anchor);

inline constexpr double k_anchor_elo = 1000.0;

} // namespace gate::rank

#include <gate/rank/bradley_terry.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gate::rank {

namespace {

// Players reachable from `start` along edges for which `linked(from, to)`.
template <typename Linked> std::vector<bool> reach(const Games& g, std::size_t start, Linked linked) {
  std::vector<bool> seen(g.n, false);
  std::vector<std::size_t> stack{start};
  seen[start] = true;
  while (!stack.empty()) {
    std::size_t i = stack.back();
    stack.pop_back();
    for (std::size_t j = 0; j < g.n; ++j)
      if (!seen[j] && linked(i, j)) {
        seen[j] = true;
        stack.push_back(j);
      }
  }
  return seen;
}

} // namespace

void add_game(Games& g, std::size_t i, std::size_t j, double value_i, double value_j) {
  if (value_i > value_j) {
    g.at(i, j) += 2;
  } else if (value_j > value_i) {
    g.at(j, i) += 2;
  } else {
    g.at(i, j) += 1;
    g.at(j, i) += 1;
  }
}

std::vector<std::vector<std::size_t>> components(const Games& g) {
  std::vector<std::vector<std::size_t>> out;
  std::vector<bool> assigned(g.n, false);
  for (std::size_t s = 0; s < g.n; ++s) {
    if (assigned[s]) continue;
    auto seen = reach(g, s, [&](std::size_t i, std::size_t j) { return g.games(i, j) > 0; });
    std::vector<std::size_t> group;
    for (std::size_t i = 0; i < g.n; ++i)
      if (seen[i]) {
        group.push_back(i);
        assigned[i] = true;
      }
    out.push_back(std::move(group));
  }
  return out;
}

bool strongly_connected(const Games& g) {
  if (g.n == 0) return true;
  // Strongly connected ⇔ player 0 reaches everyone forwards and backwards.
  auto forward = reach(g, 0, [&](std::size_t i, std::size_t j) { return g.at(i, j) > 0; });
  auto backward = reach(g, 0, [&](std::size_t i, std::size_t j) { return g.at(j, i) > 0; });
  return std::all_of(forward.begin(), forward.end(), [](bool b) { return b; }) &&
         std::all_of(backward.begin(), backward.end(), [](bool b) { return b; });
}

void add_prior(Games& g) {
  for (std::size_t i = 0; i < g.n; ++i)
    for (std::size_t j = 0; j < g.n; ++j)
      if (i != j) g.at(i, j) += 1;
}

Fit fit(Games g, bool unbeaten) {
  if (g.n == 0) throw std::invalid_argument("rank::fit: no players");
  if (components(g).size() != 1)
    throw std::invalid_argument("rank::fit: the comparison graph is not connected");
  Fit f;
  if (g.n == 1) {
    f.strength = {1.0};
    f.converged = true;
    return f;
  }
  if (unbeaten || !strongly_connected(g)) {
    add_prior(g);
    f.prior = true;
  }
  const std::size_t n = g.n;
  std::vector<double> wins(n, 0.0), games(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      wins[i] += static_cast<double>(g.at(i, j)) / 2.0;
      games[i * n + j] = static_cast<double>(g.games(i, j));
    }
  std::vector<double> p(n, 1.0 / static_cast<double>(n)), next(n);
  while (f.iterations < k_max_iterations) {
    ++f.iterations;
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double denominator = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (games[i * n + j] > 0) denominator += games[i * n + j] / (p[i] + p[j]);
      next[i] = wins[i] / denominator;
      total += next[i];
    }
    double change = 0;
    for (std::size_t i = 0; i < n; ++i) {
      next[i] /= total;
      change = std::max(change, std::fabs(next[i] - p[i]));
    }
    p.swap(next);
    if (change < k_tolerance) {
      f.converged = true;
      break;
    }
  }
  f.strength = std::move(p);
  return f;
}

double elo(double p, double p_anchor) {
  return k_anchor_elo + 400.0 / std::log(10.0) * std::log(p / p_anchor);
}

} // namespace gate::rank

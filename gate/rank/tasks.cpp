#include <gate/rank/detail.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace gate::rank::detail {

Table build_table(const std::vector<Strategy>& strategies) {
  Table t;
  t.players = strategies.size();
  std::map<std::string, std::string> scenario_of; // id → scenario, from the first report that has it
  for (const auto& s : strategies)
    for (const auto& task : s.report->tasks)
      scenario_of.emplace(task.id, task.scenario);
  std::unordered_map<std::string, std::size_t> index;
  index.reserve(scenario_of.size());
  for (const auto& [id, scenario] : scenario_of) {
    index.emplace(id, t.ids.size());
    t.ids.push_back(id);
    t.scenarios.push_back(scenario);
  }
  t.rates.assign(t.ids.size() * t.players, k_absent);
  for (std::size_t s = 0; s < strategies.size(); ++s) {
    const auto& r = *strategies[s].report;
    for (std::size_t i = 0; i < r.tasks.size(); ++i) {
      const auto& stats = r.task_stats[i];
      if (stats.n > 0) t.rates[index.at(r.tasks[i].id) * t.players + s] = stats.rate;
    }
  }
  return t;
}

Patterns build_patterns(const Table& t) {
  Patterns p;
  p.players = t.players;
  const std::size_t n = t.players, cells = n * n;
  std::unordered_map<std::string, std::uint32_t> seen;
  std::string key(cells, '\0');
  Games g(n);
  for (std::size_t task = 0; task < t.ids.size(); ++task) {
    std::fill(g.half_points.begin(), g.half_points.end(), 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        double a = t.rate(task, i), b = t.rate(task, j);
        if (!std::isnan(a) && !std::isnan(b)) add_game(g, i, j, a, b);
      }
    for (std::size_t c = 0; c < cells; ++c)
      key[c] = static_cast<char>(g.half_points[c]);
    auto [it, added] = seen.emplace(key, static_cast<std::uint32_t>(seen.size()));
    if (added) {
      p.half_points.insert(p.half_points.end(), g.half_points.begin(), g.half_points.end());
      // One game per pair on a task: 2 half-points to the other side is a loss.
      for (std::size_t i = 0; i < n; ++i) {
        std::int32_t lost = 0;
        for (std::size_t j = 0; j < n; ++j)
          lost += g.at(j, i) == 2 ? 1 : 0;
        p.lost.push_back(lost);
      }
    }
    p.of_task.push_back(it->second);
  }
  return p;
}

Pooled pooled(const Patterns& p, const std::vector<std::int64_t>& weight) {
  const std::size_t n = p.players, cells = n * n;
  Pooled out{Games(n), std::vector<std::int64_t>(n, 0)};
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (weight[k] == 0) continue;
    const std::int32_t* m = p.half_points.data() + k * cells;
    for (std::size_t c = 0; c < cells; ++c)
      out.games.half_points[c] += weight[k] * m[c];
    for (std::size_t i = 0; i < n; ++i)
      out.lost[i] += weight[k] * p.lost[k * n + i];
  }
  return out;
}

Fit fit_pooled(const Pooled& g, bool prior_if_apart) {
  const bool unbeaten = std::find(g.lost.begin(), g.lost.end(), 0) != g.lost.end();
  if (prior_if_apart && components(g.games).size() > 1) {
    Games with = g.games;
    add_prior(with);
    Fit f = fit(std::move(with));
    f.prior = true;
    return f;
  }
  return fit(g.games, unbeaten);
}

PerTask per_task_elo(const Patterns& p, std::size_t anchor) {
  const std::size_t n = p.players, cells = n * n;
  std::vector<std::vector<double>> of_pattern(p.size());
  std::vector<bool> pattern_prior(p.size(), false);
  PerTask out;
  for (std::size_t k = 0; k < p.size(); ++k) {
    const std::int32_t* m = p.half_points.data() + k * cells;
    // The players of this task's fit: those that played (every strategy
    // present on a task plays every other present one).
    std::vector<std::size_t> in;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (m[i * n + j] + m[j * n + i] > 0) {
          in.push_back(i);
          break;
        }
    std::vector<double> elo_row(n, k_absent);
    std::size_t anchor_at = in.size();
    for (std::size_t a = 0; a < in.size(); ++a)
      if (in[a] == anchor) anchor_at = a;
    if (anchor_at < in.size()) {
      Games g(in.size());
      bool unbeaten = false;
      for (std::size_t a = 0; a < in.size(); ++a) {
        for (std::size_t b = 0; b < in.size(); ++b)
          g.at(a, b) = m[in[a] * n + in[b]];
        unbeaten = unbeaten || p.lost[k * n + in[a]] == 0;
      }
      Fit f = fit(std::move(g), unbeaten);
      pattern_prior[k] = f.prior;
      out.converged = out.converged && f.converged;
      for (std::size_t a = 0; a < in.size(); ++a)
        elo_row[in[a]] = elo(f.strength[a], f.strength[anchor_at]);
    }
    of_pattern[k] = std::move(elo_row);
  }
  out.elo.reserve(p.of_task.size() * n);
  for (auto k : p.of_task) {
    out.elo.insert(out.elo.end(), of_pattern[k].begin(), of_pattern[k].end());
    if (pattern_prior[k]) ++out.prior;
  }
  return out;
}

} // namespace gate::rank::detail

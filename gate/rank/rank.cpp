#include <gate/rank/rank.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include <gate/rank/detail.hpp>
#include <gate/util/error.hpp>

namespace gate::rank {

namespace {

using detail::k_absent;

constexpr double k_no_move = 1e-6; // Elo

std::size_t validate(const std::vector<Strategy>& strategies, const Options& o) {
  if (strategies.size() < 2)
    throw Error(Exit::bad_input, "ranking needs at least two strategies (FILE:NAME), got " +
                                     std::to_string(strategies.size()));
  std::string names;
  for (std::size_t i = 0; i < strategies.size(); ++i) {
    const auto& s = strategies[i];
    if (s.report == nullptr || s.report->task_stats.size() != s.report->tasks.size())
      throw std::invalid_argument("rank: strategy \"" + s.name + "\" has no computed report");
    for (std::size_t j = 0; j < i; ++j)
      if (strategies[j].name == s.name)
        throw Error(Exit::bad_input, "strategy name \"" + s.name + "\" is given twice (" +
                                         strategies[j].file + " and " + s.file + "); names must be unique");
    names += (i ? ", " : "") + s.name;
  }
  if (o.bootstrap < 1) throw Error(Exit::bad_input, "--bootstrap: expected a whole number >= 1");
  for (std::size_t i = 0; i < strategies.size(); ++i)
    if (strategies[i].name == o.anchor) return i;
  throw Error(Exit::bad_input, "anchor \"" + o.anchor + "\" is not one of the strategies (" + names + ")");
}

// Every token a run cost (METRICS.md "whole chain"): prompt_tokens and
// completion_tokens are already the sum over its attempts (retries and
// discarded answers included); an llm_judge check's calls are counted apart.
std::int64_t chain_tokens(const results::Run& run) {
  return run.prompt_tokens + run.completion_tokens + run.judge_prompt_tokens + run.judge_completion_tokens;
}

void describe_report(StrategyResult& out, const Strategy& s) {
  const auto& r = *s.report;
  out.name = s.name;
  out.file = s.file;
  out.complete = r.complete;
  out.tasks = static_cast<std::int64_t>(r.tasks.size());
  std::int64_t tokens = 0;
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    if (r.task_stats[i].n > 0) ++out.scored_tasks;
    for (const auto& run : r.tasks[i].runs) {
      tokens += chain_tokens(run);
      if (!run.usage_known) ++out.runs_without_usage;
    }
  }
  out.tokens_per_task = out.tasks > 0 ? static_cast<double>(tokens) / static_cast<double>(out.tasks) : 0;
  out.success_rate = r.stats.overall.success_rate;
  out.success_interval = r.stats.overall.interval;
}

std::string group_list(const std::vector<std::vector<std::size_t>>& groups, const std::vector<Strategy>& s) {
  std::string text;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    text += g == 0 ? "{" : " and {";
    for (std::size_t k = 0; k < groups[g].size(); ++k)
      text += (k ? ", " : "") + s[groups[g][k]].name;
    text += "}";
  }
  return text;
}

metrics::Interval interval_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return {metrics::percentile_sorted(values, 2.5), metrics::percentile_sorted(values, 97.5)};
}

// Wins, draws and losses of every strategy on the real data, the games, and
// the tasks without games or without the anchor.
void tally(const detail::Table& t, std::size_t anchor, Ranking& r, std::vector<StrategyResult>& out) {
  const std::size_t n = t.players;
  for (std::size_t task = 0; task < t.ids.size(); ++task) {
    std::size_t present = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double a = t.rate(task, i);
      if (std::isnan(a)) continue;
      ++present;
      for (std::size_t j = 0; j < n; ++j) {
        const double b = t.rate(task, j);
        if (j == i || std::isnan(b)) continue;
        if (a > b)
          ++out[i].won;
        else if (a < b)
          ++out[i].lost;
        else
          ++out[i].drawn;
      }
    }
    r.games += present < 2 ? 0 : static_cast<std::int64_t>(present * (present - 1) / 2);
    if (present < 2)
      r.tasks_without_games.push_back(t.ids[task]);
    else if (std::isnan(t.rate(task, anchor)))
      r.tasks_without_anchor.push_back(t.ids[task]);
  }
}

// Per-task spread, the largest moves and the per-scenario gains of one
// strategy from the per-task fits.
void per_task_view(const detail::Table& t, const detail::PerTask& pt, std::size_t s, std::size_t anchor,
                   std::size_t top, StrategyResult& out) {
  const std::size_t n = t.players;
  std::vector<TaskMove> moves;
  std::map<std::string, std::pair<std::int64_t, double>> by_scenario; // tasks, Σ ΔElo
  double sum = 0;
  for (std::size_t task = 0; task < t.ids.size(); ++task) {
    const double e = pt.elo[task * n + s];
    if (std::isnan(e)) continue;
    sum += e;
    moves.push_back(
        {t.ids[task], t.scenarios[task], e - k_anchor_elo, t.rate(task, anchor), t.rate(task, s)});
    auto& sc = by_scenario[t.scenarios[task]];
    ++sc.first;
    sc.second += e - k_anchor_elo;
  }
  out.per_task_tasks = static_cast<std::int64_t>(moves.size());
  if (moves.empty()) return;
  out.per_task_mean = sum / static_cast<double>(moves.size());
  if (moves.size() >= 2) {
    double ss = 0;
    for (const auto& m : moves)
      ss += std::pow(m.delta_elo + k_anchor_elo - out.per_task_mean, 2);
    out.per_task_sd = std::sqrt(ss / static_cast<double>(moves.size() - 1));
  }
  if (s == anchor) return;
  auto by_gain = [](const TaskMove& a, const TaskMove& b) {
    if (a.delta_elo != b.delta_elo) return a.delta_elo > b.delta_elo;
    if (a.rate - a.anchor_rate != b.rate - b.anchor_rate)
      return a.rate - a.anchor_rate > b.rate - b.anchor_rate;
    return a.id < b.id;
  };
  std::sort(moves.begin(), moves.end(), by_gain);
  // Strategies with equal pass rates on a task get equal strengths up to
  // rounding: a move smaller than k_no_move is none.
  for (std::size_t i = 0; i < moves.size() && out.gains.size() < top && moves[i].delta_elo > k_no_move; ++i)
    out.gains.push_back(moves[i]);
  for (std::size_t i = moves.size(); i-- > 0 && out.losses.size() < top && moves[i].delta_elo < -k_no_move;)
    out.losses.push_back(moves[i]);
  std::size_t helped = 0;
  for (const auto& [name, v] : by_scenario) {
    out.scenarios.push_back({name, v.first, v.second / static_cast<double>(v.first)});
    if (out.scenarios.back().mean_delta_elo >= k_helped_elo) ++helped;
  }
  if (out.scenarios.size() >= 2 && helped == 1)
    for (const auto& sc : out.scenarios)
      if (sc.mean_delta_elo >= k_helped_elo) out.only_scenario = sc.scenario;
}

std::vector<std::size_t> budget_order(const std::vector<StrategyResult>& s, BudgetOrder order) {
  std::vector<std::size_t> idx(s.size());
  std::iota(idx.begin(), idx.end(), 0);
  if (order == BudgetOrder::tokens)
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
      return s[a].tokens_per_task < s[b].tokens_per_task;
    });
  return idx;
}

} // namespace

Ranking rank(const std::vector<Strategy>& strategies, const Options& o) {
  const std::size_t anchor = validate(strategies, o);
  const std::size_t n = strategies.size();
  Ranking r;
  const auto& first = *strategies.front().report;
  r.suite_name = first.suite.name;
  r.suite_version = first.suite.version;
  r.suite_sha256 = first.suite.sha256;
  r.anchor = o.anchor;
  r.order = o.order;
  r.seed = o.seed;
  r.bootstrap = o.bootstrap;

  std::vector<StrategyResult> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    describe_report(out[i], strategies[i]);
    out[i].anchor = i == anchor;
  }
  const detail::Table table = detail::build_table(strategies);
  r.tasks = static_cast<std::int64_t>(table.ids.size());
  tally(table, anchor, r, out);

  const detail::Patterns patterns = detail::build_patterns(table);
  std::vector<std::int64_t> weight(patterns.size(), 0);
  for (auto k : patterns.of_task)
    ++weight[k];
  const detail::Pooled all = detail::pooled(patterns, weight);
  auto groups = components(all.games);
  if (groups.size() > 1)
    throw Error(Exit::bad_input, "the comparison graph is not connected: " + group_list(groups, strategies) +
                                     " never played on a common task, so they share no Elo scale; rank "
                                     "reports that have tasks in common");
  const Fit fitted = detail::fit_pooled(all, false);
  r.prior = fitted.prior;
  r.converged = fitted.converged;
  for (std::size_t i = 0; i < n; ++i) {
    out[i].elo = elo(fitted.strength[i], fitted.strength[anchor]);
    out[i].delta_elo = out[i].elo - k_anchor_elo;
    if (out[i].tokens_per_task > 0)
      out[i].delta_elo_per_1k = out[i].delta_elo / (out[i].tokens_per_task / 1000);
    if (r.prior && out[i].lost == 0) r.unbeaten.push_back(out[i].name);
    if (r.prior && out[i].won == 0 && out[i].drawn == 0) r.winless.push_back(out[i].name);
  }

  const detail::PerTask pt = detail::per_task_elo(patterns, anchor);
  r.per_task_prior = pt.prior;
  r.converged = r.converged && pt.converged;
  for (std::size_t i = 0; i < n; ++i)
    per_task_view(table, pt, i, anchor, o.top_tasks, out[i]);

  const detail::Resamples boot = detail::bootstrap(patterns, anchor, o.bootstrap, o.seed);
  r.bootstrap_prior = boot.prior;
  r.converged = r.converged && boot.converged;
  const auto column = [&](std::size_t i, std::size_t minus) {
    std::vector<double> v(static_cast<std::size_t>(o.bootstrap));
    for (std::size_t b = 0; b < v.size(); ++b)
      v[b] = boot.elo[b * n + i] - (minus < n ? boot.elo[b * n + minus] : 0.0);
    return v;
  };
  for (std::size_t i = 0; i < n; ++i)
    out[i].elo_interval = interval_of(column(i, n));

  const auto order = budget_order(out, o.order);
  for (std::size_t k = 0; k < order.size(); ++k) {
    StrategyResult& cur = out[order[k]];
    if (k > 0) {
      const StrategyResult& prev = out[order[k - 1]];
      cur.step_gain = cur.elo - prev.elo;
      cur.step_interval = interval_of(column(order[k], order[k - 1]));
      const double more_tokens = cur.tokens_per_task - prev.tokens_per_task;
      if (more_tokens != 0) cur.marginal_per_1k = *cur.step_gain / (more_tokens / 1000);
    }
  }
  for (auto i : order)
    r.strategies.push_back(std::move(out[i]));
  decide(r);
  return r;
}

} // namespace gate::rank

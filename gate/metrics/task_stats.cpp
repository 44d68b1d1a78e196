#include <gate/metrics/summary.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include <gate/metrics/cost.hpp>

namespace gate::metrics {

namespace {

using results::Run;
using results::ToolCall;
using Trajectory = std::vector<ToolCall>;

bool same_call(const ToolCall& a, const ToolCall& b) {
  return a.name == b.name && a.arguments_sha256 == b.arguments_sha256;
}

bool same_trajectory(const Trajectory& a, const Trajectory& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_call);
}

// First step at which `s` leaves `modal`; a shorter sequence leaves at its
// own end. nullopt when they are equal.
std::optional<std::size_t> divergence(const Trajectory& s, const Trajectory& modal) {
  std::size_t common = std::min(s.size(), modal.size());
  for (std::size_t i = 0; i < common; ++i)
    if (!same_call(s[i], modal[i])) return i;
  if (s.size() == modal.size()) return std::nullopt;
  return common;
}

struct Distinct {
  const Trajectory* trajectory;
  std::size_t count;
};

// Distinct trajectories in order of first appearance, with their counts.
std::vector<Distinct> distinct_trajectories(const std::vector<const Run*>& runs) {
  std::vector<Distinct> out;
  for (const Run* r : runs) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Distinct& d) { return same_trajectory(*d.trajectory, r->tool_calls); });
    if (it == out.end())
      out.push_back({&r->tool_calls, 1});
    else
      ++it->count;
  }
  return out;
}

std::optional<int> first_divergence(const std::vector<Distinct>& distinct) {
  if (distinct.size() < 2) return std::nullopt;
  // Strictly greater keeps the earliest trajectory on ties.
  std::size_t modal = 0;
  for (std::size_t i = 1; i < distinct.size(); ++i)
    if (distinct[i].count > distinct[modal].count) modal = i;
  std::optional<std::size_t> first;
  for (std::size_t i = 0; i < distinct.size(); ++i) {
    if (i == modal) continue;
    auto d = divergence(*distinct[i].trajectory, *distinct[modal].trajectory);
    if (d && (!first || *d < *first)) first = d;
  }
  return first ? std::optional<int>(static_cast<int>(*first)) : std::nullopt;
}

double trajectory_similarity(const std::vector<const Run*>& runs) {
  if (runs.size() < 2) return 1.0;
  std::vector<std::vector<std::string>> sets;
  sets.reserve(runs.size());
  for (const Run* r : runs) {
    std::vector<std::string> set;
    set.reserve(r->tool_calls.size());
    for (const ToolCall& c : r->tool_calls)
      set.push_back(c.name + ":" + c.arguments_sha256);
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    sets.push_back(std::move(set));
  }
  double sum = 0;
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < sets.size(); ++i)
    for (std::size_t j = i + 1; j < sets.size(); ++j) {
      sum += jaccard_sorted(sets[i], sets[j]);
      ++pairs;
    }
  return sum / static_cast<double>(pairs);
}

// A key missing on one side differs; keys the rules ignore do not count.
bool routes_differ(const results::Route& a, const results::Route& b, const RouteRules& rules) {
  auto ia = a.begin(), ib = b.begin();
  while (ia != a.end() || ib != b.end()) {
    if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
      if (!rules.ignored(ia->first)) return true;
      ++ia;
    } else if (ia == a.end() || ib->first < ia->first) {
      if (!rules.ignored(ib->first)) return true;
      ++ib;
    } else {
      if (ia->second != ib->second && !rules.ignored(ia->first)) return true;
      ++ia;
      ++ib;
    }
  }
  return false;
}

// Keys whose value is not the same in every run; absence is a value of its own.
std::vector<std::string> route_diff(const std::vector<Run>& runs, const RouteRules& rules) {
  std::set<std::string> keys;
  for (const Run& r : runs)
    for (const auto& [k, v] : r.route)
      if (!rules.ignored(k)) keys.insert(k);
  std::vector<std::string> out;
  for (const std::string& k : keys) {
    auto first = runs.front().route.find(k);
    bool differs = std::any_of(runs.begin() + 1, runs.end(), [&](const Run& r) {
      auto it = r.route.find(k);
      bool has_first = first != runs.front().route.end();
      bool has_this = it != r.route.end();
      return has_first != has_this || (has_first && it->second != first->second);
    });
    if (differs) out.push_back(k);
  }
  return out;
}

std::vector<int> token_band_outliers(const std::vector<Run>& runs, double band_pct) {
  std::vector<double> totals;
  for (const Run& r : runs)
    if (r.usage_known) totals.push_back(static_cast<double>(r.prompt_tokens + r.completion_tokens));
  if (totals.empty()) return {};
  double mid = median(totals);
  double tolerance = band_pct / 100.0 * mid;
  std::vector<int> out;
  for (const Run& r : runs) {
    if (!r.usage_known) continue;
    double total = static_cast<double>(r.prompt_tokens + r.completion_tokens);
    if (std::fabs(total - mid) > tolerance) out.push_back(r.index);
  }
  return out;
}

} // namespace

TaskStats task_stats(const results::Task& t, const Options& o) {
  TaskStats s;
  std::vector<const Run*> ok;
  ok.reserve(t.runs.size());
  for (const Run& r : t.runs) {
    std::int64_t tokens = r.prompt_tokens + r.completion_tokens;
    s.prompt_tokens += r.prompt_tokens;
    s.completion_tokens += r.completion_tokens;
    (r.cache_hit ? s.cached_tokens : s.paid_tokens) += tokens;
    if (!r.usage_known) s.usage_missing = true;
    if (r.errored()) {
      ++s.errored;
      continue;
    }
    ok.push_back(&r);
    if (r.passed) ++s.c;
  }
  s.n = static_cast<std::int64_t>(ok.size());
  s.rate = s.n == 0 ? 0.0 : static_cast<double>(s.c) / static_cast<double>(s.n);
  s.pass_at_k = pass_at_k_curve(s.n, s.c);
  s.pass_hat_k = pass_hat_k_curve(s.n, s.c);
  s.mixed = s.c > 0 && s.c < s.n;
  s.outcome_consistent = !s.mixed;
  s.answer_consistent = std::all_of(
      ok.begin(), ok.end(), [&](const Run* r) { return r->answer_sha256 == ok.front()->answer_sha256; });
  s.has_answers = std::any_of(ok.begin(), ok.end(), [](const Run* r) { return !r->answer_sha256.empty(); });
  s.has_tool_calls = std::any_of(ok.begin(), ok.end(), [](const Run* r) { return !r->tool_calls.empty(); });
  std::vector<Distinct> distinct = distinct_trajectories(ok);
  s.trajectory_consistent = distinct.size() <= 1;
  s.first_divergence = first_divergence(distinct);
  if (s.has_tool_calls) s.trajectory_similarity = trajectory_similarity(ok);
  if (!t.runs.empty()) {
    const results::Route& route = t.runs.front().route;
    // Equal maps are the rule; only a difference needs the key-by-key look
    // that skips what is not compared.
    s.route_polluted = std::any_of(t.runs.begin() + 1, t.runs.end(), [&](const Run& r) {
      return r.route != route && routes_differ(route, r.route, o.routes);
    });
    if (s.route_polluted) s.route_diff = route_diff(t.runs, o.routes);
  }
  s.token_band_outliers = token_band_outliers(t.runs, o.token_band_pct);
  detail::task_cost(t, o, s);
  return s;
}

std::map<std::string, std::vector<std::string>> route_fields_by_run(const std::vector<results::Task>& tasks,
                                                                    const results::Route& shared,
                                                                    const std::set<std::string>& by_design) {
  constexpr auto max_index = static_cast<std::size_t>(k_max_run_index);
  struct Field {
    std::vector<std::optional<std::string>> at; // value per run index; "\x01" = absent
    bool consistent = true;
  };
  std::map<std::string, Field> fields;
  std::int64_t tasks_seen = 0;
  for (const results::Task& t : tasks) {
    if (t.runs.size() < 2) continue;
    ++tasks_seen;
    for (const Run& r : t.runs)
      for (const auto& [k, v] : r.route.empty() ? shared : r.route)
        if (results::compared_route_key(k)) fields.try_emplace(k);
  }
  // One task's runs cannot tell a field set per trial from one that
  // drifted, unless the harness says so.
  std::map<std::string, std::vector<std::string>> out;
  for (auto& [key, f] : fields) {
    if (tasks_seen < 2 && by_design.count(key) == 0) continue;
    for (const results::Task& t : tasks) {
      if (t.runs.size() < 2 || !f.consistent) continue;
      for (const Run& r : t.runs) {
        const results::Route& route = r.route.empty() ? shared : r.route;
        auto it = route.find(key);
        const std::string v = it == route.end() ? "\x01" : it->second;
        if (r.index < 0 || static_cast<std::size_t>(r.index) > max_index) {
          f.consistent = false;
          break;
        }
        auto i = static_cast<std::size_t>(r.index);
        if (f.at.size() <= i) f.at.resize(i + 1);
        if (!f.at[i])
          f.at[i] = v;
        else if (*f.at[i] != v) {
          f.consistent = false;
          break;
        }
      }
    }
    if (!f.consistent) continue;
    std::set<std::string> distinct;
    std::vector<std::string> values;
    for (const auto& v : f.at) {
      values.push_back(v ? (*v == "\x01" ? "(unset)" : *v) : "(no run)");
      if (v) distinct.insert(*v);
    }
    if (distinct.size() >= 2) out[key] = std::move(values);
  }
  return out;
}

} // namespace gate::metrics

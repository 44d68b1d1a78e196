#include <gate/metrics/summary.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include <gate/metrics/cost.hpp>

namespace gate::metrics {

namespace {

using results::Run;
using results::Task;

// Collects the success numbers of one set of tasks (the suite, a scenario,
// a difficulty) in one pass.
struct RateAccumulator {
  std::int64_t tasks = 0, runs = 0, passed = 0;
  bool single_runs = true; // every task has n <= 1: the tasks are the trials
  std::vector<double> rates;

  void add(const TaskStats& s) {
    if (s.n == 0) return;
    ++tasks;
    runs += s.n;
    passed += s.c;
    if (s.n > 1) single_runs = false;
    rates.push_back(s.rate);
  }

  RateSummary finish() const {
    RateSummary r;
    r.tasks = tasks;
    r.runs = runs;
    r.passed = passed;
    r.success_rate = runs == 0 ? 0.0 : static_cast<double>(passed) / static_cast<double>(runs);
    if (single_runs) {
      r.interval = wilson(static_cast<double>(passed), static_cast<double>(runs));
      r.interval_method = "wilson";
    } else {
      r.interval = task_mean_interval(rates);
      r.interval_method = "t over tasks";
    }
    return r;
  }
};

Latency latency_of(std::vector<double> values) {
  Latency l;
  l.count = static_cast<std::int64_t>(values.size());
  l.p50 = percentile_in_place(values, 50);
  l.p95 = percentile_in_place(values, 95);
  l.max = values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
  return l;
}

// Linear in the runs: each group counts, per run index, the tasks that
// passed there; a task is counted once per index even if it lists the index
// twice (the stamp holds the last task counted).
std::optional<double> group_completion(const std::vector<Task>& tasks) {
  std::unordered_map<std::string, std::vector<std::size_t>> groups;
  std::vector<std::string> order; // first appearance, for a deterministic sum
  // As many rounds as a task has runs, or up to the largest run index when
  // that is a harness's trial number (trials 0 and 2 of an interrupted task
  // are rounds 0 and 2); an index above k_max_run_index is malformed and
  // never sizes the vectors below.
  std::size_t rounds = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    rounds = std::max(rounds, tasks[i].runs.size());
    for (const Run& r : tasks[i].runs)
      if (r.index >= 0 && r.index <= k_max_run_index)
        rounds = std::max(rounds, static_cast<std::size_t>(r.index) + 1);
    if (tasks[i].group.empty()) continue;
    auto [it, fresh] = groups.try_emplace(tasks[i].group);
    if (fresh) order.push_back(tasks[i].group);
    it->second.push_back(i);
  }
  if (groups.empty()) return std::nullopt;
  if (rounds == 0) return 0.0;
  std::vector<std::size_t> passed(rounds, 0);
  std::vector<std::size_t> stamp(rounds, tasks.size());
  std::int64_t complete = 0;
  for (const std::string& name : order) {
    const std::vector<std::size_t>& members = groups[name];
    std::vector<std::size_t> touched;
    for (std::size_t i : members)
      for (const Run& r : tasks[i].runs) {
        if (r.index < 0 || static_cast<std::size_t>(r.index) >= rounds || !r.passed || r.errored()) continue;
        auto slot = static_cast<std::size_t>(r.index);
        if (stamp[slot] == i) continue;
        stamp[slot] = i;
        if (passed[slot] == 0) touched.push_back(slot);
        if (++passed[slot] == members.size()) ++complete;
      }
    for (std::size_t slot : touched) {
      passed[slot] = 0;
      stamp[slot] = tasks.size();
    }
  }
  return static_cast<double>(complete) / (static_cast<double>(groups.size()) * static_cast<double>(rounds));
}

} // namespace

SuiteStats suite_stats(const std::vector<Task>& tasks, const std::vector<TaskStats>& per_task,
                       const Options& o) {
  if (tasks.size() != per_task.size())
    throw std::invalid_argument("suite_stats: " + std::to_string(tasks.size()) + " tasks but " +
                                std::to_string(per_task.size()) + " task stats");
  SuiteStats s;
  RateAccumulator overall;
  std::map<std::string, RateAccumulator> by_scenario, by_difficulty;
  std::vector<std::int64_t> counts;
  for (const TaskStats& ts : per_task)
    if (ts.n > 0) counts.push_back(ts.n);
  const std::int64_t k_common = common_runs(counts);
  const auto K = static_cast<std::size_t>(k_common);
  std::vector<double> at_k_sum(K, 0.0), hat_k_sum(K, 0.0);
  double gap_sum = 0, similarity_sum = 0;
  std::int64_t gap_tasks = 0, mixed_tasks = 0, with_answers = 0, with_tool_calls = 0;
  std::int64_t answer_inconsistent = 0, trajectory_inconsistent = 0, runs_with_usage = 0, runs_with_route = 0;
  std::vector<double> latencies;

  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    const TaskStats& ts = per_task[i];
    overall.add(ts);
    by_scenario[t.scenario].add(ts);
    by_difficulty[t.difficulty].add(ts);

    auto n = static_cast<std::size_t>(ts.n);
    if (ts.pass_at_k.size() != n || ts.pass_hat_k.size() != n)
      throw std::invalid_argument("suite_stats: task " + t.id + " has pass@k for " +
                                  std::to_string(ts.pass_at_k.size()) +
                                  " values of k, not n = " + std::to_string(n));
    if (ts.n > 0 && n < K) ++s.pass_k_left_out;
    if (ts.n > 0 && n >= K) {
      ++s.pass_k_tasks;
      // A task with more runs than K counts through the unbiased estimator
      // at each k, not through its own longer curve.
      for (std::size_t k = 0; k < K; ++k) {
        at_k_sum[k] += ts.pass_at_k[k];
        hat_k_sum[k] += ts.pass_hat_k[k];
      }
      if (!ts.route_polluted || o.include_polluted) {
        ++gap_tasks;
        gap_sum += ts.pass_at_k[K - 1] - ts.pass_hat_k[K - 1];
        if (ts.mixed) ++mixed_tasks;
      }
    }
    if (ts.has_answers) {
      ++with_answers;
      if (!ts.answer_consistent) ++answer_inconsistent;
    }
    if (ts.has_tool_calls) {
      ++with_tool_calls;
      if (!ts.trajectory_consistent) ++trajectory_inconsistent;
      similarity_sum += *ts.trajectory_similarity; // present with tool calls
    }
    if (ts.first_divergence) ++s.first_divergence_histogram[*ts.first_divergence];
    s.token_band_outliers =
        s.token_band_outliers.value_or(0) + static_cast<std::int64_t>(ts.token_band_outliers.size());
    if (ts.route_polluted) s.polluted_tasks = s.polluted_tasks.value_or(0) + 1;
    s.prompt_tokens += ts.prompt_tokens;
    s.completion_tokens += ts.completion_tokens;
    s.cached_tokens += ts.cached_tokens;
    s.paid_tokens += ts.paid_tokens;

    for (const Run& r : t.runs) {
      ++s.total_runs;
      if (r.errored()) {
        ++s.errored_runs;
        ++s.errors_by_bucket[r.error];
      }
      if (!r.usage_known)
        ++s.runs_without_usage;
      else
        ++runs_with_usage;
      if (!r.route.empty() || !o.routes.shared.empty()) ++runs_with_route;
      if (r.cache_hit) ++s.cache_hits;
      if (timed_fresh(r)) latencies.push_back(r.latency_ms);
    }
  }

  s.overall = overall.finish();
  for (const auto& [key, acc] : by_scenario)
    s.by_scenario[key] = acc.finish();
  for (const auto& [key, acc] : by_difficulty)
    s.by_difficulty[key] = acc.finish();
  s.pass_at_k.resize(K);
  s.pass_hat_k.resize(K);
  for (std::size_t k = 0; k < K; ++k) {
    s.pass_at_k[k] = at_k_sum[k] / static_cast<double>(s.pass_k_tasks);
    s.pass_hat_k[k] = hat_k_sum[k] / static_cast<double>(s.pass_k_tasks);
  }
  if (gap_tasks > 0) {
    s.consistency_gap_pp = 100 * gap_sum / static_cast<double>(gap_tasks);
    s.mixed_share_pp = 100 * static_cast<double>(mixed_tasks) / static_cast<double>(gap_tasks);
  }
  if (with_answers > 0)
    s.answer_inconsistency_pp =
        100 * static_cast<double>(answer_inconsistent) / static_cast<double>(with_answers);
  if (with_tool_calls > 0) {
    s.trajectory_inconsistency_pp =
        100 * static_cast<double>(trajectory_inconsistent) / static_cast<double>(with_tool_calls);
    s.trajectory_similarity = similarity_sum / static_cast<double>(with_tool_calls);
  }
  if (runs_with_usage == 0)
    s.token_band_outliers.reset();
  else if (!s.token_band_outliers)
    s.token_band_outliers = 0;
  if (runs_with_route == 0)
    s.polluted_tasks.reset();
  else if (!s.polluted_tasks)
    s.polluted_tasks = 0;
  s.group_completion = group_completion(tasks);
  s.error_rate =
      s.total_runs == 0 ? 0.0 : static_cast<double>(s.errored_runs) / static_cast<double>(s.total_runs);
  s.tokens_per_task = tasks.empty() ? 0.0
                                    : static_cast<double>(s.prompt_tokens + s.completion_tokens) /
                                          static_cast<double>(tasks.size());
  s.call_latency = latency_of(std::move(latencies));
  s.run_latency = s.call_latency;
  detail::suite_cost(per_task, o, s);
  return s;
}

} // namespace gate::metrics

#pragma once

// Internal to gate_metrics: the cost fields of the task and suite stats
// (METRICS.md "Cost"), filled in by task_stats and suite_stats.

#include <gate/metrics/summary.hpp>

namespace gate::metrics::detail {

// TaskStats::priced, cost_usd and cached_cost_usd; needs s.n set.
void task_cost(const results::Task& t, const Options& o, TaskStats& s);
// SuiteStats::priced, cost_usd and cached_cost_usd from the tasks' stats.
void suite_cost(const std::vector<TaskStats>& per_task, const Options& o, SuiteStats& s);

} // namespace gate::metrics::detail

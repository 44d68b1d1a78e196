#include <gate/report/report.hpp>

#include <algorithm>

#include <gate/util/atomic_file.hpp>
#include <gate/util/parallel.hpp>

namespace gate::report {

void compute(Report& r, const metrics::Options& options) {
  metrics::Options o = options;
  r.options = {options.token_band_pct, options.include_polluted};
  o.routes.shared = r.runs_route.empty() ? r.route : r.runs_route;
  // Tasks are independent: a large report's are computed on every core.
  r.task_stats.assign(r.tasks.size(), {});
  const std::size_t parts = parts_for(r.tasks.size(), 5000);
  run_parallel(parts, [&](std::size_t p) {
    for (std::size_t i = r.tasks.size() * p / parts; i < r.tasks.size() * (p + 1) / parts; ++i)
      r.task_stats[i] = metrics::task_stats(r.tasks[i], o);
  });
  // A field that varies with the run index pollutes every task it is in;
  // only then is it worth asking whether it does so by design.
  const bool polluted = std::any_of(r.task_stats.begin(), r.task_stats.end(),
                                    [](const metrics::TaskStats& s) { return s.route_polluted; });
  if (polluted) {
    o.routes.by_run = metrics::route_fields_by_run(r.tasks, o.routes.shared, o.routes.by_design);
    if (!o.routes.by_run.empty())
      for (std::size_t i = 0; i < r.tasks.size(); ++i)
        if (r.task_stats[i].route_polluted) r.task_stats[i] = metrics::task_stats(r.tasks[i], o);
  }
  r.stats = metrics::suite_stats(r.tasks, r.task_stats, o);
  r.stats.route_by_run = o.routes.by_run;
}

void write(const Report& r, const std::filesystem::path& file) { write_file_atomically(file, to_json(r)); }

std::int64_t absorbed_rate_limits(const Report& r) {
  std::int64_t n = 0;
  for (const auto& task : r.tasks)
    for (const auto& run : task.runs)
      for (std::size_t i = 0; i + 1 < run.attempt_log.size(); ++i)
        n += run.attempt_log[i].status == 429 ? 1 : 0;
  return n;
}

} // namespace gate::report

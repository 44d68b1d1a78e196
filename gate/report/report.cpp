#include <gate/report/report.hpp>

#include <gate/util/atomic_file.hpp>
#include <gate/util/parallel.hpp>

namespace gate::report {

void compute(Report& r, const metrics::Options& o) {
  // Tasks are independent: a large report's are computed on every core.
  r.task_stats.assign(r.tasks.size(), {});
  const std::size_t parts = parts_for(r.tasks.size(), 5000);
  run_parallel(parts, [&](std::size_t p) {
    for (std::size_t i = r.tasks.size() * p / parts; i < r.tasks.size() * (p + 1) / parts; ++i)
      r.task_stats[i] = metrics::task_stats(r.tasks[i], o);
  });
  r.stats = metrics::suite_stats(r.tasks, r.task_stats, o);
}

void write(const Report& r, const std::filesystem::path& file) { write_file_atomically(file, to_json(r)); }

} // namespace gate::report

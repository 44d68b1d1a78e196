#include <gate/report/report.hpp>

#include <gate/util/atomic_file.hpp>

namespace gate::report {

void compute(Report& r, const metrics::Options& o) {
  r.task_stats.clear();
  r.task_stats.reserve(r.tasks.size());
  for (const auto& t : r.tasks)
    r.task_stats.push_back(metrics::task_stats(t, o));
  r.stats = metrics::suite_stats(r.tasks, r.task_stats, o);
}

void write(const Report& r, const std::filesystem::path& file) { write_file_atomically(file, to_json(r)); }

} // namespace gate::report

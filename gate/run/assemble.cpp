#include <gate/run/assemble.hpp>

#include <algorithm>

#include <gate/util/version.hpp>

namespace gate::run {

report::Report assemble(Outcome&& outcome, const suite::Suite& s, const config::Config& c,
                        const std::string& started_at, const std::string& finished_at) {
  report::Report r;
  r.gate_version = k_version;
  r.suite = {s.name, s.version, s.sha256};
  r.config = config::to_json(c);
  r.route = configured_route(c);
  r.started_at = started_at;
  r.finished_at = finished_at;
  r.complete = outcome.complete;
  r.incomplete_reason = outcome.incomplete_reason;
  r.not_made = outcome.not_made;
  r.tasks = std::move(outcome.tasks);
  std::sort(r.tasks.begin(), r.tasks.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  // From the report's own copy of the config, as a reader of the file
  // computes them: the numbers cannot differ between the run and a reread.
  report::compute(r, report::options_from_config(r.config, c.file.string()));
  return r;
}

} // namespace gate::run

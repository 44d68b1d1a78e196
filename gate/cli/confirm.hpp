#pragma once

#include <filesystem>

#include <gate/cli/run_steps.hpp>
#include <gate/compare/compare.hpp>
#include <gate/report/report.hpp>

namespace gate::cli {

struct ConfirmRequest {
  int runs = 0; // fresh runs per side per task; 0 = no confirmation
  std::int64_t max_calls = 200;
  bool from_flag = false; // --confirm on the command line (the replay-only command repeats it)
};

// gate check's confirmation (METRICS.md "Confirmation"): when `v` is in
// doubt, plans the runs (compare/confirm.hpp), makes them on both sides
// through the run's cache, and folds them into `v`. The baseline side sends
// each task's request as the cache recorded it; a task whose baseline
// request is not in the cache, or an agent task, is not confirmed.
// Returns 0, or 4 when replay-only could not make the runs (`v` then lists
// them and the command that records them). Throws Error(cannot_run) when a
// fresh call is needed and no client can be made (no key), or an upstream
// failure stops the runs.
int confirm(compare::Verdict& v, const report::Report& baseline, const report::Report& current,
            const RunResult& run, const ConfirmRequest& ask, bool quiet);

} // namespace gate::cli

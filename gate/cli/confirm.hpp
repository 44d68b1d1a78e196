#pragma once

#include <filesystem>

#include <gate/cli/run_steps.hpp>
#include <gate/compare/compare.hpp>
#include <gate/report/report.hpp>

namespace gate::cli {

struct ConfirmRequest {
  int runs = 0; // the fewest fresh runs per side per task; 0 = no confirmation
  std::int64_t max_calls = 200;
  // --confirm on the command line: the runs were asked for, so replay-only
  // without them is exit 4 (and the command that records them repeats the
  // flag). Without it (confirm.runs in gate.yaml, on by default) a check
  // that cannot call the model keeps its verdict in doubt instead.
  bool from_flag = false;
  // Also confirm a verdict whose only doubt is a flipped task (confirm.when:
  // flips, or --confirm): compare::needs_confirmation.
  bool flips = false;
};

// gate check's confirmation (METRICS.md "Confirmation"): when `v` is in
// doubt, plans the runs (compare/confirm.hpp), makes them on both sides
// through the run's cache, and folds them into `v`. The baseline side sends
// each task's request as the cache recorded it; a task whose baseline
// request is not in the cache, or an agent task, is not confirmed.
// Returns 0, or 4 when --confirm asked for runs replay-only could not make
// (`v` then lists them and the command that records them). Throws
// Error(cannot_run) when --confirm needs a fresh call and no client can be
// made (no key), or an upstream failure stops the runs. Fresh runs that
// errored make the verdict incomplete or unmeasured (compare/confirm.hpp).
int confirm(compare::Verdict& v, const report::Report& baseline, const report::Report& current,
            const RunResult& run, const ConfirmRequest& ask, bool quiet);

} // namespace gate::cli

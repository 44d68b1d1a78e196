#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gate/report/report.hpp>

// METRICS.md "Measured runs": an errored run (rate limit, quota, timeout,
// ...) is neither a pass nor a failure, so a report whose runs mostly
// errored says nothing about the agent. One policy for every command that
// judges or keeps a report: run, check, compare, baseline update, analyze.
namespace gate::report {

struct Measured {
  std::int64_t runs = 0;    // every run, errored ones included
  std::int64_t errored = 0; // runs with an error bucket
  std::int64_t measured() const { return runs - errored; }
  // Errored runs per bucket, the largest first (ties by name).
  std::vector<std::pair<std::string, std::int64_t>> buckets;
  std::string first_error; // "task t1 run 0: HTTP 429: …", redacted and cut; "" when none errored
};

Measured measured(const Report& r);

// False when nothing was measured or the errored share is above
// `max_errored_pct` percent: no number of the report may then be judged.
bool can_judge(const Measured& m, double max_errored_pct);

// "132 of 132 runs errored (rate_limit 132); first: task t1 run 0: HTTP 429: …"
std::string errors_text(const Measured& m);

// errors_text, then ", above <limit> 5.0%": why a report cannot be judged,
// for the commands that refuse one (run, analyze, baseline update).
std::string over_limit_text(const Measured& m, const std::string& limit, double max_errored_pct);

// "78.0%", or "n/a (0 of 132 runs measured)" when no run was measured.
std::string success_text(const Report& r, const Measured& m);

// "12.5pp", or "n/a" when no task could have a gap (none measured k times
// on one route).
std::string gap_text(const Report& r);

} // namespace gate::report

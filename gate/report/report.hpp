#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gate/metrics/summary.hpp>
#include <gate/results/results.hpp>

namespace gate::report {

inline constexpr const char* k_schema = "gate.report/1";

// The suite name and version `gate analyze` gives logs that name none.
inline constexpr const char* k_unnamed_suite = "external";
inline constexpr const char* k_unnamed_version = "unversioned";

struct SuiteInfo {
  std::string name, version, sha256;
};

// `gate run` rerun after an interruption: how many of its runs it replayed
// that the interrupted run (whose incomplete report it replaced) had already
// finished, so a reader can tell a resumed report from a fresh one.
struct Resumed {
  std::string from_started_at; // the interrupted run's started_at
  std::int64_t runs = 0;
};

// The metric options of a report's config its numbers depend on
// ("token_band_pct", "include_polluted"), typed: set by compute(), so that
// what renders a report never parses `config` for them.
struct MetricOptions {
  double token_band_pct = metrics::Options{}.token_band_pct;
  bool include_polluted = metrics::Options{}.include_polluted;
};

// Everything `gate run` (or `gate analyze`) learned: the runs and every
// number computed from them. Documented field by field in
// docs/report-schema.md.
struct Report {
  std::string schema = k_schema;
  std::string gate_version;
  SuiteInfo suite;
  boost::json::value config; // effective config (no secrets: key env var name and alias only)
  results::Route route;      // the configured route
  // The route of every run whose own is empty, as read from a file that
  // writes each run's route only where it differs ("runs_route", else
  // "route"); empty = `route`. Use route_of().
  results::Route runs_route;
  std::string started_at, finished_at; // ISO 8601 UTC; the only fields that differ between identical runs
  bool complete = true;                // false: interrupted or aborted; partial
  std::string incomplete_reason;
  // Runs of the plan (tasks × runs) that were never made: the run stopped
  // before them (no key, an aborted upstream, a signal). Not measured runs,
  // not failures; written only when > 0.
  std::int64_t not_made = 0;
  std::optional<Resumed> resumed;             // absent: not a resumed run
  std::vector<results::Prompt> prompts;       // gate.yaml's prompt templates; empty: none (not written)
  std::vector<results::Task> tasks;           // sorted by id
  std::vector<metrics::TaskStats> task_stats; // parallel to tasks
  metrics::SuiteStats stats;
  MetricOptions options; // what task_stats and stats were computed with
};

// The route a run went through: its own, or the report's shared one.
inline const results::Route& route_of(const Report& r, const results::Run& run) {
  if (!run.route.empty()) return run.route;
  return r.runs_route.empty() ? r.route : r.runs_route;
}

// Serializes with stable key order, one task per line, so a baseline's git
// diff is reviewable. Doubles in shortest round-trip form.
std::string to_json(const Report& r);

struct ReadOptions {
  // false: a passed run keeps neither its check results (all passed) nor its
  // answer text; what a comparison needs of it (outcome, hashes, tokens,
  // latency, route) stays. Validation is the same. For `gate compare` without
  // the HTML report, whose memory is then mostly the failing runs'.
  bool details = true;
  // true: stop at "tasks", keeping the header fields only (no tasks, no
  // stats): what a caller needs to know of a large file, such as whether it
  // is complete, without reading its runs. The header is checked as fully.
  bool header_only = false;
};

// Parses and validates a report or baseline; truncated, unknown schema,
// NaN, overflowing numbers, duplicate keys, missing fields → Error(bad_input)
// naming `where`.
Report from_json(std::string_view text, const std::string& where, const ReadOptions& o = {});
Report read(const std::filesystem::path& file, const ReadOptions& o = {});
void write(const Report& r, const std::filesystem::path& file); // atomically

// True when `file` is a report this gate reads whose header says it is
// complete; false for anything else (incomplete, foreign, damaged,
// unreadable). Reads the header only, however large the file.
bool complete_on_disk(const std::filesystem::path& file);

// Recomputes task_stats and stats from tasks (used by run, analyze, merge)
// and keeps the options they were computed with.
void compute(Report& r, const metrics::Options& o);

// The 429 answers a retry got past: attempt_log entries with status 429
// that another attempt of the same call followed, over every run. What a
// run absorbed of a provider's rate limiting instead of losing runs to it.
std::int64_t absorbed_rate_limits(const Report& r);

// The metric options a report was computed with: "token_band_pct" (a number
// >= 0), "include_polluted" (a bool) and "pricing" (with "judge.model",
// whose calls it prices) from the config object when present, the
// defaults otherwise. A wrong type is Error(bad_input) naming
// `where`.
metrics::Options options_from_config(const boost::json::value& config, const std::string& where);

// gate.yaml's `pricing` as JSON ({"<model>": {"prompt": USD per million
// tokens, "completion": ...}}; null = none) as metrics price it: for
// options_from_config and the runner's `cost` check. Anything else is
// Error(bad_input) naming `where`.
metrics::Pricing pricing_from_json(const boost::json::value& pricing, const std::string& where);

} // namespace gate::report

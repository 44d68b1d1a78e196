#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

// The benchmark data generators behind gate-bench-gen (bench/README.md).
namespace gate::bench {

struct CoreOptions {
  std::size_t tasks = 20'000;
  int runs = 5;        // k, written to gate.yaml
  int concurrency = 2; // written to gate.yaml
  int threads = 2;     // writers of cache entries
};

struct CoreSummary {
  std::size_t tasks = 0, entries = 0;
  std::uint64_t cache_bytes = 0;
};

// Writes into `dir` (which must not hold a gate.yaml yet): a suite
// (suite/metadata.json, suite/versions/v1/cases.jsonl), a gate.yaml that
// replays it in replay-only mode, and a full cache (cache/) holding every
// response `gate run` will look up. The config and suite are read back with
// gate's own loaders and every key is made with run::prepare and
// cache::make_key, so the generator cannot disagree with `gate run`.
CoreSummary write_core(const std::filesystem::path& dir, const CoreOptions& o);

struct ReportsSummary {
  std::size_t baseline_tasks = 0, current_tasks = 0;
  std::uint64_t baseline_bytes = 0, current_bytes = 0;
  std::size_t changed_tasks = 0; // tasks whose pass count differs between the two
};

// Writes <dir>/baseline.json and <dir>/current.json: gate.report/1 reports
// of the same `tasks`-task suite at k = `runs`, as if run against
// "bench-model" and "bench-model-2" (so the routes and every request
// fingerprint differ). The current model answers 4% of tasks differently,
// a little worse on average, is ~5% slower and a little more verbose.
ReportsSummary write_reports(const std::filesystem::path& dir, std::size_t tasks, int runs);

} // namespace gate::bench

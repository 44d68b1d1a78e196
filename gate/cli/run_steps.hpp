#pragma once

#include <filesystem>
#include <optional>

#include <gate/cli/common.hpp>
#include <gate/config/config.hpp>
#include <gate/report/report.hpp>
#include <gate/suite/suite.hpp>

namespace gate::cli {

// `gate run`'s options and pipeline, shared with `gate check`.
void add_run_options(po::options_description& d);

struct RunResult {
  int code = 0; // 0, or the exit code that ends the command (3, 4, 130, 143)
  // The run finished, but too many of its runs errored to judge it (code
  // 3): the report is whole, and a comparison of it says "could not
  // measure" in every verdict form.
  bool unmeasured = false;
  config::Config config;
  std::optional<report::Report> report; // absent when nothing was written (replay-only misses)
  // The suite as run (prompts rendered), kept until the process exits; a
  // confirmation sends its cases again. Null before the suite was loaded.
  const suite::Suite* suite = nullptr;
  // With --trusted-cache: the warning that lists the replayed answers the
  // trusted cache does not hold, by task ("" when there are none).
  std::string recorded_outside_ci;
  // The config pins an older suite version than the suite's latest: says
  // so ("" when it does not), first on stderr and in the verdict's warnings.
  std::string suite_note;
  // With cache.remote: why it was turned off mid-run ("" when it was not).
  std::string remote_failure;
  // --trusted-cache, for the confirmation runs that may follow.
  std::optional<std::filesystem::path> trusted_cache;
};

// Loads config and suite, runs, writes report.json/md/xml and prints the
// one-line summary (--quiet silences progress only).
RunResult run_from_options(const po::variables_map& vm);

} // namespace gate::cli

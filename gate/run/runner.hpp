#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/config/config.hpp>
#include <gate/model/api.hpp>
#include <gate/results/results.hpp>
#include <gate/run/request.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/environment.hpp>
#include <gate/util/error.hpp>

namespace gate::run {

// One request of one run: a replay-only miss (what was not recorded, for the
// exit-4 listing), or a hit checked against a trusted cache.
struct Miss {
  std::string task_id;
  int run = 0;
  std::string key;
  std::string remote; // a hit the remote served (replay::Unvouched::remote)
};

struct Outcome {
  std::vector<results::Task> tasks; // in case order, runs in replica order
  std::vector<Miss> misses;         // replay-only: requests not in the cache
  // With a trusted cache (Inputs::trusted), sorted like `misses`: replayed
  // entries the trusted cache holds with other bytes (the branch rewrote
  // them), and replayed entries it does not hold at all (recorded outside
  // CI: only a fresh call could check them).
  std::vector<Miss> tampered;
  std::vector<Miss> untrusted;
  std::vector<std::string> warnings;
  std::vector<std::string> kept_workdirs; // --keep-workdirs: "task <id> run <n>: <path>", sorted
  bool complete = true;
  std::string incomplete_reason;
  std::int64_t not_made = 0; // runs of the plan never made (they are not in `tasks`)
  // Set when the run was aborted because every further call would fail the
  // same way (auth, unknown model, unreachable upstream): exit 3.
  std::string fatal;
  Exit fatal_code = Exit::cannot_run;
};

// Progress callbacks; called from worker threads.
struct Progress {
  std::function<void(std::size_t total)> start;
  std::function<void(bool cache_hit, bool errored)> run_done;
  std::function<void()> finish;
};

struct Inputs {
  const suite::Suite* suite = nullptr;
  std::vector<const suite::Case*> cases; // the selected cases
  const config::Config* config = nullptr;
  cache::Store* store = nullptr; // null when cache mode is off
  // `--trusted-cache`: the cache as the base branch has it. Every hit in
  // `store` is compared byte for byte with this one's entry of the same key.
  const cache::Store* trusted = nullptr;
  // Makes (once, lazily) the client for fresh calls, so that a replay whose
  // every response is cached needs no key. May throw Error(cannot_run).
  std::function<model::ModelClient&()> client;
  const std::atomic<bool>* stop = nullptr; // set by a signal: finish the runs in flight, start no more
  // Agent cases: where work copies go ("" = the system temp dir) and
  // whether they stay after the checks.
  std::filesystem::path workdir_root;
  bool keep_workdirs = false;
  // Confirmation runs (cli/confirm.cpp): replica indexes start here rather
  // than at 0, so fresh runs never replay the runs that chose them; and,
  // when not empty, requests[i] is sent for cases[i] instead of the request
  // the case makes (a baseline's request, sent again from the cache).
  int first_replica = 0;
  std::vector<PreparedRequest> requests;
  // gate's environment (cli read it at start-up): agent commands get theirs
  // made from it, and the tap's proxy its key. Needed when a case is an agent's.
  const Environment* env = nullptr;
};

// Runs every selected case `runs` times on `concurrency` workers. Agent
// cases (kind "agent") run their command through one agent::Tap for the
// whole execute(); a replay-only miss inside an agent's scope is listed in
// `misses` like any other. Results
// are in a fixed order whatever the concurrency, so two runs of the same
// inputs give the same report.
Outcome execute(const Inputs& in, const Progress& progress);

// The route this configuration sends runs through (METRICS.md "Route
// hygiene"). Never holds the key.
results::Route configured_route(const config::Config& c);

// Normalization used for answer consistency: trimmed, runs of whitespace
// collapsed to one space.
std::string normalize_answer(std::string_view answer);

} // namespace gate::run

#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <gate/agent/tap.hpp>
#include <gate/config/config.hpp>
#include <gate/results/results.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/environment.hpp>

namespace gate::agent {

// The dummy key agents get instead of the real one (the proxy adds that).
inline constexpr std::string_view k_dummy_key = "gate-dummy-key";

// The variables holding a secret gate knows of: model.api_key_env (the
// model key) and cache.remote_auth_env (the shared cache's token, with which
// code under test could PUT forged entries). The one list child_env strips.
// GITHUB_TOKEN is not on it: gate reads it only in `gate comment`, which
// starts no child.
std::vector<std::string> secret_env_names(const config::Config& cfg);

// The environment of a program gate starts for a suite (an agent, a script
// check, the importer's python runner, which is a script check): gate's own
// (`parent`), sorted, minus every variable named by secret_env_names, any
// other whose value contains one of their values, OPENAI_API_KEY and
// ANTHROPIC_API_KEY, and minus the
// names `set` gives, plus `set` ("NAME=value") and OPENAI_API_KEY and
// ANTHROPIC_API_KEY = the dummy key.
std::vector<std::string> child_env(const Environment& parent, const config::Config& cfg,
                                   const std::vector<std::string>& set);

// argv with argv[0] resolved as an agent command's: a relative path with a
// '/' from `suite_dir`, a bare name in `path` (PATH's value), else next to
// the gate binary, else left as is (the spawn then says it is not found).
std::vector<std::string> resolve_command(std::vector<std::string> argv,
                                         const std::filesystem::path& suite_dir, const std::string& path);

// The agent's environment: gate's own (`parent`), sorted, minus every
// variable that holds the real key (the one named by model.api_key_env,
// any other whose value contains that key, OPENAI_API_KEY and
// ANTHROPIC_API_KEY) and minus the variables set here: OPENAI_BASE_URL and
// ANTHROPIC_BASE_URL = `base_url`, OPENAI_API_KEY and ANTHROPIC_API_KEY =
// the dummy key, GATE_TASK_ID, GATE_RUN, GATE_SEED.
std::vector<std::string> agent_env(const Environment& parent, const config::Config& cfg,
                                   const std::string& base_url, const std::string& task_id, int run,
                                   const std::string& seed);

// GATE_SEED of a run: model.seed (0 when unset) plus the run index.
std::string run_seed(const config::Config& cfg, int run);

struct Job {
  const suite::Suite* suite = nullptr;
  const suite::Case* task = nullptr;
  int run = 0;
  const config::Config* config = nullptr;
  Tap* tap = nullptr;
  std::filesystem::path workdir_root; // "" = the system temp dir
  bool keep_workdir = false;
  const std::atomic<bool>* stop = nullptr;
  const Environment* env = nullptr; // gate's environment, which the agent's is made from
};

struct JobResult {
  std::vector<std::string> missing_keys; // replay-only misses seen by the proxy in this run's scope
  // Hits the trusted cache (--trusted-cache) does not hold, or holds otherwise.
  std::vector<replay::Unvouched> untrusted, tampered;
  std::string record_error;           // an answer of this run could not be recorded
  std::filesystem::path kept_workdir; // set when the work copy was kept
  bool interrupted = false;           // ended early because `stop` was set: not a result
};

// One task × run of an agent case: copies the fixture, runs the command
// against the tap, evaluates the checks and fills `out` (checks, passed,
// error bucket `agent` for a command that could not start or timed out,
// tool calls, answer_sha256 = the final state hash, agent fields). The
// work copy is removed unless `keep_workdir`. Never throws.
JobResult run_job(const Job& job, results::Run& out);

} // namespace gate::agent

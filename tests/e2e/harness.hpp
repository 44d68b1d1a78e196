#pragma once

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include <tests/support/skip.hpp>
#include <vector>

#include <tests/support/temp_dir.hpp>

// Helpers for end-to-end tests: they run the real `gate` binary as a child
// process and look at its exit code, output and files.
namespace gate::e2e {

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the gate binary with `args` in `cwd`. The child's environment is the
// test's, minus CI and API key variables, plus `env` (a value of "" unsets).
Result run_gate(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                const std::map<std::string, std::string>& env = {});

// A gate process started in the background; finish() waits for it.
struct Child {
  int pid = -1;
  int out_fd = -1, err_fd = -1;
};
Child spawn_gate(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                 const std::map<std::string, std::string>& env = {});
Result finish(Child& child);

// A shell command (sh -c) in `dir`, stdout and stderr together in `out`.
// GitHub's variables are unset so that a gate it runs (a pre-push hook's)
// never writes to a real step summary.
Result sh(const std::filesystem::path& dir, const std::string& command);

// A scratch directory, removed at destruction.
using gate::testing::TempDir;

// The gate binary under test: $GATE_TEST_BINARY when set (.ci/run points it
// at the sanitizer build, so these tests are compiled once), else the one
// built with the tests.
const std::string& gate_binary();
std::filesystem::path source_dir();
std::string slurp(const std::filesystem::path& p);
void spit(const std::filesystem::path& p, const std::string& text);
boost::json::value read_json(const std::filesystem::path& p);

// Every file below `dir` (recursively), for secret scans.
std::vector<std::filesystem::path> files_below(const std::filesystem::path& dir);

// Rewrites one `key: value` line of a flat YAML file such as the demo's
// gate.yaml; throws when the key is not there.
void set_yaml(const std::filesystem::path& file, const std::string& key, const std::string& value);

// True when no file below `dir` and not `printed` holds `canary`, its last
// 8 characters, or the base64 of its first 9 ("sk-canary" → "c2stY2FuYXJ5").
// Names the first file that does (on stderr).
bool no_canary_in(const std::filesystem::path& dir, const std::string& printed, const std::string& canary);

// What a pull request's author can do to a committed cache entry by hand:
// replace `from` with `to` in its JSON line and recompute the checksum
// (cache/entry.hpp: sha256 of magic "\n" json "\n"). Throws when `from` is
// not in the line.
void rewrite_answer(const std::filesystem::path& entry, const std::string& from, const std::string& to);

// The parts of a report that must not depend on how it was produced (a
// record and its replay agree on them): every task's runs without timing,
// cache and attempt fields (a fresh call records its attempts; a replay
// made none), and without the task's stats.
boost::json::array outcome_view(const boost::json::value& report);

// Polls `done` every 20 ms for at most `limit`; its last answer. A test that
// waits for a child's progress fails with the child's output when the child
// ended early, instead of hanging.
bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(60));

// Copies the demo (suite, cache, config) into `dir` and returns the config path.
std::filesystem::path copy_demo(const std::filesystem::path& dir);

} // namespace gate::e2e

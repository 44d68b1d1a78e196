#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

namespace gate::agent {

// Output kept per stream; the rest is dropped and a marker appended.
inline constexpr std::size_t k_output_cap = 64 * 1024;
inline constexpr std::string_view k_truncated_marker = "\n[gate: output truncated at 64 KiB]\n";

struct ProcessSpec {
  std::vector<std::string> argv; // argv[0] is looked up in PATH when it has no '/'
  std::filesystem::path cwd;
  std::vector<std::string> env; // "NAME=value", the whole environment
  std::string stdin_text;       // written, then stdin is closed
  double timeout_s = 60;
  double kill_grace_s = 2;                 // SIGTERM, then SIGKILL after this long
  const std::atomic<bool>* stop = nullptr; // set: end the group as on a timeout
};

struct ProcessResult {
  bool started = false;
  std::string start_error; // why it could not be started (not found, not executable, ...)
  int exit_code = -1;      // -1 when it ended by a signal
  int signal = 0;
  bool timed_out = false;
  bool stopped = false; // ended because `stop` was set
  std::string out, err; // capped at k_output_cap, then the marker
  bool out_truncated = false, err_truncated = false;
};

// Runs argv in its own process group with cwd and env as given (posix_spawn,
// no shell). At the timeout the whole group gets SIGTERM, then SIGKILL
// after the grace period; when the command exits the group is killed too,
// so nothing it started outlives it. Processes that left the group
// (setsid) are followed through /proc and signalled with it (ProcessTree);
// with gate a child subreaper, as cli makes it, orphans are caught and
// reaped too. Never throws for what the command
// does; a command that cannot be started comes back with started = false.
ProcessResult run_process(const ProcessSpec& spec);

} // namespace gate::agent

#pragma once

#include <map>
#include <mutex>
#include <sys/types.h>

namespace gate::agent {

// Every process a command started, found through /proc while it runs, so
// that one that left the group (setsid) ends with the command too. When gate
// is a child subreaper (cli sets PR_SET_CHILD_SUBREAPER for the whole
// process), an orphan of any command becomes gate's child instead of init's:
// then the orphans no running command has claimed are taken as well, which
// catches a daemon that detached between two looks, and gate reaps what it
// kills. A process is known with its start time, so a pid the kernel has
// reused for a stranger is never signalled.
class ProcessTree {
public:
  // Hold this while spawning a command and constructing its tree, so that
  // another command's sweep never takes the new leader for an orphan.
  static std::unique_lock<std::mutex> hold_spawns();

  ProcessTree(pid_t leader, const std::unique_lock<std::mutex>& held);
  ~ProcessTree();
  ProcessTree(const ProcessTree&) = delete;
  ProcessTree& operator=(const ProcessTree&) = delete;

  // Adds the descendants of the leader and of every process already known.
  void refresh();
  // Sends `sig` to every known process still running, the leader aside
  // (its group is signalled by the caller).
  void signal_all(int sig);
  // Once the leader has exited: SIGKILLs everything known and every
  // unclaimed orphan, again until none is left (a few seconds at most),
  // reaping those whose parent gate has become.
  void kill_all();

private:
  pid_t leader_;
  std::map<pid_t, unsigned long long> known_; // pid → start time (clock ticks after boot)
};

} // namespace gate::agent

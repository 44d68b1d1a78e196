#pragma once

#include <csignal>
#include <fstream>
#include <string>
#include <sys/types.h>
#include <unistd.h>

namespace gate::test {

// A pid that no longer runs: gone, or a zombie waiting for its parent.
inline bool process_stopped(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const std::size_t close = line.rfind(')');
  return close == std::string::npos || (close + 2 < line.size() && line[close + 2] == 'Z');
}

// SIGKILL is delivered asynchronously: waits until the process is gone,
// bounded (10 s) but without a deadline a test would assert on.
inline bool wait_until_stopped(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    if (process_stopped(pid)) return true;
    ::usleep(10000);
  }
  return false;
}

} // namespace gate::test

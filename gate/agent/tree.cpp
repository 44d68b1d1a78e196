#include <gate/agent/tree.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gate/util/fd.hpp>

namespace gate::agent {

namespace {

// What /proc/<pid>/stat says about one process.
struct Proc {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';
  unsigned long long start = 0;
};

bool read_proc(pid_t pid, Proc& p) {
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const Fd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return false;
  char buf[1024];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return false;
  buf[n] = '\0';
  // The name in parentheses may hold anything, ')' included: the fields
  // start after the last one.
  const char* s = std::strrchr(buf, ')');
  if (s == nullptr || s[1] != ' ') return false;
  p.pid = pid;
  p.state = s[2];
  char* end = nullptr;
  const char* at = s + 3;
  for (int field = 4; field <= 22; ++field) { // 4 ppid … 22 starttime
    const unsigned long long v = std::strtoull(at, &end, 10);
    if (end == at) return false;
    if (field == 4) p.ppid = static_cast<pid_t>(v);
    if (field == 22) p.start = v;
    at = end;
  }
  return true;
}

// Every process the system shows. The kernel's per-task "children" lists
// are not always built in (CONFIG_PROC_CHILDREN), so the whole table is read.
std::vector<Proc> process_table() {
  std::vector<Proc> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    Proc p;
    if (pid > 0 && *end == '\0' && read_proc(static_cast<pid_t>(pid), p)) out.push_back(p);
  }
  ::closedir(dir);
  return out;
}

bool subreaper() {
  int on = 0;
  return ::prctl(PR_GET_CHILD_SUBREAPER, &on) == 0 && on != 0;
}

// The pids some command's tree owns, across all commands running at once.
// A multiset, so that a tree dropping a pid the kernel has since given to
// another command's process leaves that one's claim in place.
std::mutex g_mutex;
std::multiset<pid_t> g_owned;

void disown(pid_t pid) {
  if (const auto it = g_owned.find(pid); it != g_owned.end()) g_owned.erase(it);
}

} // namespace

std::unique_lock<std::mutex> ProcessTree::hold_spawns() { return std::unique_lock(g_mutex); }

ProcessTree::ProcessTree(pid_t leader, const std::unique_lock<std::mutex>&) : leader_(leader) {
  g_owned.insert(leader);
}

ProcessTree::~ProcessTree() {
  const std::lock_guard lock(g_mutex);
  disown(leader_);
  for (const auto& [pid, start] : known_)
    disown(pid);
}

void ProcessTree::refresh() {
  const auto table = process_table();
  const std::lock_guard lock(g_mutex);
  const pid_t self = ::getpid();
  const bool reaper = subreaper();
  for (bool grew = true; grew;) {
    grew = false;
    for (const Proc& p : table) {
      if (p.pid == leader_ || known_.count(p.pid) != 0) continue;
      const auto parent = known_.find(p.ppid);
      const bool ours = p.ppid == leader_ || (parent != known_.end());
      // An orphan handed to gate that no command owns came from one of
      // them; after a reaping subreaper only (without one it is init's).
      const bool stray = reaper && p.ppid == self && g_owned.count(p.pid) == 0;
      if (ours || stray) {
        known_.emplace(p.pid, p.start);
        g_owned.insert(p.pid);
        grew = true;
      }
    }
  }
}

void ProcessTree::signal_all(int sig) {
  for (const auto& [pid, start] : known_) {
    Proc p;
    if (read_proc(pid, p) && p.start == start && p.state != 'Z') ::kill(pid, sig);
  }
}

void ProcessTree::kill_all() {
  const pid_t self = ::getpid();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    refresh();
    bool alive = false;
    for (auto it = known_.begin(); it != known_.end();) {
      Proc p;
      if (!read_proc(it->first, p) || p.start != it->second) {
        {
          const std::lock_guard lock(g_mutex);
          disown(it->first);
        }
        it = known_.erase(it); // gone (and reaped by someone)
        continue;
      }
      if (p.state != 'Z') {
        ::kill(it->first, SIGKILL);
        alive = true;
      } else if (p.ppid == self) {
        ::waitpid(it->first, nullptr, WNOHANG);
      }
      ++it;
    }
    // A zombie whose parent is another process is dead; it is not ours to reap.
    bool waiting = alive;
    for (const auto& [pid, start] : known_) {
      Proc p;
      if (read_proc(pid, p) && p.start == start && p.ppid == self) waiting = true;
    }
    if (!waiting || std::chrono::steady_clock::now() > deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

} // namespace gate::agent

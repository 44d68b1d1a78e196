#include <gate/agent/process.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gate/agent/tree.hpp>

namespace gate::agent {

namespace {

using Clock = std::chrono::steady_clock;

struct Pipe {
  int r = -1, w = -1;
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    r = fds[0];
    w = fds[1];
    return true;
  }
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Appends what a pipe has now; false at EOF (or an error).
bool drain(int fd, std::string& to, bool& truncated) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      std::size_t room = to.size() < k_output_cap ? k_output_cap - to.size() : 0;
      to.append(buf, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
      if (static_cast<std::size_t>(n) > room) truncated = true;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

// How often the command's process tree is looked at while it runs: a
// process that leaves the group is seen within this long.
constexpr double k_tree_interval_s = 0.05;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

} // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult res;
  if (spec.argv.empty()) {
    res.start_error = "empty command";
    return res;
  }
  Pipe in, out, err;
  if (!in.open() || !out.open() || !err.open()) {
    res.start_error = std::string("cannot create pipes: ") + std::strerror(errno);
    for (int* fd : {&in.r, &in.w, &out.r, &out.w, &err.r, &err.w})
      close_fd(*fd);
    return res;
  }

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in.r, 0);
  posix_spawn_file_actions_adddup2(&fa, out.w, 1);
  posix_spawn_file_actions_adddup2(&fa, err.w, 2);
  posix_spawn_file_actions_addchdir_np(&fa, spec.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so a timeout can end everything it started; and
  // signal dispositions and mask as a fresh program expects, whatever gate
  // ignores or blocks itself (SIGPIPE in particular).
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : spec.env)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  pid_t pid = -1;
  std::optional<ProcessTree> tree;
  int rc = 0;
  {
    const auto held = ProcessTree::hold_spawns();
    rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
    if (rc == 0) tree.emplace(pid, held);
  }
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close_fd(in.r);
  close_fd(out.w);
  close_fd(err.w);
  if (rc != 0) {
    res.start_error = "cannot start " + spec.argv[0] + ": " + std::strerror(rc);
    close_fd(in.w);
    close_fd(out.r);
    close_fd(err.r);
    return res;
  }
  res.started = true;
  for (int fd : {in.w, out.r, err.r})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::size_t written = 0;
  if (spec.stdin_text.empty()) close_fd(in.w);

  const auto started = Clock::now();
  Clock::time_point term_at{}, exited_at{}, looked_at{};
  bool term_sent = false, kill_sent = false, exited = false;
  // The leader is waited for with WNOWAIT: until it is reaped its pid (the
  // group id) cannot be reused, so killing the group never hits a stranger.
  for (;;) {
    if (!exited) {
      siginfo_t si{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          si.si_pid == pid) {
        exited = true;
        exited_at = Clock::now();
        ::kill(-pid, SIGKILL); // what it left running, in its group or not
        tree->kill_all();
      }
    }
    if (!exited && seconds_since(looked_at) >= k_tree_interval_s) {
      tree->refresh();
      looked_at = Clock::now();
    }
    const bool stop = spec.stop != nullptr && spec.stop->load();
    if (!exited && !term_sent && (seconds_since(started) >= spec.timeout_s || stop)) {
      res.timed_out = !stop;
      res.stopped = stop;
      ::kill(-pid, SIGTERM);
      tree->signal_all(SIGTERM);
      term_sent = true;
      term_at = Clock::now();
    }
    if (!exited && term_sent && !kill_sent && seconds_since(term_at) >= spec.kill_grace_s) {
      ::kill(-pid, SIGKILL);
      tree->signal_all(SIGKILL);
      kill_sent = true;
    }
    // After the exit, output still in the pipes is read; a writer that
    // escaped the group (setsid) cannot hold gate for longer than a second.
    if ((out.r < 0 && err.r < 0 && exited) || (exited && seconds_since(exited_at) > 1.0)) break;

    pollfd fds[3];
    nfds_t n = 0;
    if (out.r >= 0) fds[n++] = {out.r, POLLIN, 0};
    if (err.r >= 0) fds[n++] = {err.r, POLLIN, 0};
    if (in.w >= 0) fds[n++] = {in.w, POLLOUT, 0};
    ::poll(fds, n, 20);
    if (out.r >= 0 && !drain(out.r, res.out, res.out_truncated)) close_fd(out.r);
    if (err.r >= 0 && !drain(err.r, res.err, res.err_truncated)) close_fd(err.r);
    if (in.w >= 0) {
      ssize_t w = ::write(in.w, spec.stdin_text.data() + written, spec.stdin_text.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == spec.stdin_text.size()) close_fd(in.w);
    }
  }
  close_fd(in.w);
  close_fd(out.r);
  close_fd(err.r);
  // Anything started while the pipes drained; before the leader is reaped,
  // so that its pid, which its children's parent ids name, is still its own.
  tree->kill_all();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  if (res.out_truncated) res.out += k_truncated_marker;
  if (res.err_truncated) res.err += k_truncated_marker;
  return res;
}

} // namespace gate::agent

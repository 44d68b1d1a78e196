// End-to-end: input files that are not regular files (issue 21, item 5).
// A device never ends, so every input gate reads is refused at once when it
// is one; a pipe the user names is still read, within the input's limit.
#include <doctest.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

fs::path baseline() { return source_dir() / "baselines" / "demo.json"; }

// run_gate with a deadline: a regression (gate reading /dev/zero forever)
// fails the test after `seconds` instead of hanging the suite.
Result run_bounded(const std::vector<std::string>& args, const fs::path& cwd, double seconds = 20) {
  Child child = spawn_gate(args, cwd);
  std::mutex m;
  std::condition_variable cv;
  bool done = false, killed = false;
  std::thread watchdog([&] {
    std::unique_lock lock(m);
    if (!cv.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done; })) {
      ::kill(child.pid, SIGKILL);
      killed = true;
    }
  });
  Result r = finish(child);
  {
    std::lock_guard lock(m);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
  CHECK_MESSAGE(!killed, "gate did not finish within " << seconds << " s");
  return r;
}

void check_refused(const Result& r, const std::string& path, const std::string& kind) {
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.err.find(path + ": " + kind + "; expected a regular file (or a pipe)") != std::string::npos,
                r.err);
}

} // namespace

TEST_CASE("rel-32/33/35: a device or directory in place of an input is refused at once, naming it") {
  TempDir tmp;
  const fs::path cfg = copy_demo(tmp.path());
  const fs::path demo = cfg.parent_path();
  check_refused(run_bounded({"run", "--config", "/dev/zero", "--quiet"}, tmp.path()), "/dev/zero",
                "a character device");
  check_refused(run_bounded({"config", "show", "--config", "/dev/urandom"}, tmp.path()), "/dev/urandom",
                "a character device");
  check_refused(run_bounded({"run", "--config", demo.string(), "--quiet"}, tmp.path()), demo.string(),
                "a directory");
  check_refused(
      run_bounded({"compare", "--baseline", "/dev/zero", "--current", baseline().string()}, tmp.path()),
      "/dev/zero", "a character device");
  check_refused(
      run_bounded({"compare", "--baseline", baseline().string(), "--current", "/dev/urandom"}, tmp.path()),
      "/dev/urandom", "a character device");

  check_refused(run_bounded({"analyze", "/dev/zero", "--out", "an"}, tmp.path()), "/dev/zero",
                "a character device");
  check_refused(run_bounded({"merge", "--out", "m.json", baseline().string(), "/dev/urandom"}, tmp.path()),
                "/dev/urandom", "a character device");

  // Inside the suite: the cases file, then metadata.json, each a link to a device.
  const fs::path cases = demo / "suite/versions/v2/cases.jsonl";
  REQUIRE(fs::exists(cases));
  fs::remove(cases);
  fs::create_symlink("/dev/urandom", cases);
  check_refused(run_bounded({"run", "--config", cfg.string(), "--quiet"}, tmp.path()), cases.string(),
                "a character device");
  const fs::path meta = demo / "suite/metadata.json";
  fs::remove(meta);
  fs::create_symlink("/dev/zero", meta);
  check_refused(run_bounded({"run", "--config", cfg.string(), "--quiet"}, tmp.path()), meta.string(),
                "a character device");
}

TEST_CASE("a pipe the user names is read; its size limit is enforced while reading, not after") {
  ::signal(SIGPIPE, SIG_IGN); // the feeder's write fails with EPIPE when gate stops reading
  TempDir tmp;
  const fs::path fifo = tmp.path() / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);

  SUBCASE("a baseline through a FIFO compares as the file does") {
    std::thread feeder([&] { spit(fifo, slurp(baseline())); });
    Result r =
        run_bounded({"compare", "--baseline", fifo.string(), "--current", baseline().string()}, tmp.path());
    feeder.join();
    CHECK_MESSAGE(r.exit_code == 0, r.err);
  }
  SUBCASE("a config pipe that goes on and on stops at 1 MiB") {
    std::atomic<std::size_t> written{0};
    std::thread feeder([&] {
      const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
      const std::string line(4095, '#');
      const std::string chunk = line + "\n";
      // Up to 64 MiB: gate reading all of it means the limit was checked after.
      while (fd >= 0 && written < (std::size_t{64} << 20)) {
        const ssize_t n = ::write(fd, chunk.data(), chunk.size());
        if (n <= 0) break;
        written += static_cast<std::size_t>(n);
      }
      if (fd >= 0) ::close(fd);
    });
    Result r = run_bounded({"config", "show", "--config", fifo.string()}, tmp.path());
    feeder.join();
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find(fifo.string() + ": larger than 1 MiB, the limit for this file") !=
                      std::string::npos,
                  r.err);
    // The pipe holds 64 KiB by default, up to 1 MiB when raised.
    CHECK(written < (std::size_t{3} << 20));
  }
}

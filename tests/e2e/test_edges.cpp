// End-to-end: the smaller holes of issue 21, item 7. Output names that
// leave outputs.dir, a negative --sample, a stdout that cannot be written,
// cache.ignore rules that make tasks share entries, and the temp files a
// killed `gate baseline update` leaves.
#include <doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

fs::path baseline() { return source_dir() / "baselines" / "demo.json"; }

// The demo's config with its outputs in `out` and `extra` lines added to
// the outputs (or, with `section` "cache", to the cache) section.
fs::path demo_with(const fs::path& dir, const std::string& section, const std::string& extra) {
  fs::create_directories(dir);
  const fs::path cfg = copy_demo(dir);
  std::string text = slurp(cfg);
  const std::string outputs = "outputs:\n  dir: ../../.gate/demo\n";
  const auto at = text.find(outputs);
  REQUIRE(at != std::string::npos);
  text.replace(at, outputs.size(), "outputs:\n  dir: out\n" + std::string(section == "outputs" ? extra : ""));
  if (section == "cache") {
    const std::string mode = "  mode: replay-only\n";
    text.insert(text.find(mode) + mode.size(), extra);
  }
  spit(cfg, text);
  return cfg;
}

void set_age(const fs::path& p, long seconds) {
  const utimbuf t{::time(nullptr) - seconds, ::time(nullptr) - seconds};
  REQUIRE(::utime(p.c_str(), &t) == 0);
}

} // namespace

TEST_CASE("outputs.json, .markdown and .junit are file names in outputs.dir; a path is refused") {
  for (const char* line : {"  json: ../escape.json\n", "  json: /tmp/gate-escape-e2e.json\n",
                           "  markdown: sub/../../escape.md\n", "  junit: ..\n"}) {
    CAPTURE(line);
    TempDir tmp;
    const fs::path cfg = demo_with(tmp.path(), "outputs", line);
    Result r = run_gate({"run", "--config", cfg.string(), "--quiet"}, tmp.path());
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find(": expected a file name") != std::string::npos, r.err);
    CHECK_FALSE(fs::exists(tmp.path() / "demo/escape.json"));
    CHECK_FALSE(fs::exists(tmp.path() / "escape.md"));
    CHECK_FALSE(fs::exists("/tmp/gate-escape-e2e.json"));
  }
}

TEST_CASE("--sample takes a count of at least 1: -1 and 0 are usage errors") {
  TempDir tmp;
  const fs::path cfg = copy_demo(tmp.path());
  for (const std::string n : {"-1", "0"}) {
    Result r =
        run_gate({"run", "--config", cfg.string(), "--sample", n, "--out", "out", "--quiet"}, tmp.path());
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find("--sample: expected an integer >= 1, got " + n) != std::string::npos, r.err);
    CHECK_FALSE(fs::exists(tmp.path() / "out"));
  }
}

TEST_CASE("a stdout that cannot be written is exit 3, never a pass with the verdict lost") {
  if (!fs::exists("/dev/full")) {
    gate::testing::skip_test("no /dev/full on this machine");
    return;
  }
  TempDir tmp;
  const std::string cmd = gate_binary() + " compare --baseline " + baseline().string() + " --current " +
                          baseline().string() + " --format json > /dev/full 2> " +
                          (tmp.path() / "err").string();
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  CHECK(slurp(tmp.path() / "err").find("gate: error: cannot write to stdout") != std::string::npos);
  // The same command to a writable stdout passes.
  Result ok = run_gate(
      {"compare", "--baseline", baseline().string(), "--current", baseline().string(), "--format", "json"},
      tmp.path());
  CHECK(ok.exit_code == 0);
}

TEST_CASE("cache.ignore that makes two tasks share a cache key is an error naming both") {
  TempDir tmp;
  const fs::path cfg = demo_with(tmp.path(), "cache", "  ignore: [\"/messages\"]\n");
  Result r = run_gate({"run", "--config", cfg.string(), "--quiet"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.err.find("cache.ignore makes tasks \"") != std::string::npos, r.err);
  CHECK(r.err.find("share one cache key") != std::string::npos);
  // A rule that leaves the tasks apart is not refused: the seed is the same
  // for all, so only the keys change (replay-only: every run a miss, exit 4).
  const fs::path apart = demo_with(tmp.path() / "b", "cache", "  ignore: [\"/seed\"]\n");
  Result ok = run_gate({"run", "--config", apart.string(), "--quiet"}, tmp.path() / "b");
  CHECK(ok.exit_code == 4);
  CHECK(ok.err.find("cache.ignore makes") == std::string::npos);
}

TEST_CASE("baseline update removes the temp files a killed writer left, never a live writer's") {
  TempDir tmp;
  fs::copy(baseline(), tmp.path() / "base.json");
  // A pid that has just ended (not reused within the test).
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  REQUIRE(dead > 0);
  ::waitpid(dead, nullptr, 0);
  const std::string live = std::to_string(::getpid());
  const fs::path stale = tmp.path() / ("base.json.gate-tmp-" + std::to_string(dead) + "-Ab12Cd");
  const fs::path fresh_dead = tmp.path() / ("base.json.gate-tmp-" + std::to_string(dead) + "-Ef34Gh");
  const fs::path live_writer = tmp.path() / ("base.json.gate-tmp-" + live + "-Ij56Kl");
  const fs::path ancient = tmp.path() / "base.json.gate-tmp-Mn78Op"; // an older gate's name, no pid
  const fs::path other = tmp.path() / ("other.json.gate-tmp-" + std::to_string(dead) + "-Qr90St");
  for (const auto& p : {stale, fresh_dead, live_writer, ancient, other})
    spit(p, "partial");
  set_age(stale, 120);
  set_age(live_writer, 3600);
  set_age(ancient, 2 * 86400);
  set_age(other, 120);
  Result r = run_gate({"baseline", "update", "--report", baseline().string(), "--baseline", "base.json"},
                      tmp.path());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_FALSE(fs::exists(stale));
  CHECK_FALSE(fs::exists(ancient));
  CHECK(fs::exists(fresh_dead));  // its writer may be in another pid namespace, still writing
  CHECK(fs::exists(live_writer)); // a running writer's
  CHECK(fs::exists(other));       // another target's
}

// End-to-end tests for items of RELIABILITY.md that test_run.cpp leaves
// open: key rotation (rel-05), SIGTERM (rel-40), a shared cache under
// concurrent runs and prune (rel-12), full and read-only disks (rel-13).
#include <doctest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

const std::string k_canary = "sk-canary-7f3a9b1c2d4e5f60";
const std::string k_rotated = "sk-rotated-0a1b2c3d4e5f6071";

std::size_t count_entries(const fs::path& cache) {
  std::size_t n = 0;
  for (const auto& p : files_below(cache))
    if (p.extension() == ".entry") ++n;
  return n;
}

// The demo copied into `tmp` with an empty cache, recording through `upstream`.
fs::path recording_demo(const fs::path& tmp, const gate::testing::FakeUpstream& upstream) {
  fs::path config = copy_demo(tmp);
  fs::remove_all(tmp / "demo" / "cache");
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "mode", "replay");
  return config;
}

gate::testing::Script demo_script() {
  return gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json"));
}

} // namespace

TEST_CASE("rel-05: a key rotated between record and replay gives all hits and no call") {
  gate::testing::FakeUpstream upstream(demo_script());
  upstream.start();
  TempDir tmp;
  fs::path config = recording_demo(tmp.path(), upstream);

  Result rec = run_gate({"run", "--config", config.string(), "--quiet", "--out", "rec"}, tmp.path(),
                        {{"GATE_DEMO_API_KEY", k_canary}});
  INFO(rec.err);
  REQUIRE(rec.exit_code == 0);
  REQUIRE(upstream.requests() == 132);

  // Mode replay with a working (different) key would call on any miss.
  Result rep = run_gate({"run", "--config", config.string(), "--quiet", "--out", "rep"}, tmp.path(),
                        {{"GATE_DEMO_API_KEY", k_rotated}});
  INFO(rep.err);
  CHECK(rep.exit_code == 0);
  CHECK(upstream.requests() == 132);
  CHECK(read_json(tmp.path() / "rep" / "report.json").at("stats").at("cache_hits").as_int64() == 132);
}

TEST_CASE("rel-40: SIGTERM mid-run: exit 143, partial report marked incomplete, rerun resumes") {
  gate::testing::Script script = demo_script();
  script.latency_ms = 100; // 132 calls at concurrency 2: several seconds
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  fs::path config = recording_demo(tmp.path(), upstream);
  const std::map<std::string, std::string> env{{"GATE_DEMO_API_KEY", k_canary}};

  Child child =
      spawn_gate({"run", "--config", config.string(), "-j", "2", "--out", "out", "--quiet"}, tmp.path(), env);
  const bool asked = wait_until([&] { return upstream.requests() >= 10; });
  ::kill(child.pid, SIGTERM);
  Result r = finish(child);
  INFO(r.err);
  REQUIRE(asked);
  CHECK(r.exit_code == 143);
  auto partial = read_json(tmp.path() / "out" / "report.json");
  CHECK(partial.at("complete").as_bool() == false);
  CHECK_FALSE(partial.at("incomplete_reason").as_string().empty());
  const fs::path cache = tmp.path() / "demo" / "cache";
  const std::size_t recorded = count_entries(cache);
  CHECK(recorded >= 10);
  CHECK(recorded < 132);
  for (const auto& f : files_below(cache))
    CHECK(f.string().find(".gate-tmp-") == std::string::npos);

  Result verify = run_gate({"cache", "verify", "--dir", cache.string()}, tmp.path());
  CHECK(verify.exit_code == 0);
  CHECK(verify.out.find("all entries verify") != std::string::npos);

  const auto before = upstream.requests();
  Result rerun = run_gate({"run", "--config", config.string(), "--out", "out", "--quiet"}, tmp.path(), env);
  CHECK(rerun.exit_code == 0);
  CHECK(upstream.requests() - before == 132 - recorded); // only the missing ones are called
  CHECK(read_json(tmp.path() / "out" / "report.json").at("complete").as_bool() == true);
}

TEST_CASE(
    "rel-10: in replay mode a corrupt entry is a miss with a warning naming it, and is recorded again") {
  gate::testing::FakeUpstream upstream(demo_script());
  upstream.start();
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "mode", "replay");
  const fs::path cache = tmp.path() / "demo" / "cache";
  fs::path victim;
  for (const auto& p : files_below(cache))
    if (p.extension() == ".entry" && (victim.empty() || p < victim)) victim = p;
  REQUIRE_FALSE(victim.empty());
  std::string bytes = slurp(victim);
  bytes[bytes.size() / 2] ^= 0x01;
  spit(victim, bytes);

  Result r = run_gate({"run", "--config", config.string(), "--quiet", "--out", "out"}, tmp.path(),
                      {{"GATE_DEMO_API_KEY", k_canary}});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning: corrupt cache entry") != std::string::npos);
  CHECK(r.err.find(victim.filename().string()) != std::string::npos);
  CHECK(upstream.requests() == 1); // only the corrupt one is called again; never served
  CHECK(read_json(tmp.path() / "out" / "report.json").at("stats").at("cache_hits").as_int64() == 131);

  Result verify = run_gate({"cache", "verify", "--dir", cache.string()}, tmp.path());
  CHECK(verify.exit_code == 0);
  CHECK(verify.out.find("all entries verify") != std::string::npos);
}

namespace {} // namespace

TEST_CASE(
    "rel-04: the key echoed by the model stays out of record, shard, merge, baseline, compare and prune") {
  gate::testing::Script script = demo_script();
  // The first demo task's answers echo the key back.
  REQUIRE_FALSE(script.rules.empty());
  script.rules.insert(script.rules.begin(), {script.rules.front().match,
                                             {"your key is " + k_canary, "key " + k_canary + " again"}});
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  fs::path config = recording_demo(tmp.path(), upstream);
  const std::map<std::string, std::string> env{{"GATE_DEMO_API_KEY", k_canary}};
  std::string printed;
  auto gate = [&](const std::vector<std::string>& args) {
    Result r = run_gate(args, tmp.path(), env);
    printed += r.out + r.err;
    INFO(r.err);
    return r.exit_code;
  };

  CHECK(gate({"run", "--config", config.string(), "--quiet", "--out", "rec"}) == 0);
  REQUIRE(upstream.requests() == 132);
  // The echo was recorded, redacted: the test exercised the path.
  CHECK(slurp(tmp.path() / "rec" / "report.json").find("your key is [REDACTED]") != std::string::npos);
  CHECK(gate({"run", "--config", config.string(), "--quiet", "--shard", "1/2", "--out", "s1"}) == 0);
  CHECK(gate({"run", "--config", config.string(), "--quiet", "--shard", "2/2", "--out", "s2"}) == 0);
  CHECK(upstream.requests() == 132); // the shards replayed
  CHECK(gate({"merge", "--out", "merged.json", "s1/report.json", "s2/report.json"}) == 0);
  fs::copy_file(tmp.path() / "rec" / "report.json", tmp.path() / "base.json");
  CHECK(gate({"baseline", "update", "--report", "merged.json", "--baseline", "base.json"}) == 0);
  CHECK(gate({"compare", "--baseline", "base.json", "--current", "rec/report.json"}) == 0);
  CHECK(gate({"cache", "prune", "--config", config.string(), "--temp-age", "0"}) == 0);
  CHECK(no_canary_in(tmp.path(), printed, k_canary));
}

TEST_CASE("rel-24: 403 is auth: exit 3 naming the alias and the variable, not retried, never the key") {
  gate::testing::Script script;
  script.faults.push_back({"", 403, 1000, "", {}, false});
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  fs::path config = recording_demo(tmp.path(), upstream);
  Result r = run_gate({"run", "--config", config.string(), "--quiet", "-j", "1", "--out", "out"}, tmp.path(),
                      {{"GATE_DEMO_API_KEY", k_canary}});
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("auth") != std::string::npos);
  CHECK(r.err.find("demo-recorder") != std::string::npos);
  CHECK(r.err.find("GATE_DEMO_API_KEY") != std::string::npos);
  CHECK(upstream.requests() == 1); // the first 403 stops the run
  CHECK(no_canary_in(tmp.path(), r.out + r.err, k_canary));
}

TEST_CASE("rel-21: oversized response headers through gate run: response exceeds limit, exit 3") {
  const std::string big(30 * 1024, 'h'); // three 30 KiB fields: 90 KiB > the 64 KiB header limit
  gate::testing::Script script;
  script.faults.push_back({"", 200, 1000, "", {{"x-big-1", big}, {"x-big-2", big}, {"x-big-3", big}}, false});
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  fs::path config = recording_demo(tmp.path(), upstream);
  Result r = run_gate({"run", "--config", config.string(), "--quiet", "-j", "1", "--out", "out"}, tmp.path(),
                      {{"GATE_DEMO_API_KEY", k_canary}});
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("response exceeds limit") != std::string::npos);
}

namespace {

std::vector<fs::path> temp_files_below(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& f : files_below(dir))
    if (f.filename().string().find(".gate-tmp-") != std::string::npos) out.push_back(f);
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE(
    "rel-12: 8 gate run processes record into one cache with overlapping keys; all succeed and verify") {
  gate::testing::Script script = demo_script();
  script.latency_ms = 5;
  // Every replica of a prompt gets the same answer: which process asks first
  // is a race, and the reports are compared with each other.
  for (auto& rule : script.rules)
    rule.answers.resize(1);
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  fs::path config = recording_demo(tmp.path(), upstream);
  const std::map<std::string, std::string> env{{"GATE_DEMO_API_KEY", k_canary}};
  std::vector<Child> children;
  for (int i = 0; i < 8; ++i)
    children.push_back(spawn_gate(
        {"run", "--config", config.string(), "-j", "4", "--out", "out" + std::to_string(i), "--quiet"},
        tmp.path(), env));
  for (int i = 0; i < 8; ++i) {
    Result r = finish(children[static_cast<std::size_t>(i)]);
    CAPTURE(i);
    INFO(r.err);
    CHECK(r.exit_code == 0);
  }
  // Each key was recorded by at least one process; the 8 overlapped.
  CHECK(upstream.requests() >= 132);
  CHECK(upstream.requests() <= 8 * 132);
  const fs::path cache = tmp.path() / "demo" / "cache";
  CHECK(count_entries(cache) == 132);
  CHECK(temp_files_below(cache).empty());
  Result verify = run_gate({"cache", "verify", "--dir", cache.string()}, tmp.path());
  CHECK(verify.exit_code == 0);
  CHECK(verify.out.find("all entries verify") != std::string::npos);
  const auto first = read_json(tmp.path() / "out0" / "report.json");
  for (int i = 0; i < 8; ++i) {
    CAPTURE(i);
    const auto r = read_json(tmp.path() / ("out" + std::to_string(i)) / "report.json");
    CHECK(r.at("complete").as_bool());
    CHECK(r.at("stats").at("overall") == first.at("stats").at("overall"));
  }
  // A replay-only run afterwards finds every key.
  set_yaml(config, "mode", "replay-only");
  const auto before = upstream.requests();
  Result replay =
      run_gate({"run", "--config", config.string(), "--out", "replay", "--quiet"}, tmp.path(), env);
  CHECK(replay.exit_code == 0);
  CHECK(upstream.requests() == before);
}

TEST_CASE("rel-12: gate cache prune while gate run replays and records does not break the run") {
  gate::testing::Script script = demo_script();
  script.latency_ms = 60;
  for (auto& rule : script.rules) // what is recorded again gets the answer it had
    rule.answers.resize(1);
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  fs::path config = recording_demo(tmp.path(), upstream);
  const std::map<std::string, std::string> env{{"GATE_DEMO_API_KEY", k_canary}};
  const fs::path cache = tmp.path() / "demo" / "cache";
  Result rec =
      run_gate({"run", "--config", config.string(), "-j", "8", "--out", "rec", "--quiet"}, tmp.path(), env);
  REQUIRE(rec.exit_code == 0);
  REQUIRE(count_entries(cache) == 132);

  // What prune removes: a corrupt entry, a stray file, a temp file. And 40
  // entries gone, so that the run records for a while (40 calls of 60 ms
  // at -j 2) while prune runs beside it.
  std::vector<fs::path> entries;
  for (const auto& p : files_below(cache))
    if (p.extension() == ".entry") entries.push_back(p);
  std::sort(entries.begin(), entries.end());
  std::string bytes = slurp(entries[0]);
  bytes[bytes.size() / 2] ^= 0x01;
  spit(entries[0], bytes);
  for (std::size_t i = 1; i <= 40; ++i)
    fs::remove(entries[i]);
  spit(entries[41].parent_path() / "stray.txt", "not an entry");
  spit(entries[42].parent_path() / (entries[42].filename().string() + ".gate-tmp-AbC123"), "partial");

  const auto before = upstream.requests();
  Child child =
      spawn_gate({"run", "--config", config.string(), "-j", "2", "--out", "out", "--quiet"}, tmp.path(), env);
  while (upstream.requests() == before)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // Prune over and over while the run still has calls to make; --temp-age 0
  // removes the run's own writes in flight whenever it catches one.
  int prunes_mid_run = 0;
  while (upstream.requests() - before < 41 && prunes_mid_run < 500) {
    Result prune = run_gate({"cache", "prune", "--dir", cache.string(), "--temp-age", "0"}, tmp.path());
    INFO(prune.out << prune.err);
    CHECK(prune.exit_code == 0);
    ++prunes_mid_run;
  }
  Result r = finish(child);
  INFO(r.err);
  CHECK(prunes_mid_run >= 1);
  CHECK(r.exit_code == 0);
  // 40 missing and 1 corrupt entry are called; the rest replayed.
  CHECK(upstream.requests() - before == 41);
  const auto report = read_json(tmp.path() / "out" / "report.json");
  CHECK(report.at("complete").as_bool());
  CHECK(report.at("stats").at("errored_runs").as_int64() == 0);
  CHECK(report.at("stats").at("cache_hits").as_int64() == 132 - 41);
  CHECK(report.at("stats").at("overall") ==
        read_json(tmp.path() / "rec" / "report.json").at("stats").at("overall"));

  Result prune = run_gate({"cache", "prune", "--dir", cache.string(), "--temp-age", "0"}, tmp.path());
  CHECK(prune.exit_code == 0);
  Result verify = run_gate({"cache", "verify", "--dir", cache.string()}, tmp.path());
  CHECK(verify.exit_code == 0);
  CHECK(verify.out.find("all entries verify") != std::string::npos);
  // A prune that judged the corrupt file before the run replaced it may
  // remove the fresh entry: the next run in replay mode records exactly what
  // is missing, and finishes.
  const std::size_t left = count_entries(cache);
  CHECK(left >= 131);
  const auto again = upstream.requests();
  Result rerun = run_gate({"run", "--config", config.string(), "--out", "again", "--quiet"}, tmp.path(), env);
  CHECK(rerun.exit_code == 0);
  CHECK(upstream.requests() - again == 132 - left);
}

namespace {

// True when this process can create a file in `dir` despite its mode (root).
bool mode_is_ignored(const fs::path& dir) {
  const fs::path probe = dir / "probe";
  FILE* f = std::fopen(probe.c_str(), "w");
  if (f == nullptr) return false;
  std::fclose(f);
  fs::remove(probe);
  return true;
}

} // namespace

TEST_CASE(
    "rel-13: a full disk under gate run and gate baseline update: exit 3 naming the path, files intact") {
  TempDir tmp;
  fs::path config = copy_demo(tmp.path()); // replay-only from the demo cache: no upstream
  Result first = run_gate({"run", "--config", config.string(), "--out", "out", "--quiet"}, tmp.path());
  REQUIRE(first.exit_code == 0);
  const fs::path report = tmp.path() / "out" / "report.json";
  const fs::path baseline = tmp.path() / "baseline.json";
  fs::copy_file(report, baseline);
  // A different report to promote, so that the update has bytes to write.
  Result second = run_gate({"run", "--config", config.string(), "--out", "next", "--quiet"}, tmp.path());
  REQUIRE(second.exit_code == 0);
  const std::string report_bytes = slurp(report), baseline_bytes = slurp(baseline);

  for (const char* fault : {"enospc", "eio"}) {
    CAPTURE(fault);
    const std::string why = std::string(fault) == "enospc" ? "No space left on device" : "Input/output error";
    const std::map<std::string, std::string> env{{"GATE_TEST_FAULT_WRITE", fault}};
    Result run = run_gate({"run", "--config", config.string(), "--out", "out", "--quiet"}, tmp.path(), env);
    INFO(run.err);
    CHECK(run.exit_code == 3);
    CHECK(has(run.err, "cannot write " + (fs::path("out") / "report.json").string() + ": " + why));
    CHECK(slurp(report) == report_bytes);

    Result update =
        run_gate({"baseline", "update", "--report", "next/report.json", "--baseline", "baseline.json"},
                 tmp.path(), env);
    INFO(update.out << update.err);
    CHECK(update.exit_code == 3);
    CHECK(has(update.err, "cannot write baseline.json: " + why));
    CHECK(slurp(baseline) == baseline_bytes);
    CHECK(temp_files_below(tmp.path()).empty());
  }
  // The seam refuses a value it does not know instead of writing normally.
  Result typo = run_gate({"run", "--config", config.string(), "--out", "out", "--quiet"}, tmp.path(),
                         {{"GATE_TEST_FAULT_WRITE", "enospc!"}});
  CHECK(typo.exit_code == 3);
  CHECK(has(typo.err, "GATE_TEST_FAULT_WRITE"));
  CHECK(slurp(report) == report_bytes);
  // Without the fault the same commands write.
  Result update = run_gate(
      {"baseline", "update", "--report", "next/report.json", "--baseline", "baseline.json"}, tmp.path());
  CHECK(update.exit_code == 0);
  CHECK(slurp(baseline) == slurp(tmp.path() / "next" / "report.json"));
}

TEST_CASE("rel-13: a read-only report directory: exit 3 naming the path, the previous report intact") {
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  Result first = run_gate({"run", "--config", config.string(), "--out", "out", "--quiet"}, tmp.path());
  REQUIRE(first.exit_code == 0);
  const fs::path out = tmp.path() / "out";
  const std::string report_bytes = slurp(out / "report.json");
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                           fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  // As root the mode is not enforced: the seam refuses the write as the
  // kernel would for anyone else.
  std::map<std::string, std::string> env;
  if (mode_is_ignored(out)) env["GATE_TEST_FAULT_WRITE"] = "eacces";
  Result run = run_gate({"run", "--config", config.string(), "--out", "out", "--quiet"}, tmp.path(), env);
  fs::permissions(out, fs::perms::owner_all, fs::perm_options::add);
  INFO(run.err);
  CHECK(run.exit_code == 3);
  CHECK(has(run.err, "cannot write " + (fs::path("out") / "report.json").string() + ": Permission denied"));
  CHECK(slurp(out / "report.json") == report_bytes);
  CHECK(temp_files_below(tmp.path()).empty());
}

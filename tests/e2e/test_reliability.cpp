// End-to-end tests for items of RELIABILITY.md that test_run.cpp leaves
// open: key rotation (rel-05) and SIGTERM (rel-40).
#include <doctest.h>

#include <boost/json.hpp>
#include <chrono>
#include <csignal>
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
  while (upstream.requests() < 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(child.pid, SIGTERM);
  Result r = finish(child);
  INFO(r.err);
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

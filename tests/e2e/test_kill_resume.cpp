// End-to-end: `gate run` recording with 8 workers, killed with SIGKILL at
// random points (issue 6 acceptance; RELIABILITY.md 9 and 40 through the
// real binary). After each kill the cache verifies, and a rerun's report
// equals an uninterrupted run's apart from timing and cache fields.
#include <doctest.h>

#include <boost/json.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <random>
#include <thread>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

const std::string k_canary = "sk-canary-7f3a9b1c2d4e5f60";
constexpr int k_kills = 20;
constexpr std::uint64_t k_calls = 132; // demo: 44 tasks x 3 runs

// The demo in `dir`, with an empty cache, recording through `base_url`.
fs::path empty_demo(const fs::path& dir, const std::string& base_url) {
  fs::path config = copy_demo(dir);
  fs::remove_all(dir / "demo" / "cache");
  set_yaml(config, "base_url", base_url);
  set_yaml(config, "mode", "replay");
  return config;
}

// Drops what legitimately differs between a resumed and an uninterrupted
// run: when it ran, how long calls took, and what came from the cache.
void drop_timing_and_cache(boost::json::value& v) {
  if (auto* o = v.if_object()) {
    std::vector<std::string> drop;
    for (const auto& kv : *o) {
      const std::string_view k = kv.key();
      if (k == "started_at" || k == "finished_at" || k == "cache_hit" || k == "cache_hits" ||
          k == "attempts" || k == "attempt_log" || k == "ttft_ms" || k == "cached_tokens" ||
          k == "paid_tokens" || k.find("latency") != std::string_view::npos)
        drop.emplace_back(k);
    }
    for (const auto& k : drop)
      o->erase(k);
    for (auto& kv : *o)
      drop_timing_and_cache(kv.value());
  } else if (auto* a = v.if_array()) {
    for (auto& x : *a)
      drop_timing_and_cache(x);
  }
}

std::vector<fs::path> temp_files(const fs::path& cache) {
  std::vector<fs::path> out;
  for (const auto& f : files_below(cache))
    if (f.filename().string().find(".gate-tmp-") != std::string::npos) out.push_back(f);
  return out;
}

} // namespace

TEST_CASE(
    "SIGKILL at random points while 8 workers record: the cache verifies, the rerun equals a clean run") {
  gate::testing::Script script =
      gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json"));
  script.latency_ms = 10; // 132 calls over 8 workers: a few hundred ms per run
  // The fake answers a prompt's k-th request with answers[k]; with 8 workers
  // which replica asks first is a race, so a clean run is only reproducible
  // when every replica of a prompt gets the same answer.
  for (auto& rule : script.rules)
    rule.answers.resize(1);
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  const std::map<std::string, std::string> env{{"GATE_DEMO_API_KEY", k_canary}};

  TempDir clean;
  fs::path clean_config = empty_demo(clean.path(), upstream.base_url());
  Result reference = run_gate(
      {"run", "--config", clean_config.string(), "-j", "8", "--out", "out", "--quiet"}, clean.path(), env);
  INFO(reference.err);
  REQUIRE(reference.exit_code == 0);
  boost::json::value want = read_json(clean.path() / "out" / "report.json");
  drop_timing_and_cache(want);

  const unsigned seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  int killed_mid_run = 0;
  for (int i = 0; i < k_kills; ++i) {
    CAPTURE(i);
    TempDir tmp;
    fs::path config = empty_demo(tmp.path(), upstream.base_url());
    const fs::path cache = tmp.path() / "demo" / "cache";
    const std::uint64_t start = upstream.requests();
    // A random point: after 0..k_calls-1 calls have reached the upstream,
    // plus 0..9 ms, so startup, mid-run and the final writes are all hit.
    const std::uint64_t after = std::uniform_int_distribution<std::uint64_t>(0, k_calls - 1)(rng);
    const int extra_ms = std::uniform_int_distribution<int>(0, 9)(rng);
    Child child = spawn_gate({"run", "--config", config.string(), "-j", "8", "--out", "out", "--quiet"},
                             tmp.path(), env);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (upstream.requests() - start < after && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(extra_ms));
    ::kill(child.pid, SIGKILL); // a zombie that already finished ignores it
    Result r = finish(child);
    CHECK((r.exit_code == 128 + SIGKILL || r.exit_code == 0));
    if (r.exit_code != 0) ++killed_mid_run;

    // Killed before the first write there is no cache directory to verify
    // (`gate cache verify` refuses a missing one, exit 2).
    if (fs::exists(cache)) {
      Result verify = run_gate({"cache", "verify", "--dir", cache.string()}, tmp.path());
      INFO(verify.out << verify.err);
      CHECK(verify.exit_code == 0);
      CHECK(verify.out.find("all entries verify") != std::string::npos);
    }

    Result rerun =
        run_gate({"run", "--config", config.string(), "-j", "8", "--out", "out", "--quiet"}, tmp.path(), env);
    INFO(rerun.err);
    REQUIRE(rerun.exit_code == 0);
    boost::json::value got = read_json(tmp.path() / "out" / "report.json");
    CHECK(got.at("complete").as_bool() == true);
    drop_timing_and_cache(got);
    // The config block names this directory's cache; the rest must match.
    for (const char* part : {"suite", "route", "stats", "tasks"}) {
      CAPTURE(part);
      CHECK(got.at(part) == want.at(part));
    }
    // Every call was made once over the killed run and the rerun, or a
    // killed call was made again; never fewer than the evaluation needs.
    CHECK(upstream.requests() - start >= k_calls);
    // Stray temp files of the killed writers are ignored, and pruned.
    const std::size_t strays = temp_files(cache).size();
    Result prune = run_gate({"cache", "prune", "--dir", cache.string(), "--temp-age", "0"}, tmp.path());
    CHECK(prune.exit_code == 0);
    CHECK(temp_files(cache).empty());
    if (strays > 0) MESSAGE("kill " << i << ": " << strays << " stray temp file(s) pruned");
  }
  // The random points must actually interrupt runs, or the test shows nothing.
  CHECK(killed_mid_run >= k_kills / 2);
}

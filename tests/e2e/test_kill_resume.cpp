// End-to-end: `gate run` recording with 8 workers, killed with SIGKILL at
// random points (issue 6 acceptance; RELIABILITY.md 9 and 40 through the
// real binary). After each kill the cache verifies, and a rerun's report
// equals an uninterrupted run's apart from timing and cache fields. And
// after SIGINT, the rerun's report counts the runs it took over (issue 6).
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

namespace {

// Runs a report lists as finished: present and not errored.
std::int64_t finished_runs(const boost::json::value& report) {
  std::int64_t n = 0;
  for (const auto& task : report.at("tasks").as_array())
    for (const auto& run : task.at("runs").as_array())
      if (run.at("error").as_string().empty()) ++n;
  return n;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("rel-40: after SIGINT the rerun's report says how many runs came from the interrupted run") {
  gate::testing::Script script =
      gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json"));
  script.latency_ms = 100; // 132 calls at concurrency 2: several seconds
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  const std::map<std::string, std::string> env{{"GATE_DEMO_API_KEY", k_canary}};
  TempDir tmp;
  fs::path config = empty_demo(tmp.path(), upstream.base_url());
  const std::vector<std::string> run{"run", "--config", config.string(), "-j",
                                     "2",   "--out",    "out",           "--quiet"};
  const fs::path report = tmp.path() / "out" / "report.json";

  Child child = spawn_gate(run, tmp.path(), env);
  const bool asked = wait_until([&] { return upstream.requests() >= 10; });
  ::kill(child.pid, SIGINT);
  Result interrupted = finish(child);
  INFO(interrupted.err);
  REQUIRE(asked);
  REQUIRE(interrupted.exit_code == 130);
  const boost::json::value partial = read_json(report);
  REQUIRE(partial.at("complete").as_bool() == false);
  CHECK_FALSE(partial.as_object().contains("resumed")); // the first attempt resumed nothing
  const std::int64_t finished = finished_runs(partial);
  CHECK(finished >= 8);
  CHECK(finished < 132);
  const std::string started = std::string(partial.at("started_at").as_string());

  const auto before = upstream.requests();
  Result rerun = run_gate(run, tmp.path(), env);
  INFO(rerun.err);
  REQUIRE(rerun.exit_code == 0);
  const boost::json::value resumed = read_json(report);
  CHECK(resumed.at("complete").as_bool() == true);
  REQUIRE(resumed.as_object().contains("resumed"));
  CHECK(resumed.at("resumed").at("runs").as_int64() == finished);
  CHECK(resumed.at("resumed").at("from_started_at").as_string() == started);
  CHECK(upstream.requests() - before == static_cast<std::uint64_t>(132 - finished));
  const std::string n = std::to_string(finished);
  CHECK(has(rerun.out, "; " + n + " resumed from the interrupted run of " + started + "\n"));
  CHECK(has(slurp(tmp.path() / "out" / "report.md"),
            "Resumed: " + n + " of 132 runs came from the interrupted run of " + started + ".\n"));
  // gate reads what it wrote.
  Result compare =
      run_gate({"compare", "--baseline", report.string(), "--current", report.string()}, tmp.path());
  CHECK(compare.exit_code == 0);

  // Run again: the report it replaces is complete, so nothing is resumed.
  Result again = run_gate(run, tmp.path(), env);
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK_FALSE(read_json(report).as_object().contains("resumed"));
  CHECK_FALSE(has(again.out, "resumed"));
  CHECK_FALSE(has(slurp(tmp.path() / "out" / "report.md"), "Resumed:"));

  // An incomplete report of another suite version, and one gate cannot read,
  // are not resumed from; the unreadable one is a warning, never fatal.
  std::string other = slurp(report);
  const std::string complete_line = "\n\"complete\": true,\n";
  REQUIRE(has(other, complete_line));
  other.replace(other.find(complete_line), complete_line.size(), "\n\"complete\": false,\n");
  const std::string version = "\"version\":" + boost::json::serialize(resumed.at("suite").at("version"));
  REQUIRE(has(other, version));
  other.replace(other.find(version), version.size(), "\"version\":\"other\"");
  spit(report, other);
  Result foreign = run_gate(run, tmp.path(), env);
  CHECK(foreign.exit_code == 0);
  CHECK_FALSE(read_json(report).as_object().contains("resumed"));
  spit(report, "{\"schema\": \"gate.report/1\", \"complete\": false");
  Result broken = run_gate(run, tmp.path(), env);
  INFO(broken.err);
  CHECK(broken.exit_code == 0);
  CHECK(has(broken.err, "warning: the earlier report is unreadable"));
  CHECK(has(broken.err, report.filename().string()));
  CHECK_FALSE(read_json(report).as_object().contains("resumed"));
  CHECK(upstream.requests() - before == static_cast<std::uint64_t>(132 - finished)); // all replayed
}

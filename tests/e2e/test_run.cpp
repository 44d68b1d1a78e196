// End-to-end: `gate run` on the demo and against the fake upstream.
#include <doctest.h>

#include <boost/json.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

const std::string k_canary = "sk-canary-7f3a9b1c2d4e5f60";

std::vector<fs::path> entries(const fs::path& cache) {
  std::vector<fs::path> out;
  for (const auto& p : files_below(cache))
    if (p.extension() == ".entry") out.push_back(p);
  std::sort(out.begin(), out.end());
  return out;
}

// The tasks with every run's route spelled out: a run omits its route when
// it equals the one most runs share ("runs_route", else "route").
boost::json::array tasks_with_routes(const boost::json::value& report) {
  const auto& top = report.as_object();
  const boost::json::value& shared = top.contains("runs_route") ? top.at("runs_route") : top.at("route");
  boost::json::array tasks = report.at("tasks").as_array();
  for (auto& t : tasks)
    for (auto& run : t.at("runs").as_array())
      if (!run.as_object().contains("route")) run.as_object()["route"] = shared;
  return tasks;
}

} // namespace

TEST_CASE("the demo replays offline in replay-only mode and exits 0") {
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  Result r = run_gate({"run", "--config", config.string(), "--quiet", "--out", "out"}, tmp.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("demo v2: success") != std::string::npos);
}

TEST_CASE("replay-only: a deleted entry exits 4 naming the task and run; a flipped byte warns and exits 4") {
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  auto all = entries(tmp.path() / "demo" / "cache");
  REQUIRE(all.size() == 132);

  SUBCASE("deleted") {
    fs::remove(all[17]);
    Result r = run_gate({"run", "--config", config.string(), "--quiet", "--out", "out"}, tmp.path());
    CHECK(r.exit_code == 4);
    CHECK(r.err.find("1 response(s) are not in the cache") != std::string::npos);
    CHECK(r.err.find("missing: task ") != std::string::npos);
    CHECK(r.err.find(" run ") != std::string::npos);
    CHECK(r.err.find("GATE_DEMO_API_KEY") != std::string::npos); // how to record
  }
  SUBCASE("flipped byte") {
    std::string bytes = slurp(all[5]);
    bytes[bytes.size() / 2] ^= 0x01;
    spit(all[5], bytes);
    Result r = run_gate({"run", "--config", config.string(), "--quiet", "--out", "out"}, tmp.path());
    CHECK(r.exit_code == 4);
    CHECK(r.err.find("warning: corrupt cache entry") != std::string::npos);
    CHECK(r.err.find(all[5].filename().string()) != std::string::npos);
    CHECK(r.err.find("missing: task ") != std::string::npos);
  }
}

TEST_CASE("record against the fake upstream, then replay: same outcomes, canary key written nowhere") {
  gate::testing::FakeUpstream upstream(
      gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json")));
  upstream.start();
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  fs::remove_all(tmp.path() / "demo" / "cache");
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "mode", "replay");
  set_yaml(config, "api_key_env", "OPENAI_API_KEY");
  fs::path out = tmp.path() / "out";

  Result rec = run_gate({"run", "--config", config.string(), "--out", (out / "rec").string()}, tmp.path(),
                        {{"OPENAI_API_KEY", k_canary}});
  INFO(rec.err);
  REQUIRE(rec.exit_code == 0);
  CHECK(upstream.requests() == 132);
  // The key went upstream in the header, and nowhere else.
  CHECK(upstream.log().front().headers.at("authorization") == "Bearer " + k_canary);
  CHECK(entries(tmp.path() / "demo" / "cache").size() == 132);

  Result rep = run_gate({"run", "--config", config.string(), "--out", (out / "rep").string()}, tmp.path(),
                        {{"OPENAI_API_KEY", ""}});
  INFO(rep.err);
  REQUIRE(rep.exit_code == 0);
  CHECK(upstream.requests() == 132); // no new call: all replayed

  auto a = read_json(out / "rec" / "report.json");
  auto b = read_json(out / "rep" / "report.json");
  CHECK(outcome_view(a) == outcome_view(b)); // objects compare unordered
  CHECK(a.at("stats").at("overall") == b.at("stats").at("overall"));
  CHECK(b.at("stats").at("cache_hits").as_int64() == 132);
  CHECK(no_canary_in(tmp.path(), rec.out + rec.err + rep.out + rep.err, k_canary));
}

TEST_CASE("concurrency 1 and 8 give identical reports") {
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  Result one =
      run_gate({"run", "--config", config.string(), "-j", "1", "--out", "o1", "--quiet"}, tmp.path());
  Result eight =
      run_gate({"run", "--config", config.string(), "-j", "8", "--out", "o8", "--quiet"}, tmp.path());
  REQUIRE(one.exit_code == 0);
  REQUIRE(eight.exit_code == 0);
  auto a = read_json(tmp.path() / "o1" / "report.json");
  auto b = read_json(tmp.path() / "o8" / "report.json");
  // Replayed runs carry the route they were recorded through (here -j 1),
  // so the tasks are the same whatever this run's concurrency.
  CHECK(tasks_with_routes(a) == tasks_with_routes(b));
  CHECK(a.at("stats") == b.at("stats"));
  // Apart from when each run started: two runs a second apart differ there.
  auto without_timestamp = [](std::string xml) {
    const std::size_t at = xml.find(" timestamp=\"");
    if (at != std::string::npos) xml.erase(at, xml.find('"', at + 12) + 1 - at);
    return xml;
  };
  CHECK(without_timestamp(slurp(tmp.path() / "o1" / "report.xml")) ==
        without_timestamp(slurp(tmp.path() / "o8" / "report.xml")));
}

TEST_CASE("a suite edited in place is refused before any model call") {
  gate::testing::FakeUpstream upstream(gate::testing::Script{});
  upstream.start();
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "mode", "record");
  fs::path cases = tmp.path() / "demo" / "suite" / "versions" / "v2" / "cases.jsonl";
  spit(cases, slurp(cases) + "\n");
  Result r = run_gate({"run", "--config", config.string(), "--out", "out"}, tmp.path(),
                      {{"GATE_DEMO_API_KEY", k_canary}});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("sha256 mismatch") != std::string::npos);
  CHECK(upstream.requests() == 0);
}

TEST_CASE("bad config: file:line:col and exit 2") {
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  set_yaml(config, "runs", "three");
  Result r = run_gate({"run", "--config", config.string(), "--out", "out"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("gate.yaml:") != std::string::npos);
  CHECK(r.err.find("integer") != std::string::npos);
}

TEST_CASE("a fresh call without a key exits 3 naming the variable; 401 exits 3 without the key") {
  gate::testing::Script script;
  script.faults.push_back({"", 401, 1000, "", {}, false});
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "mode", "record");

  Result nokey = run_gate({"run", "--config", config.string(), "--quiet", "--out", "out"}, tmp.path());
  CHECK(nokey.exit_code == 3);
  CHECK(nokey.err.find("GATE_DEMO_API_KEY") != std::string::npos);
  CHECK(upstream.requests() == 0);

  Result auth = run_gate({"run", "--config", config.string(), "--quiet", "-j", "1", "--out", "out"},
                         tmp.path(), {{"GATE_DEMO_API_KEY", k_canary}});
  CHECK(auth.exit_code == 3);
  CHECK(auth.err.find("auth") != std::string::npos);
  CHECK(auth.err.find("demo-recorder") != std::string::npos);
  CHECK(upstream.requests() <= 2); // an auth failure stops the run; it is not retried
  CHECK(no_canary_in(tmp.path(), auth.out + auth.err, k_canary));
}

TEST_CASE("SIGINT mid-run: exit 130, partial report marked incomplete, rerun resumes from the cache") {
  gate::testing::Script script =
      gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json"));
  script.latency_ms = 100; // 132 calls at concurrency 2: several seconds
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  fs::remove_all(tmp.path() / "demo" / "cache");
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "mode", "replay");
  const std::map<std::string, std::string> env{{"GATE_DEMO_API_KEY", k_canary}};

  Child child =
      spawn_gate({"run", "--config", config.string(), "-j", "2", "--out", "out", "--quiet"}, tmp.path(), env);
  while (upstream.requests() < 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(child.pid, SIGINT);
  Result r = finish(child);
  INFO(r.err);
  CHECK(r.exit_code == 130);
  auto partial = read_json(tmp.path() / "out" / "report.json");
  CHECK(partial.at("complete").as_bool() == false);
  const auto recorded = entries(tmp.path() / "demo" / "cache").size();
  CHECK(recorded >= 10);
  CHECK(recorded < 132);
  for (const auto& f : files_below(tmp.path() / "demo" / "cache"))
    CHECK(f.string().find(".gate-tmp-") == std::string::npos);

  const auto before = upstream.requests();
  Result rerun = run_gate({"run", "--config", config.string(), "--out", "out", "--quiet"}, tmp.path(), env);
  CHECK(rerun.exit_code == 0);
  CHECK(upstream.requests() - before == 132 - recorded); // only the missing ones are called
  CHECK(read_json(tmp.path() / "out" / "report.json").at("complete").as_bool() == true);
}

TEST_CASE("an unwritable report directory exits 3 and keeps the previous report") {
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  Result first = run_gate({"run", "--config", config.string(), "--out", "out", "--quiet"}, tmp.path());
  REQUIRE(first.exit_code == 0);
  const std::string before = slurp(tmp.path() / "out" / "report.json");
  // Running as root, permissions do not stop a write; a report path below a
  // regular file does.
  spit(tmp.path() / "blocker", "not a directory");
  Result r = run_gate({"run", "--config", config.string(), "--out", "blocker/out", "--quiet"}, tmp.path());
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("blocker") != std::string::npos);
  CHECK(slurp(tmp.path() / "out" / "report.json") == before);
}

TEST_CASE("usage errors point at the right help and list every near command") {
  TempDir tmp;
  Result typo = run_gate({"rnk"}, tmp.path());
  CHECK(typo.exit_code == 2);
  CHECK(typo.err.find("unknown command \"rnk\"; did you mean \"run\" or \"rank\"? (see `gate help`)") !=
        std::string::npos);
  Result missing = run_gate({"rank"}, tmp.path());
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("'--anchor' is required but missing (see `gate rank --help`)") != std::string::npos);
}

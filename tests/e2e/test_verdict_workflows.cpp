// End-to-end: the verdict in a team's real workflows (issue "verdicts that
// hold"): an upstream that answers nothing but errors, a partial report, a
// cache recorded again after the baseline was promoted.
#include <doctest.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

fs::path baseline() { return source_dir() / "baselines" / "demo.json"; }

// The demo, pointed at `upstream` and recording, with the retry policy and
// timeout given (the demo's gate.yaml has neither line).
fs::path demo_against(const fs::path& dir, const gate::testing::FakeUpstream& upstream, int retries,
                      int timeout_s = 30, int rate_limit_wait_s = 120) {
  fs::path config = copy_demo(dir);
  fs::remove_all(dir / "demo" / "cache");
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "mode", "record");
  set_yaml(config, "max_tokens",
           "256\n  max_retries: " + std::to_string(retries) + "\n  timeout: " + std::to_string(timeout_s) +
               "\n  rate_limit_wait_s: " + std::to_string(rate_limit_wait_s));
  return config;
}

const std::map<std::string, std::string> k_key{{"GATE_DEMO_API_KEY", "sk-test-not-a-secret-0001"}};

// `gate check` of `config` against the demo baseline, with the test key.
Result check_demo(const fs::path& cwd, const fs::path& config) {
  return run_gate(
      {"check", "--config", config.string(), "--baseline", baseline().string(), "--out", "out", "--quiet"},
      cwd, k_key);
}

gate::testing::Script always(int status, const std::string& body = "") {
  gate::testing::Script s;
  gate::testing::Fault f;
  f.status = status;
  f.times = 1000000;
  f.body = body;
  s.faults.push_back(f);
  return s;
}

} // namespace

TEST_CASE("every call a 500: gate check exits 3 'could not measure', never 'passed'") {
  gate::testing::FakeUpstream upstream(always(500));
  upstream.start();
  TempDir tmp;
  fs::path config = demo_against(tmp.path(), upstream, 0);
  Result r = check_demo(tmp.path(), config);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("passed") == std::string::npos);
  CHECK(r.out.find("success n/a (0 of 132 runs measured)") != std::string::npos);
  CHECK(r.err.find("could not measure: 132 of 132 runs errored (server 132); first: task ") !=
        std::string::npos);
  CHECK(r.err.find("HTTP 500") != std::string::npos);

  // The report it wrote cannot be judged by compare either, nor promoted.
  Result c =
      run_gate({"compare", "--baseline", baseline().string(), "--current", "out/report.json"}, tmp.path());
  INFO(c.out << c.err);
  CHECK(c.exit_code == 3);
  CHECK(c.out.rfind("⛔ gate could not measure: current report: success n/a (0 of 132 runs measured)", 0) ==
        0);
  Result b =
      run_gate({"baseline", "update", "--report", "out/report.json", "--baseline", "base.json"}, tmp.path());
  CHECK(b.exit_code == 2);
  CHECK(b.err.find("132 of 132 runs errored") != std::string::npos);
  CHECK(!fs::exists(tmp.path() / "base.json"));
  Result forced =
      run_gate({"baseline", "update", "--report", "out/report.json", "--baseline", "base.json", "--force"},
               tmp.path());
  CHECK(forced.exit_code == 0);
  CHECK(forced.err.find("--force: promoting a report that could not measure") != std::string::npos);
}

TEST_CASE("a spent quota (429 insufficient_quota) is not retried and stops the run at once: exit 3") {
  gate::testing::FakeUpstream upstream(always(
      429, R"({"error":{"message":"You exceeded your current quota, please check your plan and billing )"
           R"(details.","type":"insufficient_quota","code":"insufficient_quota"}})"));
  upstream.start();
  TempDir tmp;
  fs::path config = demo_against(tmp.path(), upstream, 3);
  Result r = check_demo(tmp.path(), config);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("passed") == std::string::npos);
  CHECK(r.err.find("upstream quota error") != std::string::npos);
  CHECK(r.err.find("add credit or raise its spend limit") != std::string::npos);
  // Each worker's first call, at most: no retries, no further tasks.
  CHECK(upstream.requests() <= 8);
}

TEST_CASE("every call a 429 (an outage, not a quota): the pool stops retrying after its budget, exit 3") {
  gate::testing::Fault f;
  f.status = 429;
  f.times = 1000000;
  f.headers = {{"retry-after", "0"}};
  gate::testing::Script limited;
  limited.faults.push_back(f);
  gate::testing::FakeUpstream upstream(limited);
  upstream.start();
  TempDir tmp;
  fs::path config = demo_against(tmp.path(), upstream, 3, 30, 2);
  const auto start = std::chrono::steady_clock::now();
  Result r = check_demo(tmp.path(), config);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("passed") == std::string::npos);
  CHECK(r.err.find("could not measure: 132 of 132 runs errored (rate_limit 132)") != std::string::npos);
  // Each call retries 429s for at most 2 s, and once no call got past one
  // for 2 s none retries: the outage ends the run in seconds, not in
  // 132 × 2 s.
  CHECK(took < 60);
}

TEST_CASE("an upstream that never answers: every run times out, exit 3") {
  gate::testing::Script hang;
  hang.latency_ms = 4000;
  gate::testing::FakeUpstream upstream(hang);
  upstream.start(0, 8);
  TempDir tmp;
  fs::path config = demo_against(tmp.path(), upstream, 0, 1);
  Result r = run_gate({"run", "--config", config.string(), "--out", "out", "--quiet", "--sample", "3"},
                      tmp.path(), k_key);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("could not measure: 9 of 9 runs errored (timeout 9)") != std::string::npos);
}

TEST_CASE("a shard's report is refused by compare unless --allow-partial, which then says what it covers") {
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  Result run =
      run_gate({"run", "--config", config.string(), "--out", "out", "--quiet", "--shard", "2/4"}, tmp.path());
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  Result r =
      run_gate({"compare", "--baseline", baseline().string(), "--current", "out/report.json"}, tmp.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("the current report is shard 2/4") != std::string::npos);
  CHECK(r.err.find("of the baseline's 44 tasks") != std::string::npos);
  CHECK(r.err.find("--allow-partial") != std::string::npos);
  Result p = run_gate({"compare", "--baseline", baseline().string(), "--current", "out/report.json",
                       "--allow-partial", "--markdown", "v.md", "--json", "v.json"},
                      tmp.path());
  INFO(p.out << p.err);
  CHECK(p.exit_code == 0);
  CHECK(p.out.find("[partial: covers ") < p.out.find('\n'));
  CHECK(slurp(tmp.path() / "v.md").find("partial comparison: covers ") != std::string::npos);
  CHECK(read_json(tmp.path() / "v.json").at("coverage").as_string().starts_with("covers "));
}

TEST_CASE("the cache recorded again after the baseline: fresh samples, not grader changes") {
  // Another sample of the same model: every prompt's answers drawn again
  // from its three (a seeded shuffle with repetition), recorded one call at
  // a time into a new cache.
  auto script = boost::json::parse(slurp(source_dir() / "fixtures" / "demo" / "upstream.json")).as_object();
  std::uint64_t state = 20261201;
  for (auto& rule : script["rules"].as_array()) {
    auto& answers = rule.as_object()["answers"].as_array();
    boost::json::array drawn;
    for (std::size_t i = 0; i < answers.size(); ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      drawn.push_back(answers[(state >> 33) % answers.size()]);
    }
    answers = drawn;
  }
  gate::testing::FakeUpstream upstream(gate::testing::parse_script(boost::json::serialize(script)));
  upstream.start();
  TempDir tmp;
  fs::path config = demo_against(tmp.path(), upstream, 0);
  Result rec = run_gate({"run", "--config", config.string(), "--out", "rec", "--quiet", "--concurrency", "1"},
                        tmp.path(), k_key);
  INFO(rec.err);
  REQUIRE(rec.exit_code == 0);
  set_yaml(config, "mode", "replay-only");
  Result r = run_gate({"check", "--config", config.string(), "--baseline", baseline().string(), "--out",
                       "out", "--json", "v.json"},
                      tmp.path());
  INFO(r.out << r.err);
  auto v = read_json(tmp.path() / "v.json");
  CHECK(v.at("rerecorded").as_int64() > 0);
  for (const auto& t : v.at("tasks").as_array())
    CHECK(!t.at("grader_change").as_bool());
  CHECK(r.out.find("re-recorded since the baseline") != std::string::npos);
  CHECK(r.exit_code == 0);
}

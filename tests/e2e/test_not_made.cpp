// End-to-end: runs never made are never measured (issue 27.4). With no key
// exported, or a plain-http URL gate refuses, the run stops before its
// calls: the summary says what was measured (n/a when nothing), the report
// counts the rest as not made, and no run reads as a failure.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

using namespace gate::e2e;
namespace fs = std::filesystem;

namespace {

constexpr int k_tasks = 6, k_runs = 3;

gate::testing::Script yes() {
  gate::testing::Script s;
  s.rules.push_back({"", {"yes"}});
  return s;
}

bool has(const std::string& hay, const std::string& needle) {
  const bool found = hay.find(needle) != std::string::npos;
  if (!found) MESSAGE("expected \"" << needle << "\" in:\n" << hay);
  return found;
}

// Six tasks whose check wants "yes", and a gate.yaml at `base_url`.
void write_suite(const fs::path& dir, const std::string& base_url) {
  std::string cases;
  for (int i = 1; i <= k_tasks; ++i)
    cases += R"({"id": "t)" + std::to_string(i) + R"(", "input": "question )" + std::to_string(i) +
             R"(", "checks": [{"type": "contains", "value": "yes"}]})" + "\n";
  spit(dir / "cases.jsonl", cases);
  Result created = run_gate({"suite", "create", "suite", "--name", "made", "--from", "cases.jsonl"}, dir);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
  spit(dir / "gate.yaml",
       "suite:\n  path: suite\nmodel:\n  provider: openai\n  base_url: " + base_url +
           "\n  api_key_env: GATE_MADE_KEY\n  name: m\n  temperature: 0\nruns: " + std::to_string(k_runs) +
           "\nconcurrency: 1\ncache:\n  dir: cache\n  mode: replay\n");
}

// What a report holds: its runs, those that failed without an error (a
// run never made written as one looks so), and not_made (0 when absent).
struct Held {
  int runs = 0, silent_failures = 0;
  std::int64_t not_made = 0;
};

Held held(const fs::path& report) {
  Held h;
  const auto r = read_json(report);
  if (const auto* n = r.as_object().if_contains("not_made")) h.not_made = n->as_int64();
  for (const auto& t : r.at("tasks").as_array())
    for (const auto& run : t.at("runs").as_array()) {
      ++h.runs;
      h.silent_failures += !run.at("passed").as_bool() && run.at("error").as_string().empty();
    }
  return h;
}

} // namespace

TEST_CASE("no key exported: nothing measured is n/a, every run is not made, none is a failure") {
  gate::testing::FakeUpstream upstream(yes());
  upstream.start();
  TempDir tmp;
  write_suite(tmp.path(), upstream.base_url());
  Result r = run_gate({"run", "--config", "gate.yaml", "--out", "out"}, tmp.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(has(r.err, "no API key: environment variable GATE_MADE_KEY is not set"));
  CHECK(has(r.out, "made v1: success n/a (0 of 0 runs measured) over 0 measured runs of 0 tasks; "
                   "consistency gap n/a; 0 of 0 runs replayed; 0 errored; 18 not made"));
  CHECK(r.out.find("0.0%") == std::string::npos);
  const Held h = held(tmp.path() / "out" / "report.json");
  CHECK(h.runs == 0);
  CHECK(h.not_made == k_tasks * k_runs);
  CHECK(upstream.requests() == 0);
}

TEST_CASE("part of the cache filled, then no key: the replayed runs are measured, the rest not made") {
  gate::testing::FakeUpstream upstream(yes());
  upstream.start();
  TempDir tmp;
  write_suite(tmp.path(), upstream.base_url());
  // Half of the suite recorded with the key.
  Result half = run_gate({"run", "--config", "gate.yaml", "--out", "half", "--shard", "1/2", "--quiet"},
                         tmp.path(), {{"GATE_MADE_KEY", "sk-made-not-a-secret-0001"}});
  INFO(half.out << half.err);
  REQUIRE(half.exit_code == 0);
  const auto recorded = static_cast<int>(upstream.requests());
  REQUIRE(recorded > 0);
  REQUIRE(recorded < k_tasks * k_runs);

  Result r = run_gate({"run", "--config", "gate.yaml", "--out", "out"}, tmp.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  const Held h = held(tmp.path() / "out" / "report.json");
  CHECK(h.silent_failures == 0);
  CHECK(h.runs + h.not_made == k_tasks * k_runs);
  CHECK(h.not_made > 0);
  CHECK(h.runs <= recorded);
  if (h.runs > 0)
    CHECK(has(r.out, "success 100.0% "));
  else
    CHECK(has(r.out, "success n/a (0 of 0 runs measured)"));
  CHECK(has(r.out, "over " + std::to_string(h.runs) + " measured runs"));
  CHECK(has(r.out, "; " + std::to_string(h.not_made) + " not made"));
  CHECK(upstream.requests() == static_cast<std::size_t>(recorded));
}

TEST_CASE("a plain-http URL gate refuses: every run not made, nothing sent") {
  TempDir tmp;
  // .invalid never resolves; the refusal comes before any lookup.
  write_suite(tmp.path(), "http://gate-test.invalid/v1");
  Result r = run_gate({"run", "--config", "gate.yaml", "--out", "out"}, tmp.path(),
                      {{"GATE_MADE_KEY", "sk-made-not-a-secret-0001"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK(has(r.err, "plain http:// to gate-test.invalid would send the API key in clear text"));
  CHECK(has(r.out, "success n/a (0 of 0 runs measured)"));
  CHECK(has(r.out, "; 18 not made"));
  const Held h = held(tmp.path() / "out" / "report.json");
  CHECK(h.runs == 0);
  CHECK(h.not_made == k_tasks * k_runs);
}

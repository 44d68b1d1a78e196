// End-to-end: a suite with a pricing table recorded from the fake upstream
// (which reports usage), then replayed offline: the report's paid and
// recorded cost, the cost check, and the verdict's cost line.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

double number(const boost::json::value& v) {
  return v.is_int64() ? static_cast<double>(v.as_int64()) : v.as_double();
}

// $1000 per million prompt tokens and $2000 per million completion tokens:
// a token costs a tenth or a fifth of a cent, so the sums are easy to read.
double priced(std::int64_t prompt, std::int64_t completion) {
  return static_cast<double>(prompt) * 1000 / 1e6 + static_cast<double>(completion) * 2000 / 1e6;
}

const boost::json::object& task(const boost::json::value& report, const std::string& id) {
  for (const auto& t : report.at("tasks").as_array())
    if (t.at("id").as_string() == id) return t.as_object();
  throw std::runtime_error("no task " + id);
}

} // namespace

TEST_CASE(
    "cost: recorded with a pricing table, replayed offline; paid and cached apart; the verdict shows both") {
  gate::testing::FakeUpstream upstream(gate::testing::parse_script(R"({"rules": [
    {"match": "capital", "answers": ["Paris."]},
    {"match": "essay", "answers": ["A long essay about many things."]}]})"));
  upstream.start();
  TempDir tmp;
  const fs::path dir = tmp.path();
  spit(dir / "cases.jsonl",
       R"({"id": "capital", "input": "Name the capital of France.", "checks": [)"
       R"({"type": "contains", "value": "Paris"}, {"type": "cost", "max_usd": 1}]})"
       "\n"
       R"({"id": "essay", "input": "Write an essay.", "checks": [{"type": "cost", "max_usd": 0.001}]})"
       "\n");
  Result created = run_gate({"suite", "create", "suite", "--name", "cost", "--from", "cases.jsonl"}, dir);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
  spit(dir / "gate.yaml", "suite:\n  path: suite\nmodel:\n  base_url: " + upstream.base_url() +
                              "\n  name: m\nruns: 2\ncache:\n  dir: cache\n"
                              "pricing:\n  m: {prompt: 1000, completion: 2000}\n"
                              "  other-model:\n    prompt: 0\n    completion: 0\n");

  Result rec =
      run_gate({"run", "--config", "gate.yaml", "--out", "rec", "--quiet"}, dir, {{"OPENAI_API_KEY", "k"}});
  INFO(rec.out << rec.err);
  REQUIRE(fs::exists(dir / "rec" / "report.json"));
  CHECK(upstream.requests() == 4);
  const auto a = read_json(dir / "rec" / "report.json");
  CHECK(a.at("config").at("pricing").at("m").at("completion") == 2000);
  double suite_paid = 0;
  for (const char* id : {"capital", "essay"}) {
    const auto& t = task(a, id);
    const auto& runs = t.at("runs").as_array();
    double paid = 0;
    for (const auto& r : runs) {
      const double cost = priced(r.at("prompt_tokens").as_int64(), r.at("completion_tokens").as_int64());
      paid += cost;
      // capital: the check passes at $1; essay: every run costs more than
      // $0.001 (a token is at least $0.001), so its check fails.
      CHECK(r.at("passed").as_bool() == (std::string(id) == "capital"));
    }
    INFO(id);
    CHECK(number(t.at("stats").at("cost_usd")) == doctest::Approx(paid));
    CHECK(number(t.at("stats").at("cached_cost_usd")) == 0.0);
    suite_paid += paid;
  }
  // Both tasks' prompts have at least 3 tokens (prompt words + 3) and 2
  // completion tokens: at least $0.007 a run.
  CHECK(suite_paid >= 4 * 0.007);
  CHECK(number(a.at("stats").at("cost_usd")) == doctest::Approx(suite_paid));
  CHECK(number(a.at("stats").at("cached_cost_usd")) == 0.0);

  // Offline: every run is a hit, pays nothing, and keeps its recorded cost.
  Result rep = run_gate({"run", "--config", "gate.yaml", "--out", "rep", "--quiet", "--mode", "replay-only"},
                        dir, {{"OPENAI_API_KEY", ""}});
  INFO(rep.out << rep.err);
  CHECK(rep.exit_code == rec.exit_code);
  CHECK(upstream.requests() == 4);
  const auto b = read_json(dir / "rep" / "report.json");
  CHECK(number(b.at("stats").at("cost_usd")) == 0.0);
  CHECK(number(b.at("stats").at("cached_cost_usd")) == doctest::Approx(suite_paid));
  // The cost check judged the recorded tokens: the same outcomes.
  CHECK(task(b, "capital").at("runs").at(0).at("passed").as_bool());
  CHECK_FALSE(task(b, "essay").at("runs").at(0).at("passed").as_bool());

  Result cmp = run_gate({"compare", "--baseline", "rec/report.json", "--current", "rep/report.json",
                         "--format", "md", "--json", "verdict.json"},
                        dir);
  INFO(cmp.out << cmp.err);
  CHECK(cmp.exit_code == 0);
  CHECK(cmp.out.find("**Cost (not gated)**: paid $") != std::string::npos);
  CHECK(cmp.out.find("→ $0; replayed runs, as recorded $0 → $") != std::string::npos);
  const auto verdict = read_json(dir / "verdict.json");
  CHECK(number(verdict.at("cost").at("baseline").at("paid_usd")) == doctest::Approx(suite_paid));
  CHECK(number(verdict.at("cost").at("current").at("paid_usd")) == 0.0);
  CHECK(number(verdict.at("cost").at("current").at("cached_usd")) == doctest::Approx(suite_paid));
}

TEST_CASE("cost: a negative price is refused with the file, line and column, before any call") {
  TempDir tmp;
  spit(tmp.path() / "gate.yaml",
       "suite:\n  path: suite\nmodel:\n  name: m\npricing:\n  m: {prompt: 1, completion: -2}\n");
  Result r = run_gate({"config", "show", "--config", "gate.yaml"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("gate.yaml:6:") != std::string::npos);
  CHECK(r.err.find("pricing.m.completion: expected a number >= 0") != std::string::npos);
}

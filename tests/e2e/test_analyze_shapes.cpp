// End-to-end: `gate analyze` on logs shaped like the common harnesses'
// published results (synthetic content, the published field layout): what
// the data hold is measured, what they do not hold reads n/a, and a seed
// that the harness gives each trial by design is not route pollution.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

fs::path fixture(const char* name) { return source_dir() / "fixtures" / "analyze" / name; }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

double number(const boost::json::value& v) { return v.to_number<double>(); }

} // namespace

TEST_CASE("a tau-bench results list: pass^k as tau-bench computes it; answers, usage, routes, latency n/a") {
  TempDir tmp;
  // A JSON list of trials {task_id, trial, reward, info, traj}; traj holds
  // the OpenAI-form messages, tool calls included.
  Result r =
      run_gate({"analyze", fixture("tau_bench_results.json").string(), "--map", "run_id=trial", "--map",
                "messages=traj", "--suite-name", "tau-retail", "--suite-version", "1", "--out", "out"},
               tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "4 tasks, 12 runs, success 58.3%"));
  CHECK(has(r.out, "n/a route-polluted tasks"));
  const auto stats = read_json(tmp.path() / "out" / "report.json").at("stats").as_object();
  // tau-bench: pass^k = mean over tasks of C(c, k)/C(n, k); c = 2, 0, 2, 3 of 3.
  const auto& hat = stats.at("pass_hat_k").as_array();
  REQUIRE(hat.size() == 3);
  CHECK(number(hat[0]) == doctest::Approx(7.0 / 12));
  CHECK(number(hat[1]) == doctest::Approx(5.0 / 12)); // (1/3 + 0 + 1/3 + 1)/4
  CHECK(number(hat[2]) == doctest::Approx(0.25));
  // Every task's third trial took another path: trajectories read from traj.
  CHECK(number(stats.at("trajectory_inconsistency_pp")) == doctest::Approx(100));
  CHECK(number(stats.at("trajectory_similarity")) < 1.0);
  // Not in the data: answers, token usage, route fields, latency.
  CHECK(stats.at("answer_inconsistency_pp").is_null());
  CHECK(stats.at("token_band_outliers").is_null());
  CHECK(stats.at("polluted_tasks").is_null());
  CHECK(stats.at("call_latency").at("count").as_int64() == 0);
  const std::string md = slurp(tmp.path() / "out" / "report.md");
  CHECK(has(md, "| Answer inconsistency | n/a (not in the data) |"));
  CHECK(has(md, "| Token band outliers | n/a (not in the data) |"));
  CHECK(has(md, "| Route-polluted tasks | n/a (not in the data) |"));
  CHECK(has(md, "n/a (not in the data): no fresh run carries a latency"));
  CHECK_FALSE(has(md, "shared one route"));
  CHECK_FALSE(has(md, "Model calls"));

  // Compared with itself: nothing moved, the runs carry no fingerprints, the
  // token and latency rows are n/a and not gated.
  Result c = run_gate(
      {"compare", "--baseline", "out/report.json", "--current", "out/report.json", "--json", "v.json"},
      tmp.path());
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  CHECK(has(c.out, "(fingerprints unknown)"));
  const auto verdict = read_json(tmp.path() / "v.json");
  for (const auto& m : verdict.at("metrics").as_array())
    if (m.at("key") == "tokens_per_task" || m.at("key") == "p95_latency") {
      CHECK_FALSE(m.at("available").as_bool());
      CHECK_FALSE(m.at("gated").as_bool());
    }
}

TEST_CASE("tau2-bench simulations: the seed each trial gets by design is reported once, not pollution") {
  TempDir tmp;
  // Simulation records {task_id, trial, seed, reward_info, messages, …}:
  // trial r runs with seed s_r in every task.
  Result r = run_gate({"analyze", fixture("tau2_simulations.json").string(), "--map", "run_id=trial", "--map",
                       "reward=reward_info.reward", "--suite-name", "tau2-airline", "--suite-version", "1",
                       "--out", "out"},
                      tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto stats = read_json(tmp.path() / "out" / "report.json").at("stats").as_object();
  CHECK(stats.at("polluted_tasks").as_int64() == 0);
  const auto& seeds = stats.at("route_by_run").at("seed").as_array();
  REQUIRE(seeds.size() == 4);
  CHECK(seeds[0].as_string() == "626729");
  CHECK(seeds[1].as_string() == "373753");
  // airline_1 (3 of 4) and airline_3 (3 of 4) are mixed, airline_2 never
  // passes: the gap is 2 of 3 tasks, not 0 as when every task was polluted.
  CHECK(number(stats.at("consistency_gap_pp")) == doctest::Approx(200.0 / 3));
  CHECK(has(slurp(tmp.path() / "out" / "report.md"),
            "| Route by run: seed | 626729, 373753, 918475, 104459 |"));
  Result c = run_gate(
      {"compare", "--baseline", "out/report.json", "--current", "out/report.json", "--json", "v.json"},
      tmp.path());
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  CHECK_FALSE(has(c.out, "routes differ"));
  const auto verdict = read_json(tmp.path() / "v.json");
  for (const auto& m : verdict.at("metrics").as_array())
    if (m.at("key") == "consistency_gap") CHECK(m.at("gated").as_bool());
}

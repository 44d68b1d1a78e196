// report::to_json writes a large report's tasks in parts on several
// threads: the joined text must be what one pass writes.
#include <doctest.h>

#include <boost/json.hpp>
#include <string>

#include <gate/metrics/summary.hpp>
#include <gate/report/report.hpp>

using namespace gate;

namespace {

// `tasks` tasks of `k` runs. Runs of tasks whose index is a multiple of
// `every` went through route B, the others through A, the configured one.
report::Report large(std::size_t tasks, int k, std::size_t every) {
  report::Report r;
  r.gate_version = "0.1.0";
  r.suite = {"big", "1", std::string(64, 'f')};
  r.config = boost::json::parse(R"({"runs":3})");
  const results::Route a = {{"model", "m"}, {"seed", "7"}};
  const results::Route b = {{"model", "m"}, {"seed", "8"}};
  r.route = a;
  r.started_at = r.finished_at = "2026-01-02T03:04:05Z";
  for (std::size_t i = 0; i < tasks; ++i) {
    results::Task t{"t" + std::to_string(i), "s", "", "", {}};
    for (int j = 0; j < k; ++j) {
      results::Run run;
      run.index = j;
      run.passed = (i + static_cast<std::size_t>(j)) % 3 != 0;
      run.answer = "answer " + std::to_string(i);
      run.answer_sha256 = std::string(64, 'a');
      run.route = i % every == 0 ? b : a;
      t.runs.push_back(run);
    }
    r.tasks.push_back(std::move(t));
  }
  report::compute(r, {});
  return r;
}

} // namespace

TEST_CASE("a report written in parts is one valid JSON text, tasks in order, routes as in one pass") {
  // 7,000 tasks x 3 = 21,000 runs: past the size that is split.
  const report::Report r = large(7000, 3, 5);
  const std::string text = report::to_json(r);
  const boost::json::value v = boost::json::parse(text);
  const auto& tasks = v.at("tasks").as_array();
  REQUIRE(tasks.size() == 7000);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i].as_object();
    if (t.at("id").as_string() != "t" + std::to_string(i)) FAIL("task " << i << " is " << t.at("id"));
    // Route A is the one most runs used: only B's runs carry theirs.
    const bool carries = t.at("runs").as_array()[0].as_object().contains("route");
    if (carries != (i % 5 == 0)) FAIL("task " << i << " route written: " << carries);
  }
  CHECK_FALSE(v.as_object().contains("runs_route"));
  // The same report, split or not, is the same text: the first 2 tasks
  // written alone equal the start of the whole.
  report::Report head = r;
  head.tasks.resize(2);
  head.task_stats.resize(2);
  const std::string small = report::to_json(head);
  const std::string head_tasks =
      small.substr(small.find("\"tasks\": ["), small.rfind("\n]") - small.find("\"tasks\": ["));
  CHECK(text.find(head_tasks) != std::string::npos);
}

TEST_CASE("the most used route is counted over every part, first seen winning a tie") {
  // Every other task on B: 50/50 between A and B, and A is the configured
  // route, so A wins the tie...
  const report::Report even = large(7000, 3, 2);
  CHECK_FALSE(boost::json::parse(report::to_json(even)).as_object().contains("runs_route"));
  // ...while 2 of 3 tasks on B make B the runs' route, whichever part they
  // were counted in.
  report::Report most_b = large(7000, 3, 1);
  for (std::size_t i = 0; i < most_b.tasks.size(); i += 3)
    for (auto& run : most_b.tasks[i].runs)
      run.route = most_b.route;
  report::compute(most_b, {});
  const auto v = boost::json::parse(report::to_json(most_b));
  REQUIRE(v.as_object().contains("runs_route"));
  CHECK(v.at("runs_route").at("seed").as_string() == "8");
  CHECK(v.at("tasks").as_array()[0].at("runs").as_array()[0].as_object().contains("route"));
  CHECK_FALSE(v.at("tasks").as_array()[1].at("runs").as_array()[0].as_object().contains("route"));
}

TEST_CASE("report::compute of a large report: every task's stats, whichever part computed them") {
  const report::Report r = large(7000, 3, 5);
  REQUIRE(r.task_stats.size() == 7000);
  for (std::size_t i : {0u, 1u, 3499u, 3500u, 3501u, 6999u}) {
    CAPTURE(i);
    const metrics::TaskStats alone = metrics::task_stats(r.tasks[i], {});
    CHECK(r.task_stats[i].c == alone.c);
    CHECK(r.task_stats[i].n == alone.n);
    CHECK(r.task_stats[i].pass_at_k == alone.pass_at_k);
    CHECK(r.task_stats[i].route_polluted == alone.route_polluted);
  }
  // Runs i + j with (i + j) % 3 != 0 passed: 2 of every 3 runs.
  CHECK(r.stats.total_runs == 21000);
  CHECK(r.stats.overall.passed == 14000);
  CHECK(r.stats.overall.success_rate == doctest::Approx(14000.0 / 21000.0));
}

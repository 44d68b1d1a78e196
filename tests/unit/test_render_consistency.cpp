// The Markdown "Consistency" section: words from the numbers in the report.
#include <doctest.h>

#include <boost/json.hpp>
#include <stdexcept>

#include <gate/render/markdown.hpp>
#include <gate/render/markdown_consistency.hpp>

using namespace gate;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Built by hand, not by metrics: rendering only formats what it is given.
report::Report sample() {
  report::Report r;
  r.suite = {"ext", "1", ""};
  r.config = boost::json::object{{"token_band_pct", 25}, {"include_polluted", false}};
  r.options = {25, false};
  for (const char* id : {"a|b", "t2", "t3"}) {
    results::Task t;
    t.id = id;
    for (int i = 0; i < 3; ++i) {
      results::Run run;
      run.index = i;
      run.passed = true;
      run.tool_calls = {{"search", "h1"}};
      t.runs.push_back(run);
    }
    r.tasks.push_back(t);
    r.task_stats.emplace_back();
  }
  r.task_stats[0].trajectory_consistent = false;
  r.task_stats[0].first_divergence = 7;
  r.task_stats[0].trajectory_similarity = 0.5;
  r.task_stats[0].has_tool_calls = true;
  r.task_stats[1].token_band_outliers = {1, 2};
  r.task_stats[2].route_polluted = true;
  auto& s = r.stats;
  s.consistency_gap_pp = 12.5;
  s.trajectory_inconsistency_pp = 33.3;
  s.trajectory_similarity = 0.8333;
  s.first_divergence_histogram = {{0, 1}, {7, 4}, {9, 2}};
  s.token_band_outliers = 2;
  s.polluted_tasks = 1;
  return r;
}

std::string section(const report::Report& r) {
  std::string out;
  render::consistency_section(r, {}, out);
  return out;
}

} // namespace

TEST_CASE("the section says where runs split and what it points at") {
  std::string md = section(sample());
  CHECK(has(md, "## Consistency\n"));
  CHECK(has(md, "Consistency gap 12.5 pp"));
  CHECK(has(md, "trajectory inconsistency 33.3 pp"));
  CHECK(has(md, "mean trajectory similarity 0.833"));
  // Step 7 holds the most tasks (4 of 1 + 4 + 2).
  CHECK(has(md, "**Runs diverge mostly at step 7** (4 tasks): look at context truncation"));
  CHECK(has(md, "All first divergences: step 0 (1 task), step 7 (4 tasks), step 9 (2 tasks)."));
  // The divergent task's row, its id escaped for the table.
  CHECK(has(md, "| a\\|b | 7 | 0.500 | no |\n"));
  CHECK(has(md, "2 runs' tokens fall outside ±25% of their task's median"));
  CHECK(has(md, "t2 runs 1, 2."));
  CHECK(has(md, "1 route-polluted task is kept out of the consistency gap"));
}

TEST_CASE("a split at step 0 points at the prompt; ties go to the earlier step") {
  auto r = sample();
  r.stats.first_divergence_histogram = {{0, 3}, {4, 3}};
  CHECK(has(section(r), "**Runs diverge mostly at step 0** (3 tasks): look at the prompt and the routing"));
}

TEST_CASE("include_polluted, no outliers, no divergence") {
  auto r = sample();
  r.config.as_object()["include_polluted"] = true;
  r.config.as_object()["token_band_pct"] = 12.5;
  r.options = {12.5, true};
  r.stats.token_band_outliers = 0;
  r.stats.first_divergence_histogram.clear();
  std::string md = section(r);
  CHECK(has(md, "1 route-polluted task is counted in the consistency gap (include_polluted is on)"));
  CHECK(has(md, "No run's tokens fall outside ±12.5% of its task's median."));
  CHECK(has(md, "Every task's runs made the same sequence of tool calls."));
}

TEST_CASE("no section without trajectories; it is part of the whole report") {
  auto r = sample();
  CHECK(has(render::report_markdown(r), "## Consistency\n"));
  for (auto& t : r.tasks)
    for (auto& run : t.runs)
      run.tool_calls.clear();
  CHECK(section(r).empty());
  CHECK_FALSE(has(render::report_markdown(r), "## Consistency\n"));
  r.task_stats.pop_back();
  std::string out;
  CHECK_THROWS_AS(render::consistency_section(r, {}, out), std::logic_error);
}

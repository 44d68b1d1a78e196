#include <doctest.h>

#include <boost/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <gate/render/markdown.hpp>
#include <gate/util/text.hpp>

using namespace gate;
using report::Report;

namespace {

const std::string k_wj = "\xE2\x81\xA0"; // U+2060 WORD JOINER

results::Run run(int index, bool passed, const std::string& answer, double latency_ms) {
  results::Run r;
  r.index = index;
  r.passed = passed;
  r.answer = answer;
  r.checks = {{"mentions Paris", passed, passed ? "" : "got Lyon"}};
  r.latency_ms = latency_ms;
  r.route = {{"model", "m-1"}, {"temperature", "0"}};
  return r;
}

// Stats are set by hand: rendering formats, it never computes. The numbers
// are chosen so that each printed value can be checked by eye.
Report sample() {
  Report r;
  r.gate_version = "0.1.0";
  r.suite = {"capitals|evil", "2", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"};
  r.config = boost::json::parse(R"({"token_band_pct":30})");
  r.options.token_band_pct = 30;
  r.started_at = "2026-01-02T03:04:05Z";
  r.finished_at = "2026-01-02T03:05:06Z";

  results::Task flaky{"geo-1",
                      "geo",
                      "easy",
                      "",
                      {run(0, true, "Paris", 800), run(1, false, "Lyon", 900), run(2, true, "Paris", 1000)}};
  results::Task stable{"geo-2",
                       "geo",
                       "easy",
                       "",
                       {run(0, true, "Rome", 700), run(1, true, "Rome", 700), run(2, true, "Rome", 700)}};
  stable.runs[1].route["temperature"] = "0.7";
  std::string evil_answer = "[x](http://evil) ``` | @org/team\n::error::x";
  results::Task evil{
      "</details><img src=x>",
      "@org/team",
      "hard",
      "",
      {run(0, false, evil_answer, 1), run(1, false, evil_answer, 1), run(2, false, evil_answer, 1)}};
  results::Task errored{
      "t-err", "", "hard", "", {run(0, false, "", 0), run(1, false, "", 0), run(2, false, "", 0)}};
  for (auto& e : errored.runs) {
    e.error = "timeout";
    e.error_message = "no response within 60 s";
    e.checks.clear();
  }
  r.tasks = {evil, flaky, stable, errored};

  metrics::TaskStats s_evil;
  s_evil.n = 3;
  metrics::TaskStats s_flaky;
  s_flaky.n = 3;
  s_flaky.c = 2;
  s_flaky.mixed = true;
  metrics::TaskStats s_stable;
  s_stable.n = 3;
  s_stable.c = 3;
  s_stable.route_polluted = true;
  s_stable.route_diff = {"temperature"};
  metrics::TaskStats s_err;
  s_err.errored = 3;
  r.task_stats = {s_evil, s_flaky, s_stable, s_err};

  auto& s = r.stats;
  // 5 passed of 9 non-errored runs = 55.6%.
  s.overall = {3, 9, 5, 5.0 / 9.0, {0.1, 0.9}, "t over tasks"};
  s.by_scenario["geo"] = {2, 6, 5, 5.0 / 6.0, {0.5, 1.0}, "t over tasks"};
  s.by_scenario["@org/team"] = {1, 3, 0, 0.0, {0.0, 0.561}, "wilson"};
  s.by_difficulty["easy"] = {2, 6, 5, 5.0 / 6.0, {0.5, 1.0}, "t over tasks"};
  s.by_difficulty["hard"] = {1, 3, 0, 0.0, {0.0, 0.561}, "wilson"};
  s.pass_at_k = {5.0 / 9.0, 2.0 / 3.0, 2.0 / 3.0};
  s.pass_hat_k = {5.0 / 9.0, 4.0 / 9.0, 1.0 / 3.0};
  s.consistency_gap_pp = 100.0 / 3.0; // pass@3 − pass^3 = 2/3 − 1/3
  s.mixed_share_pp = 100.0 / 3.0;
  s.answer_inconsistency_pp = 100.0 / 3.0;
  s.trajectory_similarity = 1.0;
  s.trajectory_inconsistency_pp = 0.0;
  s.token_band_outliers = 0;
  s.polluted_tasks = 1;
  s.pass_k_tasks = 3;
  s.total_runs = 12;
  s.errored_runs = 3;
  s.error_rate = 0.25;
  s.errors_by_bucket = {{"timeout", 3}};
  s.prompt_tokens = 1200;
  s.completion_tokens = 300;
  s.cached_tokens = 500;
  s.paid_tokens = 1000;
  s.tokens_per_task = 375; // 1500 / 4
  s.call_latency = {6, 812.4, 1500.25, 1720};
  s.run_latency = {6, 812.4, 1500.25, 1720};
  return r;
}

bool has(const std::string& doc, const std::string& part) { return doc.find(part) != std::string::npos; }

std::size_t count(const std::string& doc, const std::string& part) {
  std::size_t n = 0;
  for (auto p = doc.find(part); p != std::string::npos; p = doc.find(part, p + 1))
    ++n;
  return n;
}

// Unescaped pipes on a line: the number of cell borders GFM sees.
std::size_t borders(const std::string& line) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '|') continue;
    std::size_t slashes = 0;
    while (slashes < i && line[i - 1 - slashes] == '\\')
      ++slashes;
    if (slashes == 0) ++n;
  }
  return n;
}

// Every row of every table has as many cells as the table's header.
void check_tables(const std::string& doc) {
  std::istringstream in(doc);
  std::string line;
  std::size_t expected = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|') {
      expected = 0;
      continue;
    }
    if (expected == 0) expected = borders(line);
    INFO("line: ", line);
    CHECK(borders(line) == expected);
  }
}

} // namespace

TEST_CASE("headline and metric definitions carry the report's numbers") {
  std::string md = render::report_markdown(sample());
  check_tables(md);
  CHECK(valid_utf8(md));
  CHECK(md.rfind("# gate report: capitals\\|evil 2\n", 0) == 0);
  CHECK(has(md, "suite sha256 ` 0123456789ab ` · gate 0.1.0 · started 2026-01-02T03:04:05Z · finished "
                "2026-01-02T03:05:06Z\n"));
  CHECK(has(
      md, "**Success rate 55.6%** (95% interval 10.0% – 90.0%, t over tasks) · 4 tasks × 3 runs · 3 errored "
          "runs\n"));
  CHECK(has(md, "| Success rate | 55.6% | passed runs ÷ runs that did not error |\n"));
  CHECK(has(md, "| pass@1 | 55.6% |"));
  CHECK(has(md, "| pass@2 | 66.7% |"));
  CHECK(has(md, "| pass^2 | 44.4% |"));
  CHECK(has(md, "| pass^3 | 33.3% |"));
  CHECK(
      has(md, "| Consistency gap | 33.3 pp | pass@k − pass^k at k = 3: share of tasks with mixed outcomes"));
  CHECK(has(md, "| pass@k, pass^k coverage | k = 1..3 | over 3 tasks with 3 or more measured runs |"));
  CHECK(has(md, "| Answer inconsistency | 33.3 pp |"));
  CHECK(has(md, "| Trajectory inconsistency | 0.0 pp |"));
  CHECK(has(md, "| Trajectory similarity | 1.000 |"));
  CHECK(
      has(md, "| Token band outliers | 0 runs | runs whose tokens fall outside ±30% of their task's median"));
  CHECK(has(md, "| Route-polluted tasks | 1 |"));
  CHECK_FALSE(has(md, "Group completion"));
  CHECK_FALSE(has(md, "Incomplete"));
}

TEST_CASE("breakdowns, tokens, latency and errors") {
  std::string md = render::report_markdown(sample());
  CHECK(has(md, "## By scenario\n\n| Scenario | Tasks | Runs | Success | 95% interval |\n"));
  // 5 of 6 = 83.3%; the scenario name is escaped like any text.
  CHECK(has(md, "| geo | 2 | 6 | 83.3% | 50.0% – 100.0% |\n"));
  CHECK(has(md, "| @" + k_wj + "org/team | 1 | 3 | 0.0% | 0.0% – 56.1% |\n"));
  CHECK(has(md, "| hard | 1 | 3 | 0.0% | 0.0% – 56.1% |\n"));
  CHECK(has(md, "| Prompt | 1200 |\n| Completion | 300 |\n| From cache (no cost) | 500 |\n| Paid | 1000 |\n"
                "| Per task | 375.0 |\n"));
  CHECK(has(md, "| Model calls | 6 | 812 ms | 1500 ms | 1720 ms |\n"));
  CHECK(has(md, "3 of 12 runs errored (25.0%)"));
  CHECK(has(md, "| timeout | 3 |\n"));
}

TEST_CASE("tokens: when no run reported usage the table says n/a, not 0") {
  Report r = sample();
  for (auto& t : r.tasks)
    for (auto& run : t.runs) {
      run.usage_known = false;
      run.prompt_tokens = run.completion_tokens = 0;
    }
  report::compute(r, {});
  std::string md = render::report_markdown(r);
  CHECK(has(md, "| Prompt | n/a |\n| Completion | n/a |\n| From cache (no cost) | n/a |\n| Paid | n/a |\n"
                "| Per task | n/a |\n"));
  CHECK(has(md, "Token usage: n/a (not in the data) (no run reported usage)."));
}

TEST_CASE("failing and flaky tasks, with untrusted text made inert") {
  std::string md = render::report_markdown(sample());
  CHECK(has(md, "| geo-1 | geo | 2/3 | flaky | mentions Paris: got Lyon | Lyon |\n"));
  CHECK(has(
      md, "| &lt;/details&gt;&lt;img src=x&gt; | @" + k_wj +
              "org/team | 0/3 | failing | mentions Paris (3 runs): got Lyon | \\[x\\](http://evil) \\`\\`\\` "
              "\\| @" +
              k_wj + "org/team ::error::x |\n"));
  CHECK(has(md, "| t-err |  | 0/0 (+3 errored) | errored | error: timeout (3 runs): no response within 60 s "
                "|  |\n"));
  CHECK_FALSE(has(md, "| geo-2 | geo |"));
  // Three rows do not fold at the default of 10.
  CHECK_FALSE(has(md, "<details>"));
  CHECK_FALSE(has(md, "<img"));
  CHECK_FALSE(has(md, "\n::error::"));
  // Our own "pass@k" aside, every @ comes from data and is neutralized.
  CHECK(count(md, "@") - count(md, "pass@") == count(md, "@" + k_wj));
  CHECK(count(md, "@" + k_wj) == 3);
  CHECK(has(md, "## Route-polluted tasks"));
  CHECK(has(md, "| geo-2 | temperature: 0 / 0.7 |\n"));
}

TEST_CASE("a failing task's question stands beside its answer, escaped, from the last user turn on") {
  report::Report r = sample();
  for (auto& t : r.tasks)
    if (t.id == "geo-1") {
      t.input = "system: Shared policy text.\n\nuser: Capital of </details> | France? @org/team";
      t.input_sha256 = std::string(64, 'c');
    }
  std::string md = render::report_markdown(r);
  CHECK(has(md, "| Failing checks | Input (excerpt) | Answer (excerpt) |"));
  CHECK(has(md, "| mentions Paris: got Lyon | user: Capital of &lt;/details&gt; \\| France? @" + k_wj +
                    "org/team | Lyon |\n"));
  CHECK_FALSE(has(md, "Shared policy text"));
}

TEST_CASE("long lists fold inside <details> and are capped with an explicit line") {
  render::MarkdownOptions o;
  o.fold_after = 2;
  o.max_rows = 1;
  std::string md = render::report_markdown(sample(), o);
  check_tables(md);
  CHECK(has(md, "<details><summary>3 failing and flaky tasks</summary>\n\n| Task |"));
  CHECK(has(md, "2 more not shown; the full list is in the JSON report.\n\n</details>\n"));
  // Untrusted text cannot close the fold early: the only tags are ours.
  CHECK(count(md, "<details>") == 1);
  CHECK(count(md, "</details>") == 1);
  CHECK(count(md, "<") == 4); // <details>, <summary>, </summary>, </details>
}

TEST_CASE("incomplete reports, cache-only runs and group completion") {
  Report r = sample();
  r.complete = false;
  r.incomplete_reason = "interrupted (SIGINT)";
  r.stats.call_latency = {};
  r.stats.cache_hits = r.stats.total_runs;
  r.stats.group_completion = 0.5;
  r.stats.runs_without_usage = 2;
  r.stats.errored_runs = 0;
  std::string md = render::report_markdown(r);
  CHECK(has(
      md, "> **Incomplete report**: interrupted (SIGINT). The numbers cover only the runs that finished.\n"));
  CHECK(has(md, "All runs replayed from cache"));
  CHECK_FALSE(has(md, "| Model calls |"));
  CHECK(has(md,
            "| Group completion | 50.0% | mean over runs of the share of groups whose every task passed |"));
  CHECK(has(md, "2 runs had no usage reported: their tokens are unknown, not zero."));
  CHECK(has(md, "No errored runs."));
}

TEST_CASE("a suite where everything passes says so") {
  Report r = sample();
  r.tasks.erase(r.tasks.begin());
  r.task_stats.erase(r.task_stats.begin());
  r.tasks.erase(r.tasks.begin());
  r.task_stats.erase(r.task_stats.begin());
  r.tasks.pop_back();
  r.task_stats.pop_back();
  r.task_stats[0].route_polluted = false;
  r.stats.first_divergence_histogram = {{0, 2}, {4, 1}};
  std::string md = render::report_markdown(r);
  CHECK(has(md, "None: every task passed in every run that did not error."));
  CHECK_FALSE(has(md, "Route-polluted tasks\n"));
  CHECK(has(md, "| Step | Tasks |\n|---:|---:|\n| 0 | 2 |\n| 4 | 1 |\n"));
  CHECK(has(md, "· 1 task × 3 runs ·"));
}

TEST_CASE("10,000 failing tasks with hostile text stay under 1 MiB, with an explicit cut") {
  Report r = sample();
  results::Task proto = r.tasks[0];
  metrics::TaskStats stats = r.task_stats[0];
  r.tasks.clear();
  r.task_stats.clear();
  // '@' and '<' escape to 4 bytes each: the worst expansion.
  std::string hostile;
  for (int i = 0; i < 500; ++i)
    hostile += "@<";
  for (int i = 0; i < 10000; ++i) {
    results::Task t = proto;
    t.id = std::to_string(i) + hostile;
    t.scenario = hostile;
    for (auto& run : t.runs) {
      run.answer = hostile;
      run.checks = {};
      for (int c = 0; c < 8; ++c)
        run.checks.push_back({std::to_string(c) + hostile, false, hostile});
    }
    r.tasks.push_back(t);
    r.task_stats.push_back(stats);
  }
  std::string md = render::report_markdown(r);
  CHECK(md.size() <= 1048576);
  // 200 rows of ~4.5 kB would be ~900 kB: the 400 kB list budget cut first.
  CHECK(md.size() < 450000);
  CHECK(has(md, "more not shown; the full list is in the JSON report."));
  CHECK(has(md, "<details><summary>10000 failing and flaky tasks</summary>"));
  check_tables(md);
}

TEST_CASE("a resumed report says how many runs came from the interrupted run") {
  Report r = sample();
  CHECK_FALSE(has(render::report_markdown(r), "Resumed"));
  r.resumed = report::Resumed{"2026-01-01T00:00:00Z|<b>", 7};
  std::string md = render::report_markdown(r);
  CHECK(has(
      md,
      "\n\nResumed: 7 of 12 runs came from the interrupted run of 2026-01-01T00:00:00Z\\|&lt;b&gt;.\n\n"));
  r.resumed->runs = 812;
  r.stats.total_runs = 1234567;
  CHECK(has(render::report_markdown(r), "Resumed: 812 of 1,234,567 runs came from"));
}

TEST_CASE("numbers whose inputs are not in the data read n/a, never 0 or a perfect score") {
  // As imported from a harness log that records outcomes only: no answers,
  // tool calls, usage, latency or route fields.
  Report r;
  r.suite = {"imported", "1", ""};
  for (int i = 0; i < 4; ++i) {
    gate::results::Task t;
    t.id = "t" + std::to_string(i);
    for (int j = 0; j < 2; ++j) {
      gate::results::Run run;
      run.index = j;
      run.passed = (i + j) % 2 == 0;
      run.usage_known = false;
      t.runs.push_back(run);
    }
    r.tasks.push_back(t);
  }
  gate::report::compute(r, {});
  const auto& s = r.stats;
  CHECK(!s.answer_inconsistency_pp);
  CHECK(!s.trajectory_inconsistency_pp);
  CHECK(!s.trajectory_similarity);
  CHECK(!s.token_band_outliers);
  CHECK(!s.polluted_tasks);
  CHECK(s.call_latency.count == 0);
  std::string md = render::report_markdown(r);
  CHECK(has(md, "| Answer inconsistency | n/a (not in the data) |"));
  CHECK(has(md, "| Trajectory inconsistency | n/a (not in the data) |"));
  CHECK(has(md, "| Trajectory similarity | n/a (not in the data) |"));
  CHECK(has(md, "| Token band outliers | n/a (not in the data) |"));
  CHECK(has(md, "| Route-polluted tasks | n/a (not in the data) |"));
  CHECK(has(md, "n/a (not in the data): no fresh run carries a latency"));
  CHECK(has(md, "Token usage: n/a (not in the data)"));
  CHECK_FALSE(has(md, "shared one route"));
  CHECK_FALSE(has(md, "p50 0.0"));
  const std::string json = gate::report::to_json(r);
  CHECK(has(json, "\"answer_inconsistency_pp\":null,\"trajectory_inconsistency_pp\":null,"
                  "\"trajectory_similarity\":null"));
  CHECK(has(json, "\"token_band_outliers\":null,\"polluted_tasks\":null"));
}

TEST_CASE("the cost line: only with pricing; paid and as recorded; n/a spelled out") {
  Report r = sample();
  CHECK_FALSE(has(render::report_markdown(r), "Cost ("));
  r.stats.priced = true;
  r.stats.cost_usd = 0.0123;
  r.stats.cached_cost_usd = std::nullopt;
  CHECK(has(render::report_markdown(r),
            "Cost (gate.yaml pricing, measured runs): paid $0.0123; replayed runs, as "
            "recorded (paid nothing now) n/a."));
}

#include <doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gate/compare/compare.hpp>
#include <gate/util/error.hpp>

#include "test_compare_support.hpp"

// The verdict in the workflows a team goes through (METRICS.md "Measured
// runs", "Unchanged inputs", "Scope", "Inconclusive", "Common k"), each on
// hand-made reports whose numbers can be checked by hand.

using namespace gate::compare;
using namespace gate::compare::test;
using doctest::Approx;
using gate::report::Report;
using gate::results::Run;
using gate::results::Task;

namespace {

// Every run of the task errored (a 429 after its retries).
Task errored(const std::string& tid, int n) {
  Task t = counted(tid, 0, n);
  for (Run& r : t.runs) {
    r.passed = false;
    r.error = "rate_limit";
    r.error_message = "HTTP 429: Rate limit reached";
    r.checks.clear();
    r.answer.clear();
    r.answer_sha256.clear();
  }
  return t;
}

std::vector<Task> many(int count, int c, int n, const std::string& prefix = "t") {
  std::vector<Task> out;
  for (int i = 0; i < count; ++i)
    out.push_back(counted(prefix + id(i), c, n));
  return out;
}

} // namespace

TEST_CASE("nothing measured is not a pass: every current run errored → could not measure, exit 3") {
  Report base = report(many(44, 2, 3, ""));
  std::vector<Task> tasks;
  for (int i = 0; i < 44; ++i)
    tasks.push_back(errored(id(i), 3));
  Verdict v = compare(base, report(tasks), {});
  CHECK(v.status == Status::unmeasured);
  CHECK(!v.passed());
  CHECK(v.exit == gate::Exit::cannot_run);
  CHECK(v.headline.find("passed") == std::string::npos);
  CHECK(v.headline ==
        "⛔ gate could not measure: current report: success n/a (0 of 132 runs measured); 132 of 132 runs "
        "errored (rate_limit 132); first: task t00 run 0: HTTP 429: Rate limit reached "
        "(thresholds.max_errored_runs_pct 5.0)");
  CHECK(v.metrics.empty());
}

TEST_CASE("errored runs up to max_errored_runs_pct are left out; above it the verdict cannot measure") {
  // 2 of 40 runs errored (5%): at the limit, judged; the task with no
  // measured run is listed apart and left out of the rates.
  std::vector<Task> tasks = many(19, 2, 2);
  tasks.push_back(errored("t" + id(19), 2));
  Report base = report(many(20, 2, 2));
  Verdict v = compare(base, report(tasks), {});
  CHECK(v.status != Status::unmeasured);
  CHECK(v.unmeasured == std::vector<std::string>{"t" + id(19)});
  CHECK(v.paired == 19);
  CHECK(row(v, "success_rate").tasks == 19);
  CHECK(row(v, "success_rate").current == Approx(100));
  Options strict;
  strict.thresholds.max_errored_runs_pct = 4;
  CHECK(compare(base, report(tasks), strict).status == Status::unmeasured);
}

TEST_CASE("a partial report is refused unless --allow-partial, then every form says what it covers") {
  Report base = report(many(10, 2, 3));
  Report cur = report(many(4, 2, 3));
  cur.complete = false;
  cur.incomplete_reason = "interrupted";
  try {
    compare(base, cur, {});
    FAIL("a partial report was compared");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    const std::string what = e.what();
    CHECK(what.find("the current report is incomplete (interrupted)") != std::string::npos);
    CHECK(what.find("4 of the baseline's 10 tasks (12 of 30 runs)") != std::string::npos);
    CHECK(what.find("--allow-partial") != std::string::npos);
  }
  Report shard = report(many(4, 2, 3));
  shard.config = boost::json::object{{"shard", {{"index", 2}, {"count", 4}}}};
  CHECK_THROWS_AS(compare(base, shard, {}), gate::Error);
  Options o;
  o.allow_partial = true;
  Verdict v = compare(base, shard, o);
  CHECK(v.coverage == "covers 4 of the baseline's 10 tasks (12 of 30 runs); the current report is shard 2/4");
  CHECK(v.headline.find("[partial: covers 4 of the baseline's 10 tasks (12 of 30 runs)]") !=
        std::string::npos);
  CHECK(std::find(v.warnings.begin(), v.warnings.end(), "partial comparison: " + v.coverage) !=
        v.warnings.end());
}

TEST_CASE("a re-recorded cache gives fresh samples, never a grader change") {
  // Same requests, replayed, but the answers of t01 are not the baseline's.
  Task b1 = recorded("t01", 3, 3), b2 = recorded("t02", 1, 3);
  Task a1 = replayed("t01", 1, 3), a2 = replayed("t02", 1, 3);
  Verdict v = compare(report({b1, b2}), report({a1, a2}), {});
  CHECK(v.rerecorded == 1);
  CHECK(v.unchanged_inputs == 1);
  CHECK(v.affected == 1);
  REQUIRE(v.tasks.size() == 1);
  CHECK(v.tasks[0].rerecorded);
  CHECK(!v.tasks[0].grader_change);
  CHECK(!v.tasks[0].regressed); // Fisher at k = 3 is 3/3 → 1/3: p = 0.2
  CHECK(std::any_of(v.warnings.begin(), v.warnings.end(), [](const std::string& w) {
    return w.find("1 tasks were re-recorded since the baseline") == 0 &&
           w.find("gate baseline update") != std::string::npos;
  }));
  // The same answers judged differently: that is the checks' doing.
  Verdict g = compare(report({b1, b2}), report({regraded(b1, {true, false, true}), a2}), {});
  REQUIRE(g.tasks.size() == 1);
  CHECK(g.tasks[0].grader_change);
  CHECK(g.tasks[0].regressed);
  CHECK(g.rerecorded == 0);
}

TEST_CASE("the threshold applies to the affected tasks: −30pp on 20 of 200 is −3pp suite-wide") {
  // 180 tasks replayed unchanged, 20 whose prompt changed: 3/3 → ... each
  // of the 20 loses exactly one pass in ten (hand-built: 2 of them 3/3 → 0/3).
  std::vector<Task> b, a;
  for (int i = 0; i < 180; ++i) {
    b.push_back(recorded("u" + id(i), 2, 3));
    a.push_back(replayed("u" + id(i), 2, 3));
  }
  for (int i = 0; i < 20; ++i) {
    b.push_back(counted("e" + id(i), 3, 3));
    Task t = counted("e" + id(i), i < 18 ? 2 : 3, 3); // 18 of the 20 lose one pass in three
    for (Run& r : t.runs)
      r.fingerprint = "v2-" + t.id;
    a.push_back(t);
  }
  Verdict v = compare(report(b), report(a), {});
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.scope_tasks == 20);
  CHECK(s.tasks == 200);
  CHECK(s.delta == Approx(-30));      // 18 · (−1/3) / 20
  CHECK(s.suite_delta == Approx(-3)); // the same over 200
  CHECK(v.unchanged_inputs == 180);
  CHECK(v.affected == 20);
  CHECK(s.failed);
  CHECK(v.headline.find("success rate fell 30.0pp on 20 affected tasks (−3.0pp suite-wide)") !=
        std::string::npos);
}

TEST_CASE("a small suite whose 5 changed tasks cannot reach significance is inconclusive") {
  // 15 tasks, 5 of them 3/3 → 0/3: Δ = −33.3pp, the sign-flip over 5
  // non-zero differences cannot go below 2^-5 = 0.031, 0.0625 after Holm over
  // the two gated metrics.
  // Every run sampled fresh: all 15 tasks are affected.
  std::vector<Task> b = many(15, 3, 3), a = many(10, 3, 3);
  for (int i = 10; i < 15; ++i)
    a.push_back(counted("t" + id(i), 0, 3));
  Verdict v = compare(report(b), report(a), {});
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.delta == Approx(-100.0 / 3));
  CHECK(*s.min_p == Approx(1.0 / 32));
  CHECK(s.inconclusive);
  CHECK(!s.failed);
  CHECK(v.status == Status::inconclusive);
  CHECK(v.exit == gate::Exit::pass); // on_inconclusive: warn
  CHECK(v.headline.rfind("⚠ gate inconclusive: success rate fell 33.3pp", 0) == 0);
  CHECK(v.headline.find("at least 6 tasks must change") != std::string::npos);
  Options fail;
  fail.thresholds.on_inconclusive = "fail";
  CHECK(compare(report(b), report(a), fail).exit == gate::Exit::threshold);
  // Six tasks can: 2^-6 · 2 = 0.031 < 0.05.
  a[9] = counted("t" + id(9), 0, 3);
  Verdict six = compare(report(b), report(a), {});
  CHECK(six.status == Status::failed);
}

TEST_CASE("k-dependent rows compare at the common k with the unbiased estimators") {
  // Baseline 2 runs, current 4 (the baseline's two and two more): 1/2 and
  // 2/4. At k = 2 both have gap 1 − 0 − 0 = 1 for 1/2; for 2/4 pass@2 =
  // 1 − C(2,2)/C(4,2) = 5/6, pass^2 = 1/6: gap 2/3.
  Report base = report({counted("a", 1, 2), counted("b", 2, 2)});
  Report cur = report({counted("a", 2, 4), counted("b", 4, 4)});
  Verdict v = compare(base, cur, {});
  const MetricRow& gap = row(v, "consistency_gap");
  REQUIRE(gap.k);
  CHECK(*gap.k == 2);
  CHECK(gap.baseline == Approx(50));
  CHECK(gap.current == Approx(100.0 / 3));
  CHECK(row(v, "pass_hat_k").name == "pass^2");
  CHECK(row(v, "pass_hat_k").current == Approx(100 * (1.0 / 6 + 1) / 2));
}

TEST_CASE("rows add up over the paired set; added tasks are left out and intervals stay possible") {
  Report base = report({counted("a", 3, 3), counted("b", 0, 3)});
  Report cur = report({counted("a", 3, 3), counted("b", 0, 3), counted("c", 3, 3)});
  Verdict v = compare(base, cur, {});
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.baseline == Approx(50));
  CHECK(s.current == Approx(50)); // c is not paired
  CHECK(s.suite_delta == Approx(0));
  CHECK(v.added == std::vector<std::string>{"c"});
  // Two tasks 0/3 → 3/3: Δ +100pp, its interval cannot pass +100.
  Verdict up = compare(report({counted("a", 0, 3), counted("b", 0, 3)}),
                       report({counted("a", 3, 3), counted("b", 3, 3)}), {});
  CHECK(row(up, "success_rate").delta_interval.high <= 100 + 1e-9);
  CHECK(row(up, "success_rate").delta_interval.low >= -1e-9);
}

TEST_CASE("a report compared with itself: every task unchanged; without fingerprints: unknown") {
  std::vector<Task> tasks;
  for (int i = 0; i < 50; ++i)
    tasks.push_back(recorded(id(i), 2, 3));
  Report r = report(tasks);
  Verdict v = compare(r, r, {});
  CHECK(v.unchanged_inputs == 50);
  CHECK(v.headline.find("50 tasks unchanged, 0 affected") != std::string::npos);
  Report imported = r;
  for (Task& t : imported.tasks)
    for (Run& run : t.runs)
      run.fingerprint.clear();
  gate::report::compute(imported, {});
  Verdict w = compare(imported, imported, {});
  CHECK(!w.fingerprints_known);
  CHECK(w.headline.find("50 tasks compared (fingerprints unknown)") != std::string::npos);
}

TEST_CASE("became stable by failing every run is named for what it is") {
  Verdict v = compare(report({counted("a", 1, 2)}), report({counted("a", 0, 2)}), {});
  REQUIRE(v.tasks.size() == 1);
  CHECK(v.tasks[0].became_stable);
  CHECK(v.tasks[0].stable_failing);
}

TEST_CASE("two reports under gate analyze's default suite name are refused unless allowed") {
  Report a = report(many(3, 1, 2)), b = report(many(3, 1, 2));
  a.suite = b.suite = {"external", "unversioned", ""};
  CHECK_THROWS_WITH_AS(compare(a, b, {}), doctest::Contains("default suite name"), gate::Error);
  Options o;
  o.allow_suite_change = true;
  CHECK(compare(a, b, o).status == Status::passed);
}

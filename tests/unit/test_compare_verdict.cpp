#include <doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gate/compare/compare.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

using namespace gate::compare;
using doctest::Approx;
using gate::report::Report;
using gate::results::Run;
using gate::results::Task;

#include "test_compare_support.hpp"

using namespace gate::compare::test;

TEST_CASE("the same counts sampled again pass, with the success noise floor in the headline") {
  Report r = report({counted("a", 3, 3), counted("b", 2, 3), counted("c", 1, 3), counted("d", 0, 3)});
  Report again = report({counted("a", 3, 3), counted("b", 2, 3), counted("c", 1, 3), counted("d", 0, 3)});
  Verdict v = compare(r, again, {});
  CHECK(v.passed());
  CHECK(v.exit == gate::Exit::pass);
  CHECK(v.reasons.empty());
  CHECK(v.warnings.empty());
  CHECK(v.tasks.empty());
  CHECK(v.paired == 4);
  CHECK(v.flips == 0);
  REQUIRE(v.metrics.size() == 6);
  for (const MetricRow& m : v.metrics) {
    INFO(m.key);
    CHECK(m.delta == 0);
    CHECK(!m.failed);
  }
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.baseline == Approx(50)); // 6 of 12 runs
  CHECK(s.p_value == 1.0);         // no non-zero difference: nothing to flip
  CHECK(*s.p_adjusted == 1.0);
  // Noise floor at Holm's level for two gated metrics, 0.05/2 = 0.025
  // (z = 1.959964). Binomial per task: p̂(1−p̂)·n/(n−1) = 0, 1/3, 1/3, 0, each
  // times (1/3 + 1/3): mean Var(d) = (4/9)/4 = 1/9, sd 1/3; normal floor
  // 100·(1.959964 + 0.841621)·(1/3)/√4 = 46.69pp; discrete floor: 2^-m < 0.025
  // needs m = 6 tasks moving by 1/3 each → 100·6/(3·4) = 50pp, the larger.
  CHECK(*s.noise_floor == Approx(50).epsilon(1e-6));
  // Consistency gap: b and c are mixed (ḡ = 1/2, T = 4); normal
  // 100·2.801585·√(2·¼/4) = 99.1pp; discrete 100·6/4 = 150pp, more than the
  // 50pp the mean gap can still rise: no rise is detectable, no floor.
  CHECK_FALSE(row(v, "consistency_gap").noise_floor.has_value());
  CHECK(row(v, "consistency_gap").baseline == Approx(50));
  CHECK(row(v, "pass_hat_k").name == "pass^3");
  CHECK(v.headline ==
        "✅ gate passed: success 50.0% → 50.0% (0.0pp, within noise ±50.0pp); 0 regressed; 0 tasks unchanged, "
        "4 affected");
}

TEST_CASE("20 tasks falling from 3/3 to 0/3 fail the gate on the success rate") {
  std::vector<Task> before, after;
  for (int i = 1; i <= 20; ++i) {
    before.push_back(counted(id(i), 3, 3));
    after.push_back(counted(id(i), 0, 3));
  }
  Verdict v = compare(report(before), report(after), {});
  CHECK(!v.passed());
  CHECK(v.exit == gate::Exit::threshold);
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.baseline == Approx(100));
  CHECK(s.current == Approx(0));
  CHECK(s.delta == Approx(-100));              // every d_i = 0 − 1
  CHECK(s.delta_interval.low == Approx(-100)); // sd 0
  CHECK(s.delta_interval.high == Approx(-100));
  // 20 non-zero differences > 16: Monte Carlo, p = (1 + hits)/20001 with the
  // exact tail 2^−20, so hits ~ Binomial(20000, 2^−20) is 0 (98%): 1/20001.
  CHECK(*s.p_value == Approx(1.0 / 20001));
  CHECK(s.test == "sign-flip Monte Carlo (20000, seeded) over 20 affected tasks");
  // Holm over {success 1/20001, gap 1 (no task changed consistency)}:
  // 2·(1/20001), then max(2/20001, 1·1) = 1.
  CHECK(*s.p_adjusted == Approx(2.0 / 20001));
  CHECK(*row(v, "consistency_gap").p_adjusted == 1.0);
  // Deterministic baseline: the normal floor is 0, the discrete one at
  // Holm's level 0.025 (6 tasks) 100·6/(3·20).
  CHECK(*s.noise_floor == Approx(10));
  CHECK(s.crossed);
  CHECK(s.significant);
  CHECK(s.failed);
  // pass^3 moves the same way but has no threshold by default.
  const MetricRow& ph = row(v, "pass_hat_k");
  CHECK(ph.delta == Approx(-100));
  CHECK(!ph.gated);
  CHECK(!ph.failed);
  // Per task, Fisher gives 1/20 (C(3,3)·C(3,0)/C(6,3)); BH over 20 equal
  // p-values gives q = 20·0.05/20 = 0.05, not below alpha: flips, not regressions.
  CHECK(v.regressed == 0);
  CHECK(v.flips == 20);
  REQUIRE(v.tasks.size() == 20);
  CHECK(v.tasks[0].id == "t01");
  CHECK(v.tasks[0].flipped);
  CHECK(v.tasks[0].p_value == Approx(0.05));
  CHECK(v.tasks[0].q_value == Approx(0.05));
  CHECK(v.tasks[0].failing_checks == std::vector<std::string>{"contains Paris: answer lacked Paris"});
  CHECK(v.tasks[0].answer_excerpt == "Lyon");
  REQUIRE(v.reasons.size() == 1);
  CHECK(v.reasons[0] == "success rate fell 100.0pp (threshold 2.0pp, p<0.001 adjusted)");
  CHECK(v.headline == "❌ gate failed: success rate fell 100.0pp (threshold 2.0pp, p<0.001 adjusted)");
}

TEST_CASE("at k = 5, four tasks falling 5/5 → 0/5 regress through Fisher and BH") {
  std::vector<Task> before, after;
  for (int i = 1; i <= 20; ++i) {
    before.push_back(counted(id(i), 5, 5));
    after.push_back(counted(id(i), i <= 4 ? 0 : 5, 5));
  }
  Verdict v = compare(report(before), report(after), {});
  // Fisher: 1/C(10,5) = 1/252. BH over 20 (16 tasks have p = 1):
  // q = 20·(1/252)/4 = 5/252 = 0.0198 < 0.05.
  CHECK(v.regressed == 4);
  REQUIRE(v.tasks.size() == 4);
  CHECK(v.tasks[0].p_value == Approx(1.0 / 252));
  CHECK(v.tasks[0].q_value == Approx(5.0 / 252));
  CHECK(v.tasks[3].id == "t04");
  CHECK(!v.tasks[0].grader_change);
  // d = −1 on 4 tasks, 0 on 16: Δ = −20pp. sd = √((4·0.64 + 16·0.04)/19) =
  // 0.410391, half-width t(0.975,19)·sd/√20 = 2.093024·0.410391/4.472136 = 0.192069.
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.delta == Approx(-20));
  CHECK(s.delta_interval.low == Approx(-39.2069).epsilon(1e-4));
  CHECK(s.delta_interval.high == Approx(-0.7931).epsilon(1e-3));
  // Exact sign flip over 4 non-zero d: only the observed pattern is that low, 1/16;
  // Holm with the gap's p = 1: 2/16 = 0.125, not significant.
  CHECK(*s.p_value == Approx(1.0 / 16));
  CHECK(*s.p_adjusted == Approx(0.125));
  CHECK(s.crossed);
  CHECK(!s.failed);
  CHECK(!v.passed());
  REQUIRE(v.reasons.size() == 1);
  CHECK(v.reasons[0] == "4 tasks regressed: t01, t02, t03, t04");
  CHECK(v.headline == "❌ gate failed: 4 tasks regressed: t01, t02, t03, t04");
}

TEST_CASE("different suites are bad input unless allowed") {
  Report a = report({counted("a", 1, 1)});
  Report b = a;
  b.suite.version = "2";
  try {
    compare(a, b, {});
    FAIL("expected Error");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    std::string m = e.what();
    CHECK(m.find("version \"1\" in the baseline, \"2\" in the current report") != std::string::npos);
    CHECK(m.find("--allow-suite-change") != std::string::npos);
  }
  Options o;
  o.allow_suite_change = true;
  Verdict v = compare(a, b, o);
  CHECK(v.passed());
  REQUIRE(v.warnings.size() == 1);
  CHECK(v.warnings[0] ==
        "suite changed (version \"1\" → \"2\"): only the tasks in both reports are compared");
  CHECK(v.current_suite.version == "2");
}

TEST_CASE("added and removed tasks are listed and left out of the paired numbers") {
  Options o;
  o.allow_suite_change = true;
  Report before = report({counted("a", 0, 3), counted("b", 3, 3), counted("c", 3, 3)});
  Report after = report({counted("b", 3, 3), counted("c", 3, 3), counted("d", 0, 3)});
  after.suite.sha256 = std::string(64, 'b');
  Verdict v = compare(before, after, o);
  CHECK(v.added == std::vector<std::string>{"d"});
  CHECK(v.removed == std::vector<std::string>{"a"});
  CHECK(v.paired == 2);
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.baseline == Approx(100)); // over the paired b and c (the report's own: 6 of 9)
  CHECK(s.delta == 0);              // b and c did not move
  REQUIRE(v.scenarios.size() == 1);
  CHECK(v.scenarios[0].tasks == 2);
  CHECK(v.scenarios[0].baseline == Approx(1.0));
  CHECK(v.passed());
}

TEST_CASE("an outcome change on replayed, unchanged inputs is a regression by a grader change") {
  Report before = report({recorded("u1", 3, 3), recorded("u2", 3, 3), counted("f1", 2, 3)});
  // u1's answers replayed unchanged, its last run judged a failure now.
  Report after = report(
      {regraded(recorded("u1", 3, 3), {true, true, false}), replayed("u2", 3, 3), counted("f1", 2, 3)});
  Verdict v = compare(before, after, {});
  CHECK(v.unchanged_inputs == 2);
  CHECK(v.affected == 1);
  REQUIRE(v.tasks.size() == 1);
  const TaskDiff& t = v.tasks[0];
  CHECK(t.id == "u1");
  CHECK(t.inputs_unchanged);
  CHECK(t.regressed);
  CHECK(t.grader_change);
  CHECK(t.flipped);
  // Fisher alone (N = 6, K = 5: P(X <= 2) = C(5,2)·C(1,1)/C(6,3) = 10/20) would not flag it.
  CHECK(t.p_value == Approx(0.5));
  CHECK(!v.passed());
  CHECK(v.reasons == std::vector<std::string>{"1 task regressed: u1 (1 by a check or grader change)"});
  // The paired test sees only the affected task f1, whose d is 0.
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.test == "sign-flip exact over 1 affected tasks");
  CHECK(*s.p_value == 1.0);
  // Replayed calls have no latency: informational, never gated.
  Options o;
  o.thresholds.max_p95_latency_rise_pct = 10;
  Verdict replay_only = compare(report({recorded("u2", 3, 3)}), report({replayed("u2", 3, 3)}), o);
  const MetricRow& lat = row(replay_only, "p95_latency");
  CHECK(!lat.available);
  CHECK(lat.unavailable == "no fresh call timed in the current report; replayed calls have no latency");
  CHECK(!lat.p_value);
  CHECK(!lat.gated);
  CHECK(!lat.failed);
  CHECK(replay_only.passed());
}

TEST_CASE("the same change on fresh inputs is left to the statistics") {
  Task changed = counted("u1", 2, 3);
  Verdict v = compare(report({counted("u1", 3, 3)}), report({changed}), {});
  CHECK(v.regressed == 0);
  REQUIRE(v.tasks.size() == 1);
  CHECK(!v.tasks[0].inputs_unchanged);
  CHECK(v.tasks[0].flipped);
  // One task cannot be significant (best p 1/2): undecided, not failed.
  CHECK(v.status == Status::inconclusive);
  CHECK(v.exit == gate::Exit::pass);
}

TEST_CASE("a route difference is a warning, first in the headline") {
  Report before = report({counted("a", 3, 3), counted("b", 3, 3)});
  Report after = before;
  after.route["model"] = "m2";
  Verdict v = compare(before, after, {});
  REQUIRE(!v.warnings.empty());
  CHECK(v.warnings[0] == "routes differ: model: m1 → m2");
  CHECK(v.headline.rfind("⚠ routes differ (model) — ✅ gate passed: ", 0) == 0);

  // Configured routes alike, but most runs went elsewhere: the sides'
  // modal routes differ.
  Report moved = report({counted("a", 3, 3), counted("b", 3, 3), counted("c", 3, 3)});
  for (std::size_t t = 1; t < 3; ++t)
    for (Run& r : moved.tasks[t].runs)
      r.route["base_url_host"] = "proxy.example";
  gate::report::compute(moved, {});
  Verdict w = compare(report({counted("a", 3, 3), counted("b", 3, 3), counted("c", 3, 3)}), moved, {});
  CHECK(w.route_diff == std::vector<std::string>{"base_url_host: (unset) → proxy.example (in most runs)"});
  CHECK(w.headline.rfind("⚠ routes differ (base_url_host) — ", 0) == 0);

  // Only a later run strayed: that task is route-polluted within its own
  // report (and out of its gap), but the sides went the same way.
  Report strayed = before;
  strayed.tasks[0].runs[2].route["model"] = "m3";
  gate::report::compute(strayed, {});
  REQUIRE(strayed.task_stats[0].route_polluted);
  CHECK(compare(before, strayed, {}).route_diff.empty());

  // concurrency changes nothing the model sees: never a route difference.
  Report parallel = before;
  parallel.route["concurrency"] = "2";
  for (Task& t : parallel.tasks)
    for (Run& r : t.runs)
      r.route["concurrency"] = "2";
  gate::report::compute(parallel, {});
  Verdict j = compare(before, parallel, {});
  CHECK(j.route_diff.empty());
  CHECK(j.headline.rfind("✅ gate passed", 0) == 0);
}

TEST_CASE("a field that varies with the run index the same way in every task is design, not pollution") {
  // τ²-bench gives trial r the seed s_r: every task mixed by seed, by design.
  auto seeded = [](Report r) {
    const char* seeds[] = {"626729", "373753", "918475"};
    for (Task& t : r.tasks)
      for (Run& run : t.runs)
        run.route["seed"] = seeds[run.index];
    gate::report::compute(r, {});
    return r;
  };
  Report r = seeded(report({counted("a", 2, 3), counted("b", 1, 3), counted("c", 3, 3)}));
  CHECK(r.stats.route_by_run ==
        std::map<std::string, std::vector<std::string>>{{"seed", {"626729", "373753", "918475"}}});
  CHECK(r.stats.polluted_tasks == 0);
  CHECK(!r.task_stats[0].route_polluted);
  CHECK(r.stats.consistency_gap_pp == Approx(200.0 / 3)); // a and b mixed
  Verdict v = compare(r, r, {});
  CHECK(v.route_diff.empty());
  // A seed that differs in one task only is pollution again.
  Report odd = r;
  odd.tasks[1].runs[0].route["seed"] = "1";
  gate::report::compute(odd, {});
  CHECK(odd.stats.route_by_run.empty());
  CHECK(odd.stats.polluted_tasks == 3);
}

TEST_CASE("upstream text in the verdict is redacted and cut at 200 bytes, UTF-8 safe") {
  const std::string canary = "sk-canary-7f3a9b1c2d4e5f60";
  gate::register_secret(canary);
  Task leaky = counted("a", 0, 3);
  leaky.runs[0].answer = "the key is " + canary;
  leaky.runs[0].checks[0].detail = "saw " + canary;
  Task long_answer = counted("b", 0, 3);
  std::string e_acute = "\xC3\xA9";
  long_answer.runs[0].answer.clear();
  for (int i = 0; i < 150; ++i) // 300 bytes
    long_answer.runs[0].answer += e_acute;
  Report before = report({counted("a", 3, 3), counted("b", 3, 3)});
  Report after = report({leaky, long_answer});
  after.route["base_url_path"] = "/v1?key=" + canary;
  Verdict v = compare(before, after, {});
  REQUIRE(v.tasks.size() == 2);
  CHECK(v.tasks[0].answer_excerpt == "the key is [REDACTED]");
  CHECK(v.tasks[0].failing_checks ==
        std::vector<std::string>{"contains Paris: saw [REDACTED]", "contains Paris: answer lacked Paris"});
  CHECK(v.tasks[1].answer_excerpt.size() == 200); // 100 whole two-byte characters
  CHECK(gate::valid_utf8(v.tasks[1].answer_excerpt));
  CHECK(v.route_diff == std::vector<std::string>{"base_url_path: (unset) → /v1?key=[REDACTED]"});
  CHECK(v.headline.find(canary) == std::string::npos);
}

TEST_CASE("an incomplete report, allowed, is a warning naming what it covers") {
  Report before = report({counted("a", 3, 3)});
  Report after = before;
  after.complete = false;
  after.incomplete_reason = "interrupted";
  CHECK_THROWS_AS(compare(before, after, {}), gate::Error);
  Options o;
  o.allow_partial = true;
  Verdict v = compare(before, after, o);
  CHECK(v.warnings ==
        std::vector<std::string>{"partial comparison: covers 1 of the baseline's 1 tasks (3 of 3 "
                                 "runs); the current report is incomplete (interrupted)"});
}

TEST_CASE("max_new_failures is a strict rule on raw flips") {
  Report before = report({counted("a", 3, 3), counted("b", 3, 3)});
  Report after = report({counted("a", 2, 3), counted("b", 3, 3)});
  Options o;
  o.thresholds.max_new_failures = 0;
  Verdict v = compare(before, after, o);
  CHECK(v.flips == 1);
  CHECK(!v.passed());
  CHECK(v.reasons == std::vector<std::string>{"1 new failure (max_new_failures 0): a"});
  // Otherwise one changed task of two cannot be decided: inconclusive, exit 0.
  o.thresholds.max_new_failures = 1;
  CHECK(compare(before, after, o).reasons.empty());
  CHECK(compare(before, after, o).exit == gate::Exit::pass);
  o.thresholds.max_new_failures.reset();
  CHECK(compare(before, after, o).reasons.empty()); // off by default
}

TEST_CASE("flaky, stable and fixed tasks are classified and ordered") {
  Report before = report({counted("a_stable", 2, 3), recorded("b_fixed", 1, 3), counted("c_flaky", 0, 3),
                          counted("d_flipped", 3, 3), recorded("e_regressed", 3, 3)});
  // b and e replay their recorded answers, judged anew: a grader change.
  Report after = report({counted("a_stable", 3, 3), regraded(recorded("b_fixed", 1, 3), {true, true, true}),
                         counted("c_flaky", 1, 3), counted("d_flipped", 2, 3),
                         regraded(recorded("e_regressed", 3, 3), {true, true, false})});
  Verdict v = compare(before, after, {});
  std::vector<std::string> ids;
  for (const TaskDiff& t : v.tasks)
    ids.push_back(t.id);
  CHECK(ids == std::vector<std::string>{"e_regressed", "d_flipped", "c_flaky", "b_fixed", "a_stable"});
  CHECK(v.regressed == 1);
  CHECK(v.fixed == 1);
  CHECK(v.flips == 2);         // d, e
  CHECK(v.became_flaky == 3);  // c, d, e
  CHECK(v.became_stable == 2); // a, b
  CHECK(v.tasks[3].grader_change);
  CHECK(v.tasks[3].became_stable);
  // Gap: mixed a, b before (40pp); c, d, e after (60pp) over all five. b and
  // e gave their recorded answers: the scope is a, c, d, whose d = −1, +1,
  // +1: Δ +33.3pp. McNemar with 2 became mixed, 1 consistent:
  // P(B >= 2 | 3) = (3 + 1)/8 = 0.5.
  const MetricRow& g = row(v, "consistency_gap");
  CHECK(g.baseline == Approx(40));
  CHECK(g.current == Approx(60));
  CHECK(g.suite_delta == Approx(20));
  CHECK(g.scope_tasks == 3);
  CHECK(g.delta == Approx(100.0 / 3));
  CHECK(*g.p_value == Approx(0.5));
  // sd √((16/9 + 4/9 + 4/9)/2) = 1.154701, half-width t(0.975,2)·sd/√3 =
  // 4.302653·1.154701/1.732051 = 2.868435: [−253.5, 320.2], clipped to what a
  // mean of gaps in [0, 1] can move from the scope's 1/3: [−33.3, 66.7].
  CHECK(g.delta_interval.low == Approx(-100.0 / 3));
  CHECK(g.delta_interval.high == Approx(200.0 / 3));
}

TEST_CASE("tokens, latency and error rows: crossed on 4 tasks, which no test can decide") {
  std::vector<Task> before, after;
  double latency[] = {200, 200, 300, 400};
  for (int i = 0; i < 4; ++i) {
    before.push_back(counted(id(i), 2, 2));
    Task t = counted(id(i), 2, 2);
    for (Run& r : t.runs) {
      r.prompt_tokens = 130; // 150 a run against 120
      r.latency_ms = latency[i];
    }
    after.push_back(t);
  }
  after[3].runs[1].error = "timeout";
  after[3].runs[1].passed = false;
  Options o;
  o.thresholds.max_token_rise_pct = 20;
  o.thresholds.max_p95_latency_rise_pct = 50;
  o.thresholds.max_error_rate_rise_pp = 5;
  o.thresholds.max_errored_runs_pct = 20; // 1 of 8 runs errored: still measured
  Verdict v = compare(report(before), report(after), o);

  // Tokens per task 240 → 300: +25%; d = 60 on all 4 tasks, exact sign flip 1/16.
  const MetricRow& tk = row(v, "tokens_per_task");
  CHECK(tk.baseline == Approx(240));
  CHECK(tk.current == Approx(300));
  CHECK(tk.delta == Approx(25));
  CHECK(tk.delta_interval.low == Approx(25));
  CHECK(*tk.p_value == Approx(1.0 / 16));

  // p95 of 8 × 100 ms is 100; of {200,200,200,200,300,300,400}: rank 0.95·6 =
  // 5.7 → 300 + 0.7·100 = 370, +270%. The interval resamples the calls: the
  // baseline's p95 is always 100, a resample of the current's lies in
  // [200, 400], so the interval lies in [+100, +300]% and holds +270%. The
  // test is on the per-task means: d = 100,100,200,300, sign flip 1/16.
  const MetricRow& lat = row(v, "p95_latency");
  CHECK(lat.baseline == Approx(100));
  CHECK(lat.current == Approx(370));
  CHECK(lat.delta == Approx(270));
  CHECK(lat.delta_interval.low >= 100);
  CHECK(lat.delta_interval.low <= 270);
  CHECK(lat.delta_interval.high >= 270);
  CHECK(lat.delta_interval.high <= 300);
  CHECK(*lat.p_value == Approx(1.0 / 16));

  // Errors: 1 of 8 runs (12.5%); d = 0, 0, 0, 0.5: mean 0.125, sd 0.25,
  // half-width 3.182446·0.25/2 = 0.397806, clipped at the baseline's 0 from
  // below; sign flip over one d: 1/2.
  const MetricRow& er = row(v, "error_rate");
  CHECK(er.current == Approx(12.5));
  CHECK(er.delta == Approx(12.5));
  CHECK(er.delta_interval.low == Approx(0));
  CHECK(er.delta_interval.high == Approx(12.5 + 39.7806).epsilon(1e-5));
  CHECK(*er.p_value == Approx(0.5));

  // t03 has one non-errored run now: the common k stays 2, without it.
  CHECK(row(v, "pass_hat_k").name == "pass^2");
  CHECK(row(v, "pass_hat_k").test.find("1 tasks with fewer than 2 measured runs left out") !=
        std::string::npos);

  // Holm over success 1, gap 1, tokens 1/16, latency 1/16, errors 1/2:
  // 5/16 = 0.3125, max(0.3125, 4/16) = 0.3125, then 3·0.5 → 1.
  CHECK(*tk.p_adjusted == Approx(0.3125));
  CHECK(*lat.p_adjusted == Approx(0.3125));
  CHECK(*er.p_adjusted == Approx(1.0));
  CHECK(tk.crossed);
  CHECK(lat.crossed);
  CHECK(er.crossed);
  CHECK(!tk.failed);
  // Four tasks: the best sign-flip p is 1/16, 5/16 after Holm over five.
  CHECK(*tk.min_p == Approx(1.0 / 16));
  CHECK(tk.inconclusive);
  CHECK(v.status == Status::inconclusive);
  CHECK(v.exit == gate::Exit::pass);
}

TEST_CASE("thousands of changed tasks use the normal limit of the sign-flip test") {
  // k = 1: 1600 tasks pass → fail, 1400 fail → pass. Σd = −200, Σd² = 3000,
  // z = −200/√3000 = −3.651484, Φ(z) = 1.30365e-4; Δ = −200/3000 = −6.667pp.
  std::vector<Task> before, after;
  for (int i = 0; i < 3000; ++i) {
    std::string name = "t" + std::to_string(10000 + i);
    before.push_back(task(name, {i < 1600}));
    after.push_back(task(name, {i >= 1600}));
  }
  Verdict v = compare(report(before), report(after), {});
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.test == "sign-flip normal limit over 3000 affected tasks");
  CHECK(*s.p_value == Approx(1.30365e-4).epsilon(1e-4));
  CHECK(s.delta == Approx(-6.6666667));
  CHECK(s.failed);
}

TEST_CASE("duplicate task ids are bad input") {
  Report r = report({counted("a", 1, 1)});
  r.tasks.push_back(r.tasks[0]);
  r.task_stats.push_back(r.task_stats[0]);
  CHECK_THROWS_AS(compare(r, r, {}), gate::Error);
}

TEST_CASE("tasks out of id order pair as in order; a duplicate among them is still found") {
  Report sorted = report({counted("a", 3, 3), counted("b", 1, 3), counted("c", 0, 3)});
  Report shuffled = sorted;
  std::swap(shuffled.tasks[0], shuffled.tasks[2]);
  std::swap(shuffled.task_stats[0], shuffled.task_stats[2]);
  const Verdict want = compare(sorted, sorted, {}), got = compare(shuffled, sorted, {});
  CHECK(got.paired == 3);
  CHECK(got.added.empty());
  CHECK(got.removed.empty());
  CHECK(got.headline == want.headline);
  shuffled.tasks[1].id = "c"; // ids c, c, a
  CHECK_THROWS_WITH_AS(compare(shuffled, sorted, {}), "the baseline report has task \"c\" twice",
                       gate::Error);
}

TEST_CASE("runs on the report's shared routes: each task counted once, its own route honoured") {
  // As read from a file: runs carry no route of their own but for task b,
  // whose runs went through the baseline's route; the current runs of a and
  // c went through the current report's runs_route.
  Report before = report({counted("a", 3, 3), counted("b", 3, 3), counted("c", 3, 3)});
  for (Task& t : before.tasks)
    for (Run& r : t.runs)
      r.route.clear();
  Report after = before;
  after.runs_route = {{"model", "m2"}};
  for (Run& r : after.tasks[1].runs)
    r.route = {{"model", "m1"}};
  gate::report::compute(before, {});
  gate::report::compute(after, {});
  CHECK(compare(before, after, {}).route_diff == std::vector<std::string>{"model: m1 → m2 (in most runs)"});
}

TEST_CASE("a suite of 12,000 tasks (its metrics measured on a second thread) gives the same rows") {
  // k = 1: the first 100 tasks fall from pass to fail. Δ = −100/12000 =
  // −0.8333pp; 100 non-zero differences, all −1: Monte Carlo, and no
  // pattern of 20,000 reaches the observed sum, p = 1/20001.
  std::vector<Task> before, after;
  for (int i = 0; i < 12000; ++i) {
    const std::string name = "t" + std::to_string(10000 + i);
    before.push_back(task(name, {true}));
    after.push_back(task(name, {i >= 100}));
  }
  const Verdict v = compare(report(before), report(after), {});
  REQUIRE(v.metrics.size() == 6);
  const char* keys[] = {"success_rate",    "consistency_gap", "pass_hat_k",
                        "tokens_per_task", "p95_latency",     "error_rate"};
  for (std::size_t i = 0; i < 6; ++i)
    CHECK(v.metrics[i].key == keys[i]);
  const MetricRow& s = row(v, "success_rate");
  CHECK(s.test == "sign-flip Monte Carlo (20000, seeded) over 12000 affected tasks");
  CHECK(s.delta == Approx(-0.8333333));
  CHECK(*s.p_value == Approx(1.0 / 20001).epsilon(1e-12));
  CHECK(v.flips == 100);
}

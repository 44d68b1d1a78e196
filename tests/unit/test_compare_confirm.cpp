#include <doctest.h>

#include <gate/compare/confirm.hpp>

#include "test_compare_support.hpp"

using namespace gate::compare;
using namespace gate::compare::test;

namespace {

// `t` with every run's request fingerprint set: two sides of a task whose
// request changed carry two fingerprints.
Task sent(Task t, const std::string& fingerprint) {
  for (Run& r : t.runs)
    r.fingerprint = fingerprint;
  return t;
}

Confirmable resendable(const std::string&) { return {true, 1}; }

ConfirmCounts counts(std::int64_t bp, std::int64_t bn, std::int64_t cp, std::int64_t cn) {
  return {"t", bp, bn, cp, cn};
}

} // namespace

TEST_CASE("stratified exact p: hand-computed hypergeometric convolutions") {
  // 3/3 against 0/3: the baseline holds all 3 passes of 6 runs, 1 of C(6,3) = 20 ways.
  CHECK(stratified_exact_p({counts(3, 3, 0, 3)}) == doctest::Approx(0.05));
  // Two such tasks: (1/20)^2.
  CHECK(stratified_exact_p({counts(3, 3, 0, 3), counts(3, 3, 0, 3)}) == doctest::Approx(0.0025));
  // 2/3 against 1/3: P(X >= 2) with P(X = k) = C(3,k)C(3,3-k)/20 = (9 + 1)/20.
  CHECK(stratified_exact_p({counts(2, 3, 1, 3)}) == doctest::Approx(0.5));
  // Both together: P(X1 + X2 >= 5) = (1·9 + 9·1 + 1·1)/400.
  CHECK(stratified_exact_p({counts(3, 3, 0, 3), counts(2, 3, 1, 3)}) == doctest::Approx(19.0 / 400));
  // Unequal runs: 2/2 against 0/3, 1 of C(5,2) = 10 ways.
  CHECK(stratified_exact_p({counts(2, 2, 0, 3)}) == doctest::Approx(0.1));
  // Better on the baseline side never: P(X >= 0) = 1.
  CHECK(stratified_exact_p({counts(0, 3, 3, 3)}) == doctest::Approx(1.0));
  // A task whose every run passed (or failed) on both sides has one outcome only.
  CHECK(stratified_exact_p({counts(3, 3, 3, 3), counts(3, 3, 0, 3)}) == doctest::Approx(0.05));
  // No evidence: no task, or a side without runs.
  CHECK(stratified_exact_p({}) == 1.0);
  CHECK(stratified_exact_p({counts(0, 0, 0, 3)}) == 1.0);
  CHECK_THROWS_AS(stratified_exact_p({counts(4, 3, 0, 3)}), gate::Error);
}

TEST_CASE("confirmation runs only when the verdict is in doubt") {
  Verdict v;
  v.status = Status::passed;
  CHECK_FALSE(needs_confirmation(v));
  v.flips = 1;
  CHECK(needs_confirmation(v));
  v.flips = 0;
  v.metrics.push_back({});
  v.metrics.back().gated = v.metrics.back().crossed = true;
  CHECK(needs_confirmation(v)); // crossed, not significant
  v.metrics.back().significant = true;
  CHECK_FALSE(needs_confirmation(v));
  v.status = Status::inconclusive;
  CHECK(needs_confirmation(v));
  v.status = Status::failed;
  v.flips = 3;
  CHECK_FALSE(needs_confirmation(v));
  v.status = Status::unmeasured;
  CHECK_FALSE(needs_confirmation(v));
}

TEST_CASE("the plan takes flipped tasks first, then the largest falls, within the budget") {
  const Report base = report({sent(counted("a", 2, 3), "a0"), sent(counted("b", 3, 3), "b0"),
                              sent(counted("c", 3, 3), "c0"), sent(counted("d", 3, 3), "same"),
                              sent(counted("e", 1, 3), "e0"), sent(counted("f", 3, 3), "f0")});
  const Report cur = report({sent(counted("a", 0, 3), "a1"), sent(counted("b", 2, 3), "b1"),
                             sent(counted("c", 0, 3), "c1"), sent(counted("d", 0, 3), "same"),
                             sent(counted("e", 2, 3), "e1"), sent(counted("f", 0, 4), "f1")});
  auto about = [](const std::string& id) { return Confirmable{id != "f", id == "c" ? 2 : 1}; };
  // c fell 1 (flipped; a judge check: 2 calls a run), a fell 2/3, b 1/3
  // (flipped); d shares its request, e rose, f cannot be sent again.
  ConfirmPlan plan = plan_confirmation(base, cur, 3, 1000, about);
  REQUIRE(plan.picks.size() == 3);
  CHECK(plan.picks[0].id == "c");
  CHECK(plan.picks[0].calls == 12);
  CHECK(plan.picks[0].flipped);
  CHECK(plan.picks[1].id == "a");
  CHECK(plan.picks[1].difference == doctest::Approx(2.0 / 3));
  CHECK_FALSE(plan.picks[1].flipped);
  CHECK(plan.picks[2].id == "b");
  CHECK(plan.calls == 24);
  CHECK(plan.picks[0].baseline_fingerprint == "c0");
  CHECK(plan.picks[0].current_fingerprint == "c1");
  // Fresh runs take the indexes after each side's own.
  CHECK(plan.picks[0].baseline_first_replica == 3);
  CHECK(plan.picks[0].current_first_replica == 3);
  CHECK(plan.left_out.empty());

  // 18 calls: c (12) fits, a (6) fits, b (6) does not.
  plan = plan_confirmation(base, cur, 3, 18, about);
  CHECK(plan.picks.size() == 2);
  CHECK(plan.calls == 18);
  CHECK(plan.left_out == std::vector<std::string>{"b"});
  // Equal falls: the flipped task first.
  const Report eq_base = report({sent(counted("a", 3, 4), "a0"), sent(counted("z", 2, 2), "z0")});
  const Report eq_cur = report({sent(counted("a", 1, 4), "a1"), sent(counted("z", 1, 2), "z1")});
  plan = plan_confirmation(eq_base, eq_cur, 1, 100, resendable);
  REQUIRE(plan.picks.size() == 2);
  CHECK(plan.picks[0].id == "z");
  // A budget too small for any task plans nothing.
  plan = plan_confirmation(base, cur, 3, 5, resendable);
  CHECK(plan.picks.empty());
  CHECK(plan.left_out.size() == 4);
}

TEST_CASE("errored runs neither select a task nor count in its replica indexes' base") {
  Task b = sent(counted("a", 3, 3), "a0");
  Task c = sent(counted("a", 0, 3), "a1");
  c.runs[2].error = "timeout";
  c.runs[2].passed = false;
  ConfirmPlan plan = plan_confirmation(report({b}), report({c}), 2, 100, resendable);
  REQUIRE(plan.picks.size() == 1);
  CHECK(plan.picks[0].difference == doctest::Approx(1.0));
  CHECK(plan.picks[0].current_first_replica == 3); // the errored run's index is taken
  // Every run errored on a side: nothing to compare.
  for (Run& r : c.runs)
    r.error = "timeout";
  CHECK(plan_confirmation(report({b}), report({c}), 2, 100, resendable).picks.empty());
}

TEST_CASE("the confirmation level is one more member of the Holm family") {
  Verdict v;
  v.alpha = 0.05;
  CHECK(confirmation_level(v) == doctest::Approx(0.05));
  v.metrics.resize(3);
  v.metrics[0].gated = v.metrics[1].gated = true;
  CHECK(confirmation_level(v) == doctest::Approx(0.05 / 3));
}

TEST_CASE("confirmed fresh runs fail the verdict; dismissed ones settle the doubt") {
  const Report base = report({sent(counted("a", 3, 3), "a0"), sent(counted("b", 3, 3), "b0")});
  const Report cur = report({sent(counted("a", 0, 3), "a1"), sent(counted("b", 0, 3), "b1")});
  Options o;
  const Verdict first = compare(base, cur, o);
  REQUIRE(needs_confirmation(first));
  const ConfirmPlan plan = plan_confirmation(base, cur, 3, 200, resendable);
  REQUIRE(plan.picks.size() == 2);

  Verdict v = first;
  apply_confirmation(v, plan, {{"a", 3, 3, 0, 3}, {"b", 3, 3, 0, 3}}, 3, 200, 12, 1500);
  CHECK(v.status == Status::failed);
  CHECK(v.exit == gate::Exit::threshold);
  REQUIRE(v.confirmation);
  CHECK(v.confirmation->state == Confirmation::State::confirmed);
  CHECK(v.confirmation->p_value == doctest::Approx(0.0025));
  CHECK(v.confirmation->calls == 12);
  CHECK(v.confirmation->tasks.size() == 2);
  CHECK(v.confirmation->tasks[0].worse);
  CHECK(v.headline.find("❌ gate failed") != std::string::npos);
  CHECK(v.headline.find("worse on a, b") != std::string::npos);

  v = first;
  apply_confirmation(v, plan, {{"a", 2, 3, 2, 3}, {"b", 3, 3, 2, 3}}, 3, 200, 12, 1500);
  CHECK(v.status != Status::failed);
  CHECK(v.inconclusive.empty());
  CHECK(v.confirmation->state == Confirmation::State::dismissed);
  CHECK_FALSE(v.confirmation->tasks[0].worse);
  CHECK(v.confirmation->tasks[1].worse);

  // Candidates the budget left out keep an inconclusive verdict inconclusive.
  v = first;
  v.status = Status::inconclusive;
  v.inconclusive = {"success rate: cannot be significant"};
  ConfirmPlan partial = plan;
  partial.left_out = {"c"};
  apply_confirmation(v, partial, {{"a", 2, 3, 2, 3}}, 3, 200, 6, 700);
  CHECK(v.status == Status::inconclusive);
  CHECK(v.inconclusive.back().find("raise confirm.max_calls") != std::string::npos);
}

TEST_CASE("replay-only lists the runs a confirmation needs") {
  const Report base = report({sent(counted("a", 3, 3), "a0")});
  const Report cur = report({sent(counted("a", 0, 3), "a1")});
  Verdict v = compare(base, cur, {});
  const Status before = v.status;
  const ConfirmPlan plan = plan_confirmation(base, cur, 2, 200, resendable);
  confirmation_needs_calls(v, plan, 2, 200, {}, "gate check --mode replay");
  CHECK(v.status == before);
  REQUIRE(v.confirmation);
  CHECK(v.confirmation->state == Confirmation::State::needs_calls);
  CHECK(v.confirmation->missing ==
        std::vector<std::string>{"task \"a\" baseline runs 3-4, current runs 3-4"});
  CHECK(v.confirmation->command == "gate check --mode replay");
}

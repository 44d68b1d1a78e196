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

ConfirmCounts counts(std::int64_t bp, std::int64_t bn, std::int64_t cp, std::int64_t cn,
                     const std::string& id = "t") {
  return {id, bp, bn, cp, cn, 0, ""};
}

// A plan at exactly `runs` per side: at level 1 any runs decide, so the plan
// never raises them (the rule that does is tested on its own below).
ConfirmAsk ask(int runs, std::int64_t max_calls) { return {runs, max_calls, 1.0, 5.0}; }

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

TEST_CASE("confirmation runs only when the verdict is in doubt; flips alone only when asked") {
  Verdict v;
  v.status = Status::passed;
  CHECK_FALSE(needs_confirmation(v, true));
  v.flips = 1;
  CHECK(needs_confirmation(v, true));
  CHECK_FALSE(needs_confirmation(v, false)); // a flip alone: the first test could have decided
  v.flips = 0;
  v.metrics.push_back({});
  v.metrics.back().gated = v.metrics.back().crossed = true;
  CHECK(needs_confirmation(v, true)); // crossed, not significant
  CHECK(needs_confirmation(v, false));
  v.metrics.back().significant = true;
  CHECK_FALSE(needs_confirmation(v, true));
  v.status = Status::inconclusive;
  CHECK(needs_confirmation(v, true));
  CHECK(needs_confirmation(v, false));
  v.status = Status::failed;
  v.flips = 3;
  CHECK_FALSE(needs_confirmation(v, true));
  CHECK_FALSE(needs_confirmation(v, false));
  v.status = Status::unmeasured;
  CHECK_FALSE(needs_confirmation(v, true));
  CHECK_FALSE(needs_confirmation(v, false));
}

TEST_CASE("confirmed fresh runs fail the verdict; dismissed ones settle the doubt") {
  const Report base = report({sent(counted("a", 3, 3), "a0"), sent(counted("b", 3, 3), "b0")});
  const Report cur = report({sent(counted("a", 0, 3), "a1"), sent(counted("b", 0, 3), "b1")});
  Options o;
  const Verdict first = compare(base, cur, o);
  REQUIRE(needs_confirmation(first, true));
  ConfirmPlan plan = plan_confirmation(base, cur, ask(3, 200), resendable);
  REQUIRE(plan.picks.size() == 2);
  plan.ask.level = confirmation_level(first);

  Verdict v = first;
  apply_confirmation(v, plan, {counts(3, 3, 0, 3, "a"), counts(3, 3, 0, 3, "b")}, 12, 1500);
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
  apply_confirmation(v, plan, {counts(2, 3, 2, 3, "a"), counts(3, 3, 2, 3, "b")}, 12, 1500);
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
  apply_confirmation(v, partial, {counts(2, 3, 2, 3, "a")}, 6, 700);
  CHECK(v.status == Status::inconclusive);
  CHECK(v.inconclusive.back().find("raise confirm.max_calls") != std::string::npos);
}

TEST_CASE("replay-only lists the runs a confirmation needs") {
  const Report base = report({sent(counted("a", 3, 3), "a0")});
  const Report cur = report({sent(counted("a", 0, 3), "a1")});
  Verdict v = compare(base, cur, {});
  const Status before = v.status;
  const ConfirmPlan plan = plan_confirmation(base, cur, ask(2, 200), resendable);
  confirmation_needs_calls(v, plan, {}, "gate check --mode replay");
  CHECK(v.status == before);
  REQUIRE(v.confirmation);
  CHECK(v.confirmation->state == Confirmation::State::needs_calls);
  CHECK(v.confirmation->missing ==
        std::vector<std::string>{"task \"a\" baseline runs 3-4, current runs 3-4"});
  CHECK(v.confirmation->command == "gate check --mode replay");
}

TEST_CASE("runs per side: the fewest at which the first comparison, one baseline failure worse, decides") {
  // One task 3/3 → 0/3. Repeated with one failure more: (r−1)/r against 0/r,
  // p = C(r, r−1)/C(2r, r−1) = r/C(2r, r−1): r = 3: 3/15 = 0.2, 4: 4/56 =
  // 0.071, 5: 5/210 = 0.0238, 6: 6/792 = 0.0076.
  const Report b1 = report({sent(counted("a", 3, 3), "a0"), sent(counted("z", 3, 3), "z0")});
  const Report c1 = report({sent(counted("a", 0, 3), "a1"), sent(counted("z", 3, 3), "z0")});
  CHECK(plan_confirmation(b1, c1, {3, 200, 0.025, 5}, resendable).runs == 5);
  CHECK(plan_confirmation(b1, c1, {3, 200, 0.05 / 3, 5}, resendable).runs == 6);
  // --confirm 8 asks for more: never fewer than asked.
  CHECK(plan_confirmation(b1, c1, {8, 200, 0.025, 5}, resendable).runs == 8);
  // The budget bounds the raise: 5 runs a side is 10 calls; with 8 the
  // most that fits is 4 (0.071 > 0.025, so no raise decides): the asked 3.
  const ConfirmPlan tight = plan_confirmation(b1, c1, {3, 8, 0.025, 5}, resendable);
  CHECK(tight.runs == 3);
  CHECK(tight.calls == 6);

  // Two tasks 3/3 → 0/3: at 3, (2/3 vs 0/3) twice: P(X = 2)² = (3/15)² =
  // 0.04 > 0.025; at 4, (3/4 vs 0/4) twice: (4/56)² = 0.0051.
  const Report b2 = report({sent(counted("a", 3, 3), "a0"), sent(counted("b", 3, 3), "b0")});
  const Report c2 = report({sent(counted("a", 0, 3), "a1"), sent(counted("b", 0, 3), "b1")});
  const ConfirmPlan two = plan_confirmation(b2, c2, {3, 200, 0.025, 5}, resendable);
  CHECK(two.runs == 4);
  CHECK(two.calls == 16);
  // Five tasks: 0.2^5 = 0.00032 at 3 runs already.
  std::vector<Task> bt, ct;
  for (const char* id : {"a", "b", "c", "d", "e"}) {
    bt.push_back(sent(counted(id, 3, 3), std::string(id) + "0"));
    ct.push_back(sent(counted(id, 0, 3), std::string(id) + "1"));
  }
  CHECK(plan_confirmation(report(bt), report(ct), {3, 200, 0.025, 5}, resendable).runs == 3);
  // A noise flip (3/3 → 2/3) decides at no count up to 10: the asked runs.
  const Report c3 = report({sent(counted("a", 2, 3), "a1"), sent(counted("z", 3, 3), "z0")});
  CHECK(plan_confirmation(b1, c3, {3, 200, 0.025, 5}, resendable).runs == 3);

  // decides_at, directly: 5/5 scaled, one fewer: (4 vs 0 of 5) = 0.0238.
  ConfirmPick p;
  p.id = "a";
  p.baseline_rate = 1;
  p.current_rate = 0;
  CHECK(decides_at({p}, 5, 0.025));
  CHECK_FALSE(decides_at({p}, 5, 0.02));
}

TEST_CASE("errored confirmation runs are not evidence: an outage never dismisses a doubt") {
  const Report base = report({sent(counted("a", 3, 3), "a0"), sent(counted("b", 3, 3), "b0")});
  const Report cur = report({sent(counted("a", 0, 3), "a1"), sent(counted("b", 0, 3), "b1")});
  Verdict first = compare(base, cur, {});
  first.status = Status::inconclusive;
  first.inconclusive = {"success rate: cannot be significant"};
  ConfirmPlan plan = plan_confirmation(base, cur, ask(3, 200), resendable);
  plan.ask.level = confirmation_level(first);
  auto outage = [](const std::string& id, std::int64_t n) {
    ConfirmCounts c = counts(0, 0, 0, 0, id);
    c.errored = n;
    c.error = "HTTP 500";
    return c;
  };

  // Every fresh run answered 500: could not measure (exit 3), never "dismissed".
  Verdict v = first;
  apply_confirmation(v, plan, {outage("a", 6), outage("b", 6)}, 12, std::nullopt);
  CHECK(v.status == Status::unmeasured);
  CHECK(v.exit == gate::Exit::cannot_run);
  REQUIRE(v.confirmation);
  CHECK(v.confirmation->state == Confirmation::State::unmeasured);
  CHECK(v.confirmation->errored == 12);
  CHECK(v.headline.find("could not measure") != std::string::npos);
  CHECK(v.headline.find("12 of 12 fresh runs errored (HTTP 500)") != std::string::npos);

  // One errored run in 24 (4.2% ≤ 5%), 6 runs a side, and no regression in the rest: the
  // doubt stands, the verdict stays inconclusive.
  v = first;
  ConfirmCounts a = counts(6, 6, 6, 6, "a"), b = counts(6, 6, 5, 5, "b");
  b.errored = 1;
  b.error = "HTTP 500";
  plan.runs = 6;
  apply_confirmation(v, plan, {a, b}, 12, std::nullopt);
  CHECK(v.status == Status::inconclusive);
  CHECK(v.confirmation->state == Confirmation::State::incomplete);
  CHECK(v.inconclusive.back().find("confirmation incomplete: 1 of 24 fresh runs errored") !=
        std::string::npos);
  // with on_inconclusive: fail, the errored run cannot turn exit 1 into 0.
  v = first;
  v.on_inconclusive = "fail";
  apply_confirmation(v, plan, {a, b}, 12, std::nullopt);
  CHECK(v.exit == gate::Exit::threshold);

  // Errors beside clear evidence: the measured runs still confirm.
  v = first;
  ConfirmCounts c = counts(6, 6, 0, 6, "a"), d = counts(6, 6, 0, 5, "b");
  d.errored = 1;
  apply_confirmation(v, plan, {c, d}, 12, std::nullopt);
  CHECK(v.status == Status::failed);
  CHECK(v.confirmation->state == Confirmation::State::confirmed);
}

#include <doctest.h>

#include <map>
#include <string>
#include <vector>

#include <gate/compare/confirm.hpp>

#include "test_compare_sim_support.hpp"

// Confirmation runs (METRICS.md "Confirmation"), simulated: seeded, default
// thresholds, alpha 0.05. Each comparison goes through what `gate check
// --confirm` does after its first comparison (cli/confirm.cpp): the same
// trigger, the same plan, fresh runs of both sides drawn from the true
// rates, the same decision. What the runner adds (cache, replica indexes,
// budget in calls) is tested end to end in e2e/test_confirm.cpp.

using namespace gate::sim;
using gate::compare::Confirmable;
using gate::compare::ConfirmCounts;
using gate::compare::Verdict;
using gate::report::Report;

namespace {

struct Confirmed {
  Verdict first, final;
  std::int64_t calls = 0;
};

// The first comparison, then the confirmation with `runs` fresh runs per
// side drawn at the true rates of each side.
Confirmed check(const Report& base, const Report& cur, const std::vector<double>& p_base,
                const std::vector<double>& p_cur, int runs, std::int64_t max_calls, SplitMix64& rng) {
  Confirmed out;
  out.first = gate::compare::compare(base, cur, {});
  out.final = out.first;
  if (!gate::compare::needs_confirmation(out.first)) return out;
  const auto plan = gate::compare::plan_confirmation(base, cur, runs, max_calls, [](const std::string&) {
    return Confirmable{true, 1};
  });
  if (plan.picks.empty()) return out; // as cli/confirm.cpp: the first verdict stands
  std::vector<ConfirmCounts> fresh;
  for (const auto& pick : plan.picks) {
    const auto i = static_cast<std::size_t>(std::stoi(pick.id.substr(1)) - 1000);
    ConfirmCounts c{pick.id, 0, runs, 0, runs};
    for (int j = 0; j < runs; ++j) {
      c.baseline_passed += rng.uniform() < p_base[i];
      c.current_passed += rng.uniform() < p_cur[i];
    }
    fresh.push_back(c);
  }
  out.calls = plan.calls;
  gate::compare::apply_confirmation(out.final, plan, std::move(fresh), runs, max_calls, plan.calls, 0);
  return out;
}

} // namespace

TEST_CASE("A/A with confirmation on: a prompt edit that changes nothing fails <= 6% of comparisons") {
  for (Spread spread : {Spread::uniform, Spread::u_shaped}) {
    SplitMix64 rng{spread == Spread::uniform ? 181u : 182u};
    const std::vector<double> p = true_rates(tasks, spread, rng);
    int before = 0, after = 0, confirmed = 0;
    double calls = 0;
    for (int c = 0; c < comparisons; ++c) {
      const Report base = fresh(p, k, rng, "v1");
      const Report cur = fresh(p, k, rng, "v2");
      const Confirmed r = check(base, cur, p, p, 3, 200, rng);
      before += alarm(r.first);
      after += alarm(r.final);
      confirmed += r.final.confirmation.has_value();
      calls += static_cast<double>(r.calls) / comparisons;
    }
    const double rate = static_cast<double>(after) / comparisons;
    MESSAGE(name(spread) << " A/A: false alarms " << 100.0 * before / comparisons
                         << "% without confirmation, " << 100 * rate << "% with (confirmation ran in "
                         << confirmed << " of " << comparisons << ", " << calls << " calls on average)");
    CHECK(rate <= 0.06);
  }
}

TEST_CASE(
    "15 tasks, 5 of them going from p = 1 to p = 0: inconclusive without confirmation, failed with it") {
  // The other ten tasks always pass or always fail: five non-zero task
  // differences, so the sign-flip p is at least 1/32 (1/16 after Holm).
  SplitMix64 rng{183};
  std::vector<double> p(15, 1.0);
  for (int i = 10; i < 15; ++i)
    p[static_cast<std::size_t>(i)] = 0;
  std::vector<double> broken = p;
  for (int i = 0; i < 5; ++i)
    broken[static_cast<std::size_t>(i)] = 0;
  int failed_before = 0, inconclusive_before = 0, failed_after = 0;
  for (int c = 0; c < comparisons; ++c) {
    const Report base = fresh(p, k, rng, "v1");
    const Report cur = fresh(broken, k, rng, "v2");
    const Confirmed r = check(base, cur, p, broken, 3, 200, rng);
    failed_before += alarm(r.first);
    inconclusive_before += r.first.status == gate::compare::Status::inconclusive;
    failed_after += alarm(r.final);
  }
  MESSAGE("15 tasks, 5 broken: without confirmation "
          << 100.0 * failed_before / comparisons << "% failed, " << 100.0 * inconclusive_before / comparisons
          << "% inconclusive; with --confirm 3 " << 100.0 * failed_after / comparisons << "% failed");
  CHECK(failed_before == 0);
  CHECK(inconclusive_before >= comparisons * 95 / 100);
  CHECK(failed_after >= comparisons * 95 / 100);
}

TEST_CASE(
    "200 tasks, a change that breaks 10 (p 0.9 -> 0.1): caught >= 90% with --confirm 3 and <= 20% extra "
    "calls") {
  for (Spread spread : {Spread::uniform, Spread::u_shaped}) {
    SplitMix64 rng{spread == Spread::uniform ? 184u : 185u};
    std::vector<double> p = true_rates(tasks, spread, rng);
    int before = 0, after = 0;
    double extra = 0;
    // The fresh calls of the check itself: every task of the current side, k runs.
    const std::int64_t budget = tasks * k / 5;
    for (int c = 0; c < comparisons; ++c) {
      const std::vector<int> hit = some_tasks(tasks, 10, rng);
      std::vector<double> base_p = p, cur_p = p;
      for (int i : hit) {
        base_p[static_cast<std::size_t>(i)] = 0.9;
        cur_p[static_cast<std::size_t>(i)] = 0.1;
      }
      const Report base = fresh(base_p, k, rng, "v1");
      const Report cur = fresh(cur_p, k, rng, "v2");
      const Confirmed r = check(base, cur, base_p, cur_p, 3, budget, rng);
      before += alarm(r.first);
      after += alarm(r.final);
      extra += static_cast<double>(r.calls) / (tasks * k) / comparisons;
    }
    const double rate = static_cast<double>(after) / comparisons;
    MESSAGE(name(spread) << ", 10 tasks broken: caught " << 100.0 * before / comparisons
                         << "% without confirmation, " << 100 * rate << "% with (" << 100 * extra
                         << "% extra calls on average, budget " << budget << ")");
    CHECK(rate >= 0.90);
    CHECK(extra <= 0.20);
  }
}

TEST_CASE("200 tasks, a diffuse true 5pp drop: confirmation never lowers detection") {
  for (Spread spread : {Spread::uniform, Spread::u_shaped}) {
    SplitMix64 rng{spread == Spread::uniform ? 186u : 187u};
    const std::vector<double> p = true_rates(tasks, spread, rng);
    const std::vector<double> lower = dropped(p, 0.05);
    int before = 0, after = 0, lost = 0;
    for (int c = 0; c < comparisons; ++c) {
      const Report base = fresh(p, k, rng, "v1");
      const Report cur = fresh(lower, k, rng, "v2");
      const Confirmed r = check(base, cur, p, lower, 3, 200, rng);
      before += alarm(r.first);
      after += alarm(r.final);
      lost += alarm(r.first) && !alarm(r.final);
    }
    MESSAGE(name(spread) << ", diffuse 5pp drop: caught " << 100.0 * before / comparisons
                         << "% without confirmation, " << 100.0 * after / comparisons << "% with");
    CHECK(lost == 0);
    CHECK(after >= before);
  }
}

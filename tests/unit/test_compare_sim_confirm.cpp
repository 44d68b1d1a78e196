#include <doctest.h>

#include <algorithm>
#include <cmath>
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

// When a confirmation runs: gate.yaml's default (confirm.when: undecided)
// or also on flips (--confirm N).
enum class When { undecided, flips };

// The first comparison, then the confirmation with at least `runs` fresh
// runs per side drawn at the true rates of each side.
Confirmed check(const Report& base, const Report& cur, const std::vector<double>& p_base,
                const std::vector<double>& p_cur, int runs, std::int64_t max_calls, SplitMix64& rng,
                When when = When::flips) {
  Confirmed out;
  out.first = gate::compare::compare(base, cur, {});
  out.final = out.first;
  if (!gate::compare::needs_confirmation(out.first, when == When::flips)) return out;
  const auto plan = gate::compare::plan_confirmation(
      base, cur,
      {runs, max_calls, gate::compare::confirmation_level(out.first), out.first.max_errored_runs_pct},
      [](const std::string&) {
        return Confirmable{true, 1};
      });
  if (plan.picks.empty()) return out; // as cli/confirm.cpp: the first verdict stands
  std::vector<ConfirmCounts> fresh;
  for (const auto& pick : plan.picks) {
    const auto i = static_cast<std::size_t>(std::stoi(pick.id.substr(1)) - 1000);
    ConfirmCounts c;
    c.id = pick.id;
    c.baseline_runs = c.current_runs = plan.runs;
    for (int j = 0; j < plan.runs; ++j) {
      c.baseline_passed += rng.uniform() < p_base[i];
      c.current_passed += rng.uniform() < p_cur[i];
    }
    fresh.push_back(c);
  }
  out.calls = plan.calls;
  gate::compare::apply_confirmation(out.final, plan, std::move(fresh), plan.calls, 0);
  return out;
}

} // namespace

TEST_CASE(
    "A/A, 200 tasks: the default confirmation keeps the gate within alpha, --confirm within its bound") {
  // The default confirms only a verdict the first comparison could not
  // decide, so its test and the first one share alpha (docs/metrics.md,
  // "Level"); --confirm also confirms flips, adding at most alpha/(F+1).
  for (When when : {When::undecided, When::flips}) {
    for (Spread spread : {Spread::uniform, Spread::u_shaped}) {
      SplitMix64 rng{spread == Spread::uniform ? 181u : 182u};
      const std::vector<double> p = true_rates(tasks, spread, rng);
      int before = 0, after = 0, confirmed = 0;
      double calls = 0, level = 0;
      for (int c = 0; c < comparisons; ++c) {
        const Report base = fresh(p, k, rng, "v1");
        const Report cur = fresh(p, k, rng, "v2");
        const Confirmed r = check(base, cur, p, p, 3, 200, rng, when);
        before += alarm(r.first);
        after += alarm(r.final);
        confirmed += r.final.confirmation.has_value();
        calls += static_cast<double>(r.calls) / comparisons;
        level = gate::compare::confirmation_level(r.first);
      }
      const double rate = static_cast<double>(after) / comparisons;
      const std::string mode = when == When::flips ? "--confirm 3" : "default confirmation";
      MESSAGE(name(spread) << " A/A, " << mode << ": false alarms " << 100.0 * before / comparisons
                           << "% without confirmation, " << 100 * rate << "% with (confirmation ran in "
                           << confirmed << " of " << comparisons << ", " << calls << " calls on average)");
      // Two standard errors of a 500-comparison rate above the bound.
      const double bound = 0.05 + (when == When::flips ? level : 0.0);
      CHECK(rate <= bound + 2 * std::sqrt(bound * (1 - bound) / comparisons));
      if (when == When::undecided) CHECK(after - before <= comparisons / 100);
    }
  }
}

namespace {

// `gate init`'s starter suite: 6 tasks, k = 3, default thresholds and the
// default confirmation (runs 3, max_calls 200, an inconclusive verdict).
struct Starter {
  int failed = 0, inconclusive_before = 0;
  double calls = 0;
  int most_runs = 0;
};

Starter starter(const std::vector<double>& p_base, const std::vector<double>& p_cur, std::uint64_t seed) {
  SplitMix64 rng{seed};
  Starter out;
  for (int c = 0; c < comparisons; ++c) {
    const Report base = fresh(p_base, k, rng, "v1");
    const Report cur = fresh(p_cur, k, rng, "v2");
    const Confirmed r = check(base, cur, p_base, p_cur, 3, 200, rng, When::undecided);
    out.failed += alarm(r.final);
    out.inconclusive_before += r.first.status == gate::compare::Status::inconclusive;
    out.calls += static_cast<double>(r.calls) / comparisons;
    if (r.final.confirmation) out.most_runs = std::max(out.most_runs, r.final.confirmation->runs);
  }
  return out;
}

std::vector<double> broken(std::vector<double> p, int count) {
  for (int i = 0; i < count; ++i)
    p[static_cast<std::size_t>(i)] = 0;
  return p;
}

} // namespace

TEST_CASE(
    "gate init's 6-task suite: the default confirmation fails a broken prompt, A/A stays within alpha") {
  // Tasks answered at temperature 0 pass nearly always; 0.95 leaves room
  // for a real model's occasional miss.
  for (double good : {1.0, 0.95}) {
    const std::vector<double> p(6, good);
    struct Case {
      int broken;
      double at_least;
    };
    for (const Case& c : {Case{5, 0.99}, Case{2, 0.95}, Case{1, 0.80}}) {
      const Starter r = starter(p, broken(p, c.broken), 190 + static_cast<std::uint64_t>(c.broken));
      MESSAGE("init's suite, p = " << good << ", " << c.broken
                                   << " of 6 broken: " << 100.0 * r.inconclusive_before / comparisons
                                   << "% inconclusive without confirmation, "
                                   << 100.0 * r.failed / comparisons << "% failed with the default ("
                                   << r.calls << " fresh calls on average, up to " << r.most_runs
                                   << " runs a side)");
      CHECK(r.failed >= c.at_least * comparisons);
      CHECK(r.calls <= 200);
    }
  }
  // A/A with real noise: tasks that pass 50-100% of the time.
  const std::vector<double> noisy{1.0, 0.9, 0.8, 0.7, 0.6, 0.5};
  const Starter aa = starter(noisy, noisy, 196);
  MESSAGE("init's suite, A/A (rates 0.5..1): " << 100.0 * aa.failed / comparisons << "% failed (" << aa.calls
                                               << " fresh calls on average)");
  CHECK(aa.failed <= comparisons / 20);
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

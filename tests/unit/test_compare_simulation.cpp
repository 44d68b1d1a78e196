#include <doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_compare_sim_support.hpp"

// Does the gate stay quiet on noise and catch a real drop? Seeded,
// deterministic simulation with the default thresholds
// (max_success_drop_pp 2, max_consistency_gap_rise_pp 5, alpha 0.05).

using namespace gate::sim;
using gate::compare::compare;
using gate::compare::Options;
using gate::compare::Verdict;
using gate::report::Report;

namespace {

bool all_pass_to_all_fail(const Report& b, const Report& a) {
  for (std::size_t i = 0; i < b.tasks.size(); ++i)
    if (b.task_stats[i].c == k && a.task_stats[i].c == 0) return true;
  return false;
}

} // namespace

TEST_CASE("simulation: A/A false alarms and power against a 10pp drop") {
  SplitMix64 rng{20240611};
  // True pass probabilities spread uniformly over [0, 1); the drop scales
  // every one so that the mean falls by exactly 10pp.
  const std::vector<double> p = true_rates(tasks, Spread::uniform, rng);
  const std::vector<double> worse_p = dropped(p, 0.10);

  int gate_aa = 0, naive_drop = 0, naive_flip = 0, gate_drop = 0;
  Options o; // defaults
  for (int c = 0; c < comparisons; ++c) {
    Report base = fresh(p, k, rng);
    Report same = fresh(p, k, rng);
    Report worse = fresh(worse_p, k, rng);
    Verdict aa = compare(base, same, o);
    gate_aa += alarm(aa);
    naive_drop += same.stats.overall.success_rate - base.stats.overall.success_rate <= -0.02 + 1e-12;
    naive_flip += all_pass_to_all_fail(base, same);
    gate_drop += alarm(compare(base, worse, o));
  }
  double n = comparisons;
  double gate_rate = gate_aa / n, drop_rate = naive_drop / n, flip_rate = naive_flip / n;
  double power = gate_drop / n;
  MESSAGE("A/A false alarms over " << comparisons << " comparisons: gate " << 100 * gate_rate
                                   << "%, naive 'success fell >= 2pp' " << 100 * drop_rate
                                   << "%, naive 'any 3/3 -> 0/3 flip' " << 100 * flip_rate << "%");
  MESSAGE("true 10pp drop: gate fails " << 100 * power << "%");
  CHECK(gate_rate <= 0.06);
  CHECK(power >= 0.90);
  // Expected: a mean d with sd √((1/6)·(2/3)/200) = 2.36pp falls 2pp about
  // 20% of the time; a 3/3 → 0/3 flip has E[p³(1−p)³] = 1/140 per task, so
  // at least one among 200 about 1 − e^(−200/140) = 76% of the time.
  CHECK(drop_rate > 0.12);
  CHECK(drop_rate >= 3 * gate_rate);
  CHECK(flip_rate > 0.5);
}

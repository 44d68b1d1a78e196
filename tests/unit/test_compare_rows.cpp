// Each compare row's interval and noise floor belong to that row's own
// statistic and lie within the range it can take (issue 31.7): a gap can
// rise by at most 100 − its baseline, a success rate fall by at most its
// baseline, a p95 change is bounded below by −100%; and a row that cannot
// be computed says why, not a reason that is false.
#include <doctest.h>

#include "test_compare_support.hpp"

using namespace gate::compare;
using namespace gate::compare::test;
using doctest::Approx;

TEST_CASE("the consistency gap's noise floor never exceeds the rise the gap can make") {
  // Three tasks, each mixed in the baseline (gap 1) but one: a rise of the
  // mean gap is at most 100 − 66.7 = 33.3pp. The sign-flip over 3 tasks
  // reaches p = 1/8 at best, so no rise is detectable: no floor, not ±166pp.
  std::vector<Task> before{counted(id(0), 1, 3), counted(id(1), 2, 3), counted(id(2), 3, 3)};
  std::vector<Task> after{counted(id(0), 1, 3), counted(id(1), 1, 3), counted(id(2), 1, 3)};
  Options o;
  o.thresholds.max_consistency_gap_rise_pp = 10;
  Verdict v = compare(report(before), report(after), o);
  const MetricRow& gap = row(v, "consistency_gap");
  CHECK(gap.baseline == Approx(200.0 / 3));
  CHECK_FALSE(gap.noise_floor.has_value());
  CHECK(gap.delta_interval.high <= 100 - gap.baseline + 1e-9);

  // With 40 tasks at a baseline gap of 1/4 a floor exists, below 75pp.
  before.clear();
  after.clear();
  for (int i = 0; i < 40; ++i) {
    before.push_back(counted(id(i), i % 4 == 0 ? 1 : 3, 3));
    after.push_back(counted(id(i), i % 4 == 0 ? 1 : 3, 3));
  }
  Verdict many = compare(report(before), report(after), o);
  const MetricRow& g40 = row(many, "consistency_gap");
  REQUIRE(g40.noise_floor.has_value());
  CHECK(*g40.noise_floor <= 75.0);
}

TEST_CASE("the success rate's noise floor never exceeds the fall the rate can make") {
  // Two tasks at 1/3 in the baseline: the rate can fall by 33.3pp at most;
  // two tasks cannot reach p < 0.05, so there is no floor.
  std::vector<Task> before{counted(id(0), 1, 3), counted(id(1), 1, 3)};
  std::vector<Task> after{counted(id(0), 0, 3), counted(id(1), 1, 3)};
  Verdict v = compare(report(before), report(after), Options{});
  const MetricRow& s = row(v, "success_rate");
  CHECK_FALSE(s.noise_floor.has_value());
  CHECK(s.delta_interval.low >= -s.baseline - 1e-9);
}

TEST_CASE("a single paired task whose runs took different routes: the gap row says so") {
  // Ten runs a side, each with its own seed (a harness that is not known to
  // set it per trial, one task: pollution cannot be told from design).
  auto seeded = [](Task t) {
    for (Run& r : t.runs)
      r.route["seed"] = std::to_string(100 + r.index);
    return t;
  };
  Verdict v =
      compare(report({seeded(counted(id(0), 5, 10))}), report({seeded(counted(id(0), 4, 10))}), Options{});
  const MetricRow& gap = row(v, "consistency_gap");
  CHECK_FALSE(gap.available);
  CHECK(gap.unavailable == "the 1 paired task with 10 measured runs in both reports is route-polluted (seed "
                           "differs between its runs), and polluted tasks are left out of the gap "
                           "(include_polluted: true counts them)");
}

TEST_CASE("the p95 latency row's interval is the p95 change's, and holds its Δ") {
  std::vector<Task> before, after;
  for (int i = 0; i < 12; ++i) {
    Task b = counted(id(i), 2, 2), a = counted(id(i), 2, 2);
    for (Run& r : b.runs)
      r.latency_ms = 100 + 10 * i + r.index;
    for (Run& r : a.runs)
      r.latency_ms = 90 + 9 * i + r.index; // about 10% faster
    before.push_back(b);
    after.push_back(a);
  }
  // One slow outlier in the current report moves the mean of its task a
  // lot, the p95 little.
  after[0].runs[0].latency_ms = 2000;
  Verdict v = compare(report(before), report(after), Options{});
  const MetricRow& lat = row(v, "p95_latency");
  REQUIRE(lat.available);
  CHECK(lat.delta < 0);
  CHECK(lat.delta_interval.low <= lat.delta);
  CHECK(lat.delta_interval.high >= lat.delta);
  CHECK(lat.delta_interval.low >= -100);
  CHECK(lat.delta_interval.low < lat.delta_interval.high);
  CHECK(lat.test.find("bootstrap") != std::string::npos);
  // Seeded: the same reports give the same interval.
  Verdict again = compare(report(before), report(after), Options{});
  CHECK(row(again, "p95_latency").delta_interval.low == lat.delta_interval.low);
  CHECK(row(again, "p95_latency").delta_interval.high == lat.delta_interval.high);

  // One task: the per-task mean rises by half while the p95 falls; the
  // interval is the p95's, around its Δ, not the mean's single point.
  Task b = counted(id(0), 3, 3), a = counted(id(0), 3, 3);
  const double lb[] = {100, 100, 400}, la[] = {300, 300, 300};
  for (int i = 0; i < 3; ++i) {
    b.runs[i].latency_ms = lb[i];
    a.runs[i].latency_ms = la[i];
  }
  Verdict one = compare(report({b}), report({a}), Options{});
  const MetricRow& l1 = row(one, "p95_latency");
  // p95 of {100, 100, 400}: rank 0.95 · 2 = 1.9 → 100 + 0.9 · 300 = 370.
  CHECK(l1.delta == Approx(100 * (300.0 / 370 - 1)));
  CHECK(l1.delta_interval.low <= l1.delta);
  CHECK(l1.delta_interval.high >= l1.delta);
}

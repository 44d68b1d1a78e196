#include <doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gate/compare/stats.hpp>
#include <gate/util/error.hpp>

using namespace gate::compare;

namespace {

void check_all_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("index " << i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
  }
}

bool throws_bad_input(auto&& f) {
  try {
    f();
  } catch (const gate::Error& e) {
    return e.code() == gate::Exit::bad_input;
  }
  return false;
}

} // namespace

TEST_CASE("fisher: 0/3 against 3/3 is 1/20") {
  // Margins: 6 runs, 3 passes, 3 current runs. P(X = 0) = C(3,0)·C(3,3)/C(6,3) = 1/20.
  CHECK(fisher_one_sided_less(0, 3, 3, 3) == doctest::Approx(0.05).epsilon(1e-12));
  // The mirror: 3/3 now against 0/3 before, P(X >= 3) = C(3,3)·C(3,0)/C(6,3) = 1/20.
  CHECK(fisher_one_sided_greater(3, 3, 0, 3) == doctest::Approx(0.05).epsilon(1e-12));
  // No evidence of a drop when the current side is all-pass: P(X <= 3) = 1.
  CHECK(fisher_one_sided_less(3, 3, 0, 3) == doctest::Approx(1.0));
}

TEST_CASE("fisher: asymmetric table 1/4 against 5/6") {
  // N = 10, K = 6 passes, 4 current runs; X ranges 0..4, C(10,4) = 210.
  // P(0) = C(6,0)·C(4,4)/210 = 1/210, P(1) = C(6,1)·C(4,3)/210 = 24/210.
  // less = P(X <= 1) = 25/210; greater = P(X >= 1) = 1 − 1/210 = 209/210.
  CHECK(fisher_one_sided_less(1, 4, 5, 6) == doctest::Approx(25.0 / 210).epsilon(1e-12));
  CHECK(fisher_one_sided_greater(1, 4, 5, 6) == doctest::Approx(209.0 / 210).epsilon(1e-12));
}

TEST_CASE("fisher: a tail far below double's comfort is still exact") {
  // 0/100 against 100/100: P(X = 0) = 1/C(200,100),
  // C(200,100) = 90548514656103281165404177077484163874504589675413336841320 → 1.1043803466e-59.
  CHECK(fisher_one_sided_less(0, 100, 100, 100) == doctest::Approx(1.10438034659975e-59).epsilon(1e-9));
}

TEST_CASE("fisher: stable at 10,000 runs a side") {
  // 5000/10000 against 5000/10000: X is symmetric about 5000, so
  // P(X <= 5000) = (1 + P(X = 5000))/2, P(X = 5000) = C(10^4,5000)²/C(2·10^4,10^4).
  // Stirling, C(2n,n) ≈ 4^n/√(πn)·(1 − 1/(8n)): P(X = 5000) ≈ √(10^4·π)/(5000π)·(1 − 3/80000)
  // = 0.0112837917·0.9999625 = 0.0112833686 → 0.5056416843.
  double less = fisher_one_sided_less(5000, 10000, 5000, 10000);
  CHECK(less == doctest::Approx(0.5056416843).epsilon(1e-9));
  CHECK(fisher_one_sided_greater(5000, 10000, 5000, 10000) == doctest::Approx(less).epsilon(1e-12));
}

TEST_CASE("fisher: the two tails overlap in exactly the observed point") {
  // 2/5 against 4/6: N = 11, K = 6, 5 drawn, C(11,5) = 462; P(X = 2) = C(6,2)·C(5,3)/462 = 150/462.
  double sum = fisher_one_sided_less(2, 5, 4, 6) + fisher_one_sided_greater(2, 5, 4, 6);
  CHECK(sum == doctest::Approx(1 + 150.0 / 462).epsilon(1e-12));
}

TEST_CASE("fisher: a side without runs is no evidence; inconsistent counts are bad input") {
  CHECK(fisher_one_sided_less(0, 0, 3, 3) == 1.0);
  CHECK(fisher_one_sided_greater(2, 2, 0, 0) == 1.0);
  CHECK(throws_bad_input([] { fisher_one_sided_less(4, 3, 0, 3); }));
  CHECK(throws_bad_input([] { fisher_one_sided_less(0, 3, -1, 3); }));
  CHECK(throws_bad_input([] { fisher_one_sided_greater(0, -1, 0, 3); }));
}

TEST_CASE("benjamini-hochberg: step-up, in input order") {
  // Sorted 0.005, 0.01, 0.03, 0.04 (m = 4): m·p/rank = 0.02, 0.02, 0.04, 0.04;
  // running minimum from the top leaves them; back in input order:
  check_all_close(benjamini_hochberg({0.01, 0.04, 0.03, 0.005}), {0.02, 0.04, 0.04, 0.02});
  // 0.6·2/1 = 1.2 but the step-up minimum takes 0.9·2/2 = 0.9 for both.
  check_all_close(benjamini_hochberg({0.6, 0.9}), {0.9, 0.9});
  // The minimum can pull a smaller rank down: 0.04·2/1 = 0.08 > 0.05·2/2 = 0.05.
  check_all_close(benjamini_hochberg({0.05, 0.04}), {0.05, 0.05});
  CHECK(benjamini_hochberg({}).empty());
  check_all_close(benjamini_hochberg({0.3}), {0.3});
}

TEST_CASE("holm: step-down, in input order") {
  // Sorted 0.005, 0.01, 0.03, 0.04: (m − j + 1)·p = 0.02, 0.03, 0.06, 0.04;
  // running maximum: 0.02, 0.03, 0.06, 0.06; back in input order:
  check_all_close(holm({0.01, 0.04, 0.03, 0.005}), {0.03, 0.06, 0.06, 0.02});
  // 0.6·2 = 1.2 capped at 1, then max(1, 0.9) = 1.
  check_all_close(holm({0.6, 0.9}), {1.0, 1.0});
  // Ties: both 0.02 → 0.02·2 = 0.04 and max(0.04, 0.02·1) = 0.04.
  check_all_close(holm({0.02, 0.02}), {0.04, 0.04});
  CHECK(holm({}).empty());
}

TEST_CASE("adjustments reject p-values that are not probabilities") {
  CHECK(throws_bad_input([] { benjamini_hochberg({0.1, 1.5}); }));
  CHECK(throws_bad_input([] { holm({-0.1}); }));
  CHECK(throws_bad_input([] { holm({std::numeric_limits<double>::quiet_NaN()}); }));
}

TEST_CASE("sign flip: exact enumeration on three equal differences") {
  // d = {1, 1, 1}: the 8 sign patterns sum to 3, 1, 1, 1, −1, −1, −1, −3.
  // |sum| >= 3: 2 of 8 = 0.25; sum >= 3: 1/8; sum <= 3: 8/8.
  auto r = paired_sign_flip_test({1, 1, 1});
  CHECK(r.method == "exact");
  CHECK(r.replicates == 8);
  CHECK(r.nonzero == 3);
  CHECK(r.mean == doctest::Approx(1.0));
  CHECK(r.p_two_sided == doctest::Approx(0.25));
  CHECK(r.p_greater == doctest::Approx(0.125));
  CHECK(r.p_less == doctest::Approx(1.0));
  // The regression direction: all three went down, sum <= −3 in 1 of 8.
  auto down = paired_sign_flip_test({-1, -1, -1});
  CHECK(down.p_less == doctest::Approx(0.125));
  CHECK(down.p_greater == doctest::Approx(1.0));
}

TEST_CASE("sign flip: zeros are not flipped; unequal magnitudes") {
  // Non-zero {0.5, −0.25, 1}, observed sum 1.25, mean over all 4 = 0.3125.
  // Pattern sums: ±0.5 ±0.25 ±1 = 1.75, −0.25, 1.25, −0.75, 0.75, −1.25, 0.25, −1.75.
  // |s| >= 1.25: 4/8; s >= 1.25: 2/8; s <= 1.25: 7/8.
  auto r = paired_sign_flip_test({0.5, -0.25, 1, 0});
  CHECK(r.nonzero == 3);
  CHECK(r.mean == doctest::Approx(0.3125));
  CHECK(r.p_two_sided == doctest::Approx(0.5));
  CHECK(r.p_greater == doctest::Approx(0.25));
  CHECK(r.p_less == doctest::Approx(0.875));
}

TEST_CASE("sign flip: rounding never decides a tie") {
  // 0.3 − 0.1 − 0.2 is 0 in exact arithmetic but not in doubles; every
  // pattern's |sum| is >= 0, so p = 1 whatever the rounding.
  CHECK(paired_sign_flip_test({0.3, -0.1, -0.2}).p_two_sided == 1.0);
}

TEST_CASE("sign flip: nothing to flip") {
  auto r = paired_sign_flip_test({0, 0, 0});
  CHECK(r.nonzero == 0);
  CHECK(r.mean == 0);
  CHECK(r.p_two_sided == 1);
  CHECK(r.p_less == 1);
  CHECK(r.p_greater == 1);
  CHECK(paired_sign_flip_test({}).p_two_sided == 1);
  CHECK(throws_bad_input([] { paired_sign_flip_test({1, std::numeric_limits<double>::infinity()}); }));
}

TEST_CASE("sign flip: Monte-Carlo agrees with the exact law") {
  // 12 × (+1) and 5 × (−1), m = 17 > 16: observed sum 7. With F negatives among
  // 17 fair signs, sum = 17 − 2F; |sum| >= 7 ⇔ F <= 5 or F >= 12.
  // Σ_{F=0..5} C(17,F) = 1 + 17 + 136 + 680 + 2380 + 6188 = 9402, so
  // two-sided p = 2·9402/2^17 = 0.1434631, one-sided (greater) 9402/2^17 = 0.0717316.
  // Monte-Carlo sd at 20,000 draws: √(0.143·0.857/20000) = 0.0025; allow 4 sd.
  std::vector<double> d(12, 1.0);
  d.insert(d.end(), 5, -1.0);
  auto r = paired_sign_flip_test(d);
  CHECK(r.method == "monte-carlo");
  CHECK(r.replicates == 20000);
  CHECK(r.nonzero == 17);
  CHECK(std::fabs(r.p_two_sided - 0.1434631) < 0.01);
  CHECK(std::fabs(r.p_greater - 0.0717316) < 0.008);
}

TEST_CASE("sign flip: Monte-Carlo is deterministic and independent of task order") {
  std::vector<double> d;
  for (int i = 0; i < 40; ++i)
    d.push_back((i % 3 == 0 ? -1.0 : 1.0) * (0.1 + 0.05 * (i % 7)));
  auto first = paired_sign_flip_test(d);
  auto second = paired_sign_flip_test(d);
  std::vector<double> reversed(d.rbegin(), d.rend());
  auto third = paired_sign_flip_test(reversed);
  CHECK(first.p_two_sided == second.p_two_sided);
  CHECK(first.p_less == second.p_less);
  CHECK(first.p_two_sided == third.p_two_sided);
  CHECK(first.p_greater == third.p_greater);
}

TEST_CASE("sign flip: 30 positive differences hit the Monte-Carlo floor") {
  // The exact two-sided p is 2/2^30 ≈ 1.9e-9; 20,000 draws almost surely see
  // no pattern as extreme, so p = (1 + 0)/(1 + 20000), and the fixed seed
  // makes that the same on every run. Every pattern sum is <= 30: p_less = 1.
  auto r = paired_sign_flip_test(std::vector<double>(30, 0.5));
  CHECK(r.method == "monte-carlo");
  CHECK(r.p_two_sided == doctest::Approx(1.0 / 20001).epsilon(1e-12));
  CHECK(r.p_greater == doctest::Approx(1.0 / 20001).epsilon(1e-12));
  CHECK(r.p_less == doctest::Approx(1.0));
}

namespace {

// The Monte-Carlo law of stats.hpp the plain way, one replicate after the
// other: the test sums several replicates at once and must count exactly
// the same hits.
SignFlipResult one_at_a_time(std::vector<double> d) {
  std::erase(d, 0.0);
  std::sort(d.begin(), d.end(), [](double a, double b) {
    return std::fabs(a) != std::fabs(b) ? std::fabs(a) < std::fabs(b) : a < b;
  });
  double observed = 0, scale = 0;
  for (double x : d) {
    observed += x;
    scale += std::fabs(x);
  }
  const double tol = 1e-9 * scale;
  std::size_t two = 0, less = 0, greater = 0;
  std::mt19937_64 rng(sign_flip_seed);
  for (std::size_t b = 0; b < sign_flip_replicates; ++b) {
    double flipped = 0;
    for (std::size_t start = 0; start < d.size(); start += 64) {
      const std::uint64_t bits = rng();
      for (std::size_t i = start; i < std::min(d.size(), start + 64); ++i)
        flipped += std::fabs(d[i]) * static_cast<double>(bits >> (i - start) & 1U);
    }
    const double s = scale - 2 * flipped;
    two += std::fabs(s) >= std::fabs(observed) - tol;
    less += s <= observed + tol;
    greater += s >= observed - tol;
  }
  const double n = static_cast<double>(sign_flip_replicates) + 1;
  SignFlipResult r;
  r.p_two_sided = (1 + static_cast<double>(two)) / n;
  r.p_less = (1 + static_cast<double>(less)) / n;
  r.p_greater = (1 + static_cast<double>(greater)) / n;
  return r;
}

} // namespace

TEST_CASE("sign flip: Monte-Carlo counts the hits of one replicate at a time, exactly") {
  // Sizes around the 64 differences one draw covers, ties (equal magnitudes)
  // and zeros, which are left out.
  for (std::size_t m : {17u, 63u, 64u, 65u, 130u, 301u}) {
    CAPTURE(m);
    std::vector<double> d;
    for (std::size_t i = 0; i < m; ++i)
      d.push_back((i % 5 == 0 ? -1.0 : 1.0) * (i % 4 == 0 ? 0.5 : 0.125 * static_cast<double>(i % 7 + 1)));
    d.push_back(0);
    const SignFlipResult got = paired_sign_flip_test(d), want = one_at_a_time(d);
    REQUIRE(got.method == "monte-carlo");
    CHECK(got.p_two_sided == want.p_two_sided);
    CHECK(got.p_less == want.p_less);
    CHECK(got.p_greater == want.p_greater);
  }
}

TEST_CASE("mean difference interval by the t distribution") {
  // d = {1, 2, 3, 4}: mean 2.5, sd = √(((1.5² + 0.5²)·2)/3) = √(5/3) = 1.2909944,
  // t(0.975, 3) = 3.1824463, half width = 3.1824463·1.2909944/√4 = 2.0542603.
  auto r = mean_diff_interval({1, 2, 3, 4});
  CHECK(r.has_spread);
  CHECK(r.mean == doctest::Approx(2.5));
  CHECK(r.interval.low == doctest::Approx(2.5 - 2.0542603).epsilon(1e-7));
  CHECK(r.interval.high == doctest::Approx(2.5 + 2.0542603).epsilon(1e-7));
  // One value: no sd, the interval collapses onto the mean and says so.
  auto one = mean_diff_interval({-0.25});
  CHECK_FALSE(one.has_spread);
  CHECK(one.interval.low == -0.25);
  CHECK(one.interval.high == -0.25);
  CHECK_FALSE(mean_diff_interval({}).has_spread);
}

TEST_CASE("mcnemar exact") {
  // b = 5, c = 0: n = 5, P(B >= 5) = 1/32; two-sided 2/32 = 0.0625.
  auto r = mcnemar_exact(5, 0);
  CHECK(r.discordant == 5);
  CHECK(r.p_more == doctest::Approx(1.0 / 32).epsilon(1e-12));
  CHECK(r.p_fewer == doctest::Approx(1.0));
  CHECK(r.p_two_sided == doctest::Approx(0.0625).epsilon(1e-12));
  // b = 3, c = 1: n = 4, P(B >= 3) = (C(4,3) + C(4,4))/16 = 5/16, P(B <= 3) = 15/16,
  // two-sided 2·5/16 = 0.625.
  auto r2 = mcnemar_exact(3, 1);
  CHECK(r2.p_more == doctest::Approx(0.3125).epsilon(1e-12));
  CHECK(r2.p_fewer == doctest::Approx(0.9375).epsilon(1e-12));
  CHECK(r2.p_two_sided == doctest::Approx(0.625).epsilon(1e-12));
  // b = c = 10: P(B >= 10) = (2^20 + C(20,10))/2/2^20 = (1048576 + 184756)/2097152 = 0.5880985,
  // doubled above 1 → capped.
  auto r3 = mcnemar_exact(10, 10);
  CHECK(r3.p_more == doctest::Approx(0.5880985).epsilon(1e-7));
  CHECK(r3.p_two_sided == 1.0);
  auto none = mcnemar_exact(0, 0);
  CHECK(none.discordant == 0);
  CHECK(none.p_two_sided == 1.0);
  CHECK(throws_bad_input([] { mcnemar_exact(-1, 2); }));
}

TEST_CASE("normal quantiles behind the noise floor") {
  CHECK(gate::metrics::normal_quantile(0.95) == doctest::Approx(1.644854).epsilon(1e-6));
  CHECK(gate::metrics::normal_quantile(0.975) == doctest::Approx(1.959964).epsilon(1e-6));
  CHECK(gate::metrics::normal_quantile(0.8) == doctest::Approx(0.841621).epsilon(1e-6));
}

TEST_CASE("noise floor: binomial per task") {
  // 100 tasks at 2/3 of 3 runs, 3 current runs. Unbiased p(1−p) = (2/3)(1/3)·3/2 = 1/3;
  // Var(d) = 1/3·(1/3 + 1/3) = 2/9, sd_d = 0.4714045.
  // z(0.95) + z(0.8) = 1.6448536 + 0.8416212 = 2.4864749;
  // normal = 100·2.4864749·0.4714045/√100 = 11.7213549pp.
  // discrete: m = floor(log2(20)) + 1 = 5 tasks, 100·5/(3·100) = 1.6666667pp.
  auto r = detectable_change(std::vector<PassCount>(100, {2, 3}), 3, 0.05);
  CHECK(r.method == "binomial per task");
  CHECK(r.tasks == 100);
  CHECK(r.sd_d == doctest::Approx(0.4714045).epsilon(1e-7));
  CHECK(r.normal_pp == doctest::Approx(11.7213549).epsilon(1e-7));
  CHECK(r.discrete_pp == doctest::Approx(1.6666667).epsilon(1e-7));
  CHECK(r.drop_pp == r.normal_pp);
}

TEST_CASE("noise floor: mixed task rates; deterministic tasks add no noise") {
  // 16 tasks, four each of 3/3, 2/3, 1/3, 0/3. Unbiased p(1−p): 0, 1/3, 1/3, 0;
  // Var(d) = mean of v·(1/3 + 1/3) = (2·1/3·2/3)/4 = 1/9, sd_d = 1/3.
  // normal = 100·2.4864749·(1/3)/4 = 20.7206238pp; discrete = 100·5/(3·16) = 10.4166667pp.
  std::vector<PassCount> base;
  for (int i = 0; i < 4; ++i)
    for (std::int64_t c = 3; c >= 0; --c)
      base.push_back({c, 3});
  auto r = detectable_change(base, 3, 0.05);
  CHECK(r.sd_d == doctest::Approx(1.0 / 3).epsilon(1e-12));
  CHECK(r.normal_pp == doctest::Approx(20.7206238).epsilon(1e-7));
  CHECK(r.discrete_pp == doctest::Approx(10.4166667).epsilon(1e-7));
  CHECK(r.drop_pp == r.normal_pp);
}

TEST_CASE("noise floor: a deterministic baseline is bounded by what the test can see") {
  // 50 tasks all 3/3: sd_d = 0, yet the sign-flip test needs 5 changed tasks of
  // at least 1/3 each: 100·5/(3·50) = 3.3333333pp. alpha = 0.01 needs
  // floor(log2(100)) + 1 = 7: 100·7/150 = 4.6666667pp.
  auto r = detectable_change(std::vector<PassCount>(50, {3, 3}), 3, 0.05);
  CHECK(r.normal_pp == 0);
  CHECK(r.drop_pp == doctest::Approx(3.3333333).epsilon(1e-7));
  CHECK(detectable_change(std::vector<PassCount>(50, {3, 3}), 3, 0.01).drop_pp ==
        doctest::Approx(4.6666667).epsilon(1e-7));
}

TEST_CASE("noise floor: single runs fall back to the between-task variance") {
  // k = 1, outcomes {1, 1, 1, 0}: mean 0.75, sample variance (3·0.25² + 0.75²)/3 = 0.25;
  // Var(d) = 0.25·(1 + 1) = 0.5, sd_d = 0.7071068; normal = 100·2.4864749·0.7071068/2 = 87.9101618pp;
  // discrete = 100·5/(1·4) = 125pp: no drop of a 4-task single-run suite is detectable.
  auto r = detectable_change({{1, 1}, {1, 1}, {1, 1}, {0, 1}}, 1, 0.05);
  CHECK(r.method == "between-task variance");
  CHECK(r.sd_d == doctest::Approx(0.7071068).epsilon(1e-7));
  CHECK(r.normal_pp == doctest::Approx(87.9101618).epsilon(1e-7));
  CHECK(r.drop_pp == doctest::Approx(125.0));
}

TEST_CASE("noise floor: errored tasks are skipped; bad arguments are bad input") {
  // Only the {2, 3} task counts: same per-task numbers as the 100-task case, √1 in place of √100.
  auto r = detectable_change({{0, 0}, {2, 3}}, 3, 0.05);
  CHECK(r.tasks == 1);
  CHECK(r.normal_pp == doctest::Approx(117.213549).epsilon(1e-7));
  auto none = detectable_change({{0, 0}}, 3, 0.05);
  CHECK(none.tasks == 0);
  CHECK(std::isinf(none.drop_pp));
  CHECK(throws_bad_input([] { detectable_change({{4, 3}}, 3, 0.05); }));
  CHECK(throws_bad_input([] { detectable_change({{1, 3}}, 0, 0.05); }));
  CHECK(throws_bad_input([] { detectable_change({{1, 3}}, 3, 1.0); }));
  CHECK(throws_bad_input([] { detectable_change({{1, 3}}, 3, 0.05, 0.0); }));
}

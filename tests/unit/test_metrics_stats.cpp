#include <doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <gate/metrics/stats.hpp>

using namespace gate::metrics;
using doctest::Approx;

TEST_CASE("wilson interval for 7 of 10") {
  // z = 1.959964, z² = 3.841459, p = 0.7, n = 10
  // denominator = 1 + z²/n = 1.3841459
  // center = (0.7 + z²/20) / 1.3841459 = 0.8920729 / 1.3841459 = 0.644493
  // half = z/1.3841459 · √(0.7·0.3/10 + z²/400) = 1.416010 · √0.0306036 = 0.247715
  Interval i = wilson(7, 10);
  CHECK(i.low == Approx(0.396778).epsilon(1e-5));
  CHECK(i.high == Approx(0.892209).epsilon(1e-5));
}

TEST_CASE("wilson interval at the edges") {
  // 0 of 10: center = half = (z²/20)/(1 + z²/10), so low = 0 and
  // high = (z²/10)/(1 + z²/10) = 0.3841459/1.3841459 = 0.277533.
  Interval none = wilson(0, 10);
  CHECK(none.low == Approx(0.0));
  CHECK(none.high == Approx(0.277533).epsilon(1e-5));
  // Mirror image for 10 of 10.
  Interval all = wilson(10, 10);
  CHECK(all.low == Approx(1 - 0.277533).epsilon(1e-5));
  CHECK(all.high == Approx(1.0));
  Interval empty = wilson(0, 0);
  CHECK(empty.low == 0.0);
  CHECK(empty.high == 1.0);
}

// Tables print six decimals: agree to half a unit in the last place.
bool matches_table(double value, double table) { return std::fabs(value - table) <= 5e-7; }

TEST_CASE("t quantiles match the table") {
  CHECK(matches_table(t_quantile(0.975, 1), 12.706205));
  CHECK(matches_table(t_quantile(0.975, 2), 4.302653));
  CHECK(matches_table(t_quantile(0.975, 3), 3.182446));
  CHECK(matches_table(t_quantile(0.975, 9), 2.262157));
  CHECK(matches_table(t_quantile(0.975, 29), 2.045230));
  CHECK(matches_table(t_quantile(0.975, 199), 1.971957));
  CHECK(matches_table(t_quantile(0.995, 3), 5.840909));
  CHECK(matches_table(t_quantile(0.95, 10), 1.812461));
  CHECK(matches_table(t_quantile(0.975, 1e9), 1.959964));
  CHECK_FALSE(matches_table(t_quantile(0.975, 9), 2.262158)); // one unit off in the last place
}

TEST_CASE("t quantiles are symmetric and tend to the normal") {
  CHECK(t_quantile(0.025, 9) == Approx(-2.262157).epsilon(1e-7));
  CHECK(t_quantile(0.5, 7) == Approx(0.0).epsilon(1e-12));
  // Reference values computed with 40-digit arithmetic (mpmath betainc).
  CHECK(t_quantile(0.975, 1e4) == Approx(1.960201239890626).epsilon(1e-12));
  CHECK(t_quantile(0.975, 1e6) == Approx(1.959966356814107).epsilon(1e-12));
  CHECK(t_quantile(0.975, 1e8) == Approx(1.959964008262767).epsilon(1e-12));
  // Far tail, small df: the Newton refinement must still land.
  CHECK(t_quantile(1e-8, 3) == Approx(-479.5250695797383).epsilon(1e-10));
}

TEST_CASE("t quantile rejects what it cannot compute") {
  CHECK_THROWS_AS(t_quantile(0.0, 5), std::domain_error);
  CHECK_THROWS_AS(t_quantile(1.0, 5), std::domain_error);
  CHECK_THROWS_AS(t_quantile(0.975, 0.5), std::domain_error);
  CHECK_THROWS_AS(t_quantile(std::nan(""), 5), std::domain_error);
}

TEST_CASE("t cdf") {
  // df = 1 is Cauchy: F(t) = ½ + atan(t)/π; atan(−1.5) = −0.982794 → 0.187167.
  CHECK(t_cdf(-1.5, 1) == Approx(0.187167).epsilon(1e-6));
  // df = 2: F(t) = ½ + t/(2√(2+t²)); t = 2 → ½ + 2/(2√6) = 0.908248.
  CHECK(t_cdf(2, 2) == Approx(0.908248).epsilon(1e-6));
  CHECK(t_cdf(0, 5) == Approx(0.5));
  CHECK(t_cdf(2.262157162798206, 9) == Approx(0.975).epsilon(1e-12));
  CHECK(t_cdf(-2.262157162798206, 9) == Approx(0.025).epsilon(1e-12));
  // Large df goes through the normal approximation: Φ(1.959964) = 0.975.
  CHECK(t_cdf(1.959963984540054, 1e9) == Approx(0.975).epsilon(1e-9));
  CHECK(t_cdf(1.959966356814107, 1e6) == Approx(0.975).epsilon(1e-10));
  // Round trip on both sides of the switch to the asymptotic forms.
  for (double df : {4.5, 40.0, 399999.0, 400001.0})
    CHECK(t_cdf(t_quantile(0.9, df), df) == Approx(0.9).epsilon(1e-10));
}

TEST_CASE("normal quantile") {
  CHECK(normal_quantile(0.975) == Approx(1.959963984540054).epsilon(1e-14));
  CHECK(normal_quantile(0.025) == Approx(-1.959963984540054).epsilon(1e-14));
  CHECK(normal_quantile(0.5) == 0.0);
  CHECK(normal_quantile(1e-10) == Approx(-6.361340902404056).epsilon(1e-13));
  CHECK_THROWS_AS(normal_quantile(1.0), std::domain_error);
}

TEST_CASE("t interval over task rates") {
  // {0.4, 0.5, 0.6}: mean 0.5, sd = √((0.01 + 0 + 0.01)/2) = 0.1,
  // se = 0.1/√3 = 0.0577350, half = t(0.975, 2)·se = 4.302653·0.0577350 = 0.248414.
  Interval i = task_mean_interval({0.4, 0.5, 0.6});
  CHECK(i.low == Approx(0.251586).epsilon(1e-6));
  CHECK(i.high == Approx(0.748414).epsilon(1e-6));
}

TEST_CASE("t interval is clipped to [0, 1]") {
  // {1, 2/3, 0, 1/3}: mean 0.5, squares 0.25 + 1/36 + 0.25 + 1/36 = 5/9,
  // sd = √(5/27) = 0.430331, se = 0.215166, half = 3.182446·0.215166 = 0.684752
  // → [−0.184752, 1.184752] → [0, 1].
  Interval both = task_mean_interval({1, 2.0 / 3, 0, 1.0 / 3});
  CHECK(both.low == 0.0);
  CHECK(both.high == 1.0);
  // {1, 1, 0.9}: mean 0.966667, squares 1/900 + 1/900 + 4/900 = 0.00666667,
  // sd = √(0.00333333) = 0.0577350, se = 0.0333333, half = 4.302653·0.0333333 = 0.143422
  // → [0.823245, 1.110088] → high clipped.
  Interval top = task_mean_interval({1, 1, 0.9});
  CHECK(top.low == Approx(0.823245).epsilon(1e-6));
  CHECK(top.high == 1.0);
}

TEST_CASE("t interval needs two tasks") {
  Interval one = task_mean_interval({0.3});
  CHECK(one.low == 0.0);
  CHECK(one.high == 1.0);
  Interval none = task_mean_interval({});
  CHECK(none.low == 0.0);
  CHECK(none.high == 1.0);
}

TEST_CASE("binomial coefficients") {
  CHECK(binomial(5, 2) == 10.0); // 5·4/2
  CHECK(binomial(10, 0) == 1.0);
  CHECK(binomial(0, 0) == 1.0);
  CHECK(binomial(3, 5) == 0.0);
  CHECK(binomial(-1, 0) == 0.0);
  CHECK(binomial(52, 5) == 2598960.0); // poker hands
  // C(1000, 500) = 2.7028824094543657e299: near the top of double, still finite.
  CHECK(binomial(1000, 500) == Approx(2.7028824094543657e299).epsilon(1e-12));
}

TEST_CASE("pass@k and pass^k by hand") {
  // n=3, c=1, k=2: 1 − C(2,2)/C(3,2) = 1 − 1/3 = 2/3; pass^2 = C(1,2)/C(3,2) = 0.
  CHECK(pass_at_k(3, 1, 2) == Approx(2.0 / 3));
  CHECK(pass_hat_k(3, 1, 2) == 0.0);
  // n=3, c=2, k=2: pass^2 = C(2,2)/C(3,2) = 1/3; pass@2 = 1 − C(1,2)/C(3,2) = 1.
  CHECK(pass_hat_k(3, 2, 2) == Approx(1.0 / 3));
  CHECK(pass_at_k(3, 2, 2) == 1.0);
  // n=5, c=2, k=3: pass@3 = 1 − C(3,3)/C(5,3) = 1 − 1/10 = 0.9.
  CHECK(pass_at_k(5, 2, 3) == Approx(0.9));
  // k=1 is the plain rate: 4/10.
  CHECK(pass_at_k(10, 4, 1) == Approx(0.4));
  CHECK(pass_hat_k(10, 4, 1) == Approx(0.4));
  // k=n: pass@n is "any passed", pass^n "all passed", exactly.
  CHECK(pass_at_k(4, 1, 4) == 1.0);
  CHECK(pass_hat_k(4, 1, 4) == 0.0);
  CHECK(pass_hat_k(4, 4, 4) == 1.0);
  CHECK(pass_at_k(4, 0, 4) == 0.0);
}

TEST_CASE("pass@k with n = 1000 stays finite") {
  // pass^500 at c=500 = 1/C(1000, 500) = 3.699754e-300: a factorial form
  // would have overflowed long before.
  CHECK(pass_hat_k(1000, 500, 500) == Approx(3.699753997814027e-300).epsilon(1e-10));
  CHECK(pass_at_k(1000, 500, 500) == 1.0);
  // pass^10 at c=990 = Π_{j<10} (990−j)/(1000−j) = 0.9039684513598869 (exact
  // rational arithmetic).
  CHECK(pass_hat_k(1000, 990, 10) == Approx(0.9039684513598869).epsilon(1e-13));
  CHECK(pass_at_k(1000, 1, 1) == Approx(0.001));
  CHECK(pass_hat_k(1000, 999, 1000) == 0.0);
}

TEST_CASE("pass@k curves equal the pointwise values") {
  for (auto [n, c] : {std::pair<int, int>{7, 3}, {1000, 321}, {1, 0}, {1, 1}, {4, 4}}) {
    std::vector<double> at = pass_at_k_curve(n, c), hat = pass_hat_k_curve(n, c);
    REQUIRE(at.size() == static_cast<std::size_t>(n));
    REQUIRE(hat.size() == static_cast<std::size_t>(n));
    for (int k = 1; k <= n; ++k) {
      CHECK(at[static_cast<std::size_t>(k - 1)] == pass_at_k(n, c, k));
      CHECK(hat[static_cast<std::size_t>(k - 1)] == pass_hat_k(n, c, k));
    }
  }
  CHECK(pass_at_k_curve(0, 0).empty());
}

TEST_CASE("pass@k rejects impossible counts") {
  CHECK_THROWS_AS(pass_at_k(3, 1, 4), std::invalid_argument);
  CHECK_THROWS_AS(pass_at_k(3, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(pass_hat_k(3, 4, 1), std::invalid_argument);
  CHECK_THROWS_AS(pass_hat_k(0, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(pass_at_k_curve(2, 3), std::invalid_argument);
}

TEST_CASE("percentile interpolates between closest ranks") {
  // {1,2,3,4} p95: rank = 0.95·3 = 2.85 → 3 + 0.85·(4 − 3) = 3.85.
  CHECK(percentile({4, 1, 3, 2}, 95) == Approx(3.85));
  // p50: rank 1.5 → 2.5.
  CHECK(percentile({1, 2, 3, 4}, 50) == Approx(2.5));
  CHECK(percentile({1, 2, 3, 4}, 0) == 1.0);
  CHECK(percentile({1, 2, 3, 4}, 100) == 4.0);
  // {10, 20, 30, 40, 50} p90: rank 3.6 → 40 + 0.6·10 = 46.
  CHECK(percentile({10, 20, 30, 40, 50}, 90) == Approx(46.0));
  CHECK(percentile({7}, 95) == 7.0);
  CHECK(percentile({}, 50) == 0.0);
  CHECK(percentile_sorted({1, 2, 3, 4}, 95) == Approx(3.85));
}

TEST_CASE(
    "percentile by selection equals the sorted one, whatever the order, and calls can follow each other") {
  // {9, 2, 7, 4, 5, 1, 8, 3, 6, 10}: sorted 1..10; p95 rank 8.55 → 9 + 0.55 = 9.55;
  // p50 rank 4.5 → 5.5; p0 → 1; p100 → 10.
  std::vector<double> v{9, 2, 7, 4, 5, 1, 8, 3, 6, 10};
  CHECK(percentile_in_place(v, 95) == Approx(9.55));
  CHECK(percentile_in_place(v, 50) == Approx(5.5));
  CHECK(percentile_in_place(v, 0) == 1.0);
  CHECK(percentile_in_place(v, 100) == 10.0);
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (double p : {1.0, 33.3, 95.0, 99.9})
    CHECK(percentile_in_place(v, p) == percentile_sorted(sorted, p)); // bit for bit
  std::vector<double> none;
  CHECK(percentile_in_place(none, 95) == 0.0);
}

TEST_CASE("median") {
  CHECK(median({5, 1, 3}) == 3.0);
  CHECK(median({4, 1, 3, 2}) == 2.5); // (2 + 3)/2
  CHECK(median({}) == 0.0);
}

TEST_CASE("jaccard of sets") {
  // {a,b,c} ∩ {b,c,d} = {b,c}, ∪ = {a,b,c,d}: 2/4.
  CHECK(jaccard({"a", "b", "c"}, {"b", "c", "d"}) == Approx(0.5));
  CHECK(jaccard({}, {}) == 1.0);
  CHECK(jaccard({"a"}, {}) == 0.0);
  // Duplicates and order do not matter: both are {a, b}.
  CHECK(jaccard({"a", "a", "b"}, {"b", "a"}) == 1.0);
  // {x} vs {x, y, z}: 1/3.
  CHECK(jaccard({"x"}, {"z", "y", "x"}) == Approx(1.0 / 3));
}

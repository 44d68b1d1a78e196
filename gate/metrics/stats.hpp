#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

// Closed-form statistics behind every number gate prints. Pure functions,
// no I/O; each has a unit test with a hand-computed value.
namespace gate::metrics {

struct Interval {
  double low = 0, high = 0;
};

// Wilson score interval for `successes` of `trials` at 95% (z = 1.959964).
// trials == 0 → [0, 1].
Interval wilson(double successes, double trials);

// The distributions are Boost.Math's (gate/metrics/math_policy.hpp says how
// its errors are handled); the argument checks and their exceptions are gate's.

// Quantile of Student's t distribution with `df` degrees of freedom
// (df >= 1), e.g. t_quantile(0.975, 9) = 2.262157. Throws std::domain_error
// for p outside (0, 1) or df < 1.
double t_quantile(double p, double df);

// P(T <= t) for Student's t with `df` > 0 degrees of freedom, through the
// regularized incomplete beta function (for paired t tests). Throws
// std::domain_error for df <= 0; NaN gives NaN.
double t_cdf(double t, double df);

// Φ⁻¹(p) of the standard normal. Throws std::domain_error for p outside (0, 1).
double normal_quantile(double p);

// Mean ± t(0.975, T−1)·sd/√T of per-task rates, clipped to [0, 1]. T < 2 →
// [0, 1] around the mean (no spread can be estimated).
Interval task_mean_interval(const std::vector<double>& rates);

// C(n, k) as a double (exact for the sizes gate sees); 0 when k > n.
double binomial(std::int64_t n, std::int64_t k);

// Chen et al. 2021, unbiased: 1 − C(n−c, k)/C(n, k). Requires 1 <= k <= n.
double pass_at_k(std::int64_t n, std::int64_t c, std::int64_t k);
// Yao et al. 2024 (tau-bench): C(c, k)/C(n, k). Requires 1 <= k <= n.
double pass_hat_k(std::int64_t n, std::int64_t c, std::int64_t k);
// Both are computed as products of ratios Π_{j<k} (a−j)/(n−j), never as
// factorials, so n up to 1,000 and beyond stays finite; a violated
// requirement throws std::invalid_argument.

// The values for every k = 1..n (index k−1) in O(n); equal bit for bit to
// calling pass_at_k / pass_hat_k per k. n == 0 → empty.
std::vector<double> pass_at_k_curve(std::int64_t n, std::int64_t c);
std::vector<double> pass_hat_k_curve(std::int64_t n, std::int64_t c);

// The run count most tasks have (METRICS.md "Common k"): the mode of
// `counts`, the smaller on a tie; 0 for no counts.
std::int64_t common_runs(const std::vector<std::int64_t>& counts);

// Percentile by linear interpolation between closest ranks (p in [0, 100]),
// numpy's default: rank = p/100·(N−1); empty → 0.
double percentile(std::vector<double> values, double p);
// The same on values already sorted ascending (no copy, no sort).
double percentile_sorted(const std::vector<double>& sorted, double p);
// The same value by selection, in linear time (a 300,000-run report's p95
// without sorting it); reorders `values`.
double percentile_in_place(std::vector<double>& values, double p);
double median(std::vector<double> values);

// Jaccard similarity of two sets (1.0 when both are empty).
double jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b);
// The same for inputs already sorted and free of duplicates (no copies).
double jaccard_sorted(const std::vector<std::string>& a, const std::vector<std::string>& b);

} // namespace gate::metrics

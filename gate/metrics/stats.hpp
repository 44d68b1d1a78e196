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

// Quantile of Student's t distribution with `df` degrees of freedom
// (df >= 1), e.g. t_quantile(0.975, 9) = 2.262157.
double t_quantile(double p, double df);

// Mean ± t(0.975, T−1)·sd/√T of per-task rates, clipped to [0, 1]. T < 2 →
// [0, 1] around the mean (no spread can be estimated).
Interval task_mean_interval(const std::vector<double>& rates);

// C(n, k) as a double (exact for the sizes gate sees); 0 when k > n.
double binomial(std::int64_t n, std::int64_t k);

// Chen et al. 2021, unbiased: 1 − C(n−c, k)/C(n, k). Requires 1 <= k <= n.
double pass_at_k(std::int64_t n, std::int64_t c, std::int64_t k);
// Yao et al. 2024 (tau-bench): C(c, k)/C(n, k). Requires 1 <= k <= n.
double pass_hat_k(std::int64_t n, std::int64_t c, std::int64_t k);

// Percentile by linear interpolation between closest ranks (p in [0, 100]);
// empty → 0.
double percentile(std::vector<double> values, double p);
double median(std::vector<double> values);

// Jaccard similarity of two sets (1.0 when both are empty).
double jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b);

} // namespace gate::metrics

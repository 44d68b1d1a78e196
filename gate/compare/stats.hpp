#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <gate/metrics/stats.hpp>

// The tests behind "changed above the noise" (METRICS.md, "Comparing with a
// baseline"). Pure functions, no I/O. Arguments that break a precondition
// (a count above its total, a p-value outside [0, 1], NaN) throw
// gate::Error(Exit::bad_input): they can only come from an inconsistent
// report, and the caller is expected to have rejected it with its location.
namespace gate::compare {

// Fisher's exact test, one-sided, on the 2×2 table
//   current:  c_a passes of n_a runs
//   baseline: c_b passes of n_b runs
// with both margins fixed, so the current passes X follow a hypergeometric
// law (Boost.Math's, summed from the observed point towards the nearer end,
// so a tail far below 1e-300 keeps its digits). Exact, because per-task run
// counts are small and a normal approximation would be far off.
// A side with no runs carries no evidence: the p-value is then 1.
//
// P(X <= c_a): evidence that the current pass rate is lower ("regressed").
double fisher_one_sided_less(std::int64_t c_a, std::int64_t n_a, std::int64_t c_b, std::int64_t n_b);
// P(X >= c_a): evidence that the current pass rate is higher ("fixed").
double fisher_one_sided_greater(std::int64_t c_a, std::int64_t n_a, std::int64_t c_b, std::int64_t n_b);

// Benjamini–Hochberg step-up adjustment: q_(i) = min over j >= i of
// m·p_(j)/j, capped at 1, returned in the input's order. Per-task tests use
// it because a suite runs hundreds of them and the false-discovery rate is
// what a reviewer of a flagged list cares about.
std::vector<double> benjamini_hochberg(const std::vector<double>& p_values);

// Holm step-down adjustment: p'_(i) = max over j <= i of (m − j + 1)·p_(j),
// capped at 1, returned in the input's order. The gated metrics use it so
// that on pure noise the whole gate fails in at most alpha of comparisons.
std::vector<double> holm(const std::vector<double>& p_values);

struct SignFlipResult {
  double mean = 0;            // mean of all d_i, zeros included (the Δ itself)
  std::size_t nonzero = 0;    // d_i that are not zero; only these are flipped
  double p_two_sided = 1;     // |mean*| >= |mean|
  double p_less = 1;          // mean* <= mean: evidence that the mean is below 0
  double p_greater = 1;       // mean* >= mean: evidence that the mean is above 0
  std::string method;         // "exact" or "monte-carlo"
  std::size_t replicates = 0; // sign patterns evaluated (2^nonzero when exact)
};

// Paired sign-flip permutation test of the mean of per-task differences.
// Under "no change" each d_i is as likely to have the opposite sign, which
// holds without assuming any distribution of the differences — the reason to
// prefer it to a t-test on success rates in [0, 1] with few tasks.
// Zeros cannot change sign and are left out of the flips. Up to
// sign_flip_exact_max non-zero d_i every pattern is enumerated; above that,
// sign_flip_replicates patterns from std::mt19937_64 with a fixed seed (its
// output is fixed by the C++ standard, and bits are taken from it directly, so
// every platform gives the same p), p = (1 + hits) / (1 + replicates). Ties
// within a relative 1e-9 of Σ|d_i| count as hits, so rounding in the sums
// never decides a p-value. The result does not depend on the order of d.
inline constexpr std::size_t sign_flip_exact_max = 16;
inline constexpr std::size_t sign_flip_replicates = 20000;
// Fixed so that every run of gate on every platform gives the same p.
inline constexpr std::uint64_t sign_flip_seed = 0x9E3779B97F4A7C15ULL;
SignFlipResult paired_sign_flip_test(const std::vector<double>& d);

struct MeanInterval {
  double mean = 0;
  metrics::Interval interval; // 95%; equal to [mean, mean] when !has_spread
  bool has_spread = false;    // false with fewer than 2 values: no sd exists
};

// 95% interval of the mean of d_i: mean ± t(0.975, m−1)·sd/√m (sd with the
// m−1 denominator). Tasks are the unit, as for the success-rate interval.
// Not clipped: the caller knows the range of its differences.
MeanInterval mean_diff_interval(const std::vector<double>& d);

// 95% percentile-bootstrap interval of 100 · (p95(a) / p95(b) − 1), in
// percent, p95 as metrics::percentile: each side's values resampled on
// their own (they are not paired), `resamples` times, seeded like the
// sign-flip test so that the same reports give the same interval. Both
// sides non-empty and positive.
metrics::Interval p95_change_interval(const std::vector<double>& b, const std::vector<double>& a,
                                      int resamples);

struct McNemarResult {
  std::int64_t discordant = 0; // b + c
  double p_two_sided = 1;      // 2·min(tail) capped at 1
  double p_more = 1;           // P(B >= b): more tasks moved the b way
  double p_fewer = 1;          // P(B <= b): more tasks moved the c way
};

// Exact McNemar test on paired binary outcomes: of the n = b + c discordant
// pairs, b moved one way (a task became mixed) and c the other (became
// unmixed); under "no change" B ~ Binomial(n, 1/2). Exact because the
// discordant counts are small; the chi-square form is poor below ~25.
McNemarResult mcnemar_exact(std::int64_t b, std::int64_t c);

struct PassCount {
  std::int64_t passes = 0;
  std::int64_t runs = 0;
};

struct NoiseFloor {
  double drop_pp = 0;     // max(normal_pp, discrete_pp); above 100 means no drop is detectable
  double normal_pp = 0;   // (z_{1−α} + z_{power})·sd_d/√T, in percentage points
  double discrete_pp = 0; // smallest drop the sign-flip test can call significant at all
  double sd_d = 0;        // estimated sd of one task's d_i under "no change", rate units
  std::size_t tasks = 0;  // T: baseline tasks with at least one run
  std::string method;     // "binomial per task" or "between-task variance"
};

// The noise floor: the smallest true drop in success rate, spread evenly
// over the tasks, that the paired test over T tasks detects with probability
// `power` at one-sided level `alpha`. Normal approximation: mean d ~
// N(−δ, sd_d²/T), so δ = (z_{1−α} + z_{power})·sd_d/√T, z = metrics::normal_quantile.
//
// sd_d is the noise of a paired difference of the same task, not the spread
// of difficulty between tasks (pairing removes that): with p_i the task's true
// rate, Var(d_i) = p_i(1−p_i)·(1/n_i + 1/runs_current). When every baseline
// task has n_i >= 2 runs, p_i(1−p_i) is estimated per task without bias by
// p̂(1−p̂)·n/(n−1) ("binomial per task"). With single runs it cannot be, and
// the sample variance of the baseline outcomes stands in for it ("between-task
// variance"): exact when all tasks share one rate, too large otherwise, so
// the floor errs high.
//
// The normal formula gives 0 for a fully deterministic baseline, yet the
// sign-flip test cannot reach p < alpha with fewer than
// m = floor(log2(1/alpha)) + 1 changed tasks (best case p = 2^−m), and a
// task's rate moves by at least 1/runs_current; so discrete_pp =
// 100·m/(runs_current·T) bounds the floor from below.
// T = 0 → drop_pp = +infinity (nothing is detectable).
NoiseFloor detectable_change(const std::vector<PassCount>& baseline, std::int64_t runs_current, double alpha,
                             double power = 0.8);

} // namespace gate::compare

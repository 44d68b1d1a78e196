#include <gate/compare/stats.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/hypergeometric.hpp>

#include <gate/metrics/math_policy.hpp>
#include <gate/util/error.hpp>

namespace gate::compare {

namespace {

// Largest run or pair count accepted: far above any real suite, and it keeps
// the exact sums below a second instead of hanging on a corrupt report.
constexpr std::int64_t max_count = 100'000'000;

[[noreturn]] void fail(const std::string& what) { throw Error(Exit::bad_input, "statistics: " + what); }

std::string counts(std::int64_t c, std::int64_t n) { return std::to_string(c) + " of " + std::to_string(n); }

void require_count(std::int64_t c, std::int64_t n, const std::string& side) {
  if (!(n >= 0 && c >= 0 && c <= n)) fail(side + " passes must be within 0..runs, got " + counts(c, n));
  if (!(n <= max_count))
    fail(side + " runs exceed " + std::to_string(max_count) + ", got " + std::to_string(n));
}

using Hypergeometric = boost::math::hypergeometric_distribution<double, metrics::MathPolicy>;
using Binomial = boost::math::binomial_distribution<double, metrics::MathPolicy>;

// X = current passes is hypergeometric: N = n_a + n_b runs, K = c_a + c_b
// passes, n_a drawn, X within lo..hi. Boost sums the pmf from the observed
// point towards the nearer end, so the small tail keeps its digits.
double fisher_tail(std::int64_t c_a, std::int64_t n_a, std::int64_t c_b, std::int64_t n_b, bool lower) {
  require_count(c_a, n_a, "current");
  require_count(c_b, n_b, "baseline");
  const std::int64_t big_n = n_a + n_b;
  const std::int64_t big_k = c_a + c_b;
  const std::int64_t lo = std::max<std::int64_t>(0, big_k - n_b);
  const std::int64_t hi = std::min(big_k, n_a);
  // P(X <= hi) and P(X >= lo) are certain; Boost has no x = lo − 1 to take
  // the complement at.
  if (lower ? c_a >= hi : c_a <= lo) return 1.0;
  const Hypergeometric x(static_cast<unsigned>(big_k), static_cast<unsigned>(n_a),
                         static_cast<unsigned>(big_n));
  const double p = lower ? boost::math::cdf(x, static_cast<unsigned>(c_a))
                         : boost::math::cdf(boost::math::complement(x, static_cast<unsigned>(c_a - 1)));
  return std::min(1.0, p);
}

void require_p_values(const std::vector<double>& p) {
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!(p[i] >= 0 && p[i] <= 1))
      fail( // false for NaN too
          "p-value #" + std::to_string(i + 1) + " must be within [0, 1], got " + std::to_string(p[i]));
}

// Indices of p in ascending order of value; ties keep input order so the
// adjustment is reproducible.
std::vector<std::size_t> ascending(const std::vector<double>& p) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  return order;
}

// Counts of sign patterns at or beyond the observed sum, with a tolerance so
// rounding in a different summation order never decides a tie.
struct Hits {
  std::size_t two_sided = 0, less = 0, greater = 0;
  void add(double s, double observed, double tol) {
    if (std::fabs(s) >= std::fabs(observed) - tol) ++two_sided;
    if (s <= observed + tol) ++less;
    if (s >= observed - tol) ++greater;
  }
};

} // namespace

double fisher_one_sided_less(std::int64_t c_a, std::int64_t n_a, std::int64_t c_b, std::int64_t n_b) {
  return fisher_tail(c_a, n_a, c_b, n_b, true);
}

double fisher_one_sided_greater(std::int64_t c_a, std::int64_t n_a, std::int64_t c_b, std::int64_t n_b) {
  return fisher_tail(c_a, n_a, c_b, n_b, false);
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p_values) {
  require_p_values(p_values);
  std::vector<double> q(p_values.size());
  auto order = ascending(p_values);
  double m = static_cast<double>(p_values.size());
  double running = 1;
  for (std::size_t r = order.size(); r-- > 0;) {
    running = std::min(running, p_values[order[r]] * m / static_cast<double>(r + 1));
    q[order[r]] = running;
  }
  return q;
}

std::vector<double> holm(const std::vector<double>& p_values) {
  require_p_values(p_values);
  std::vector<double> adjusted(p_values.size());
  auto order = ascending(p_values);
  double m = static_cast<double>(p_values.size());
  double running = 0;
  for (std::size_t r = 0; r < order.size(); ++r) {
    running = std::max(running, std::min(1.0, (m - static_cast<double>(r)) * p_values[order[r]]));
    adjusted[order[r]] = running;
  }
  return adjusted;
}

SignFlipResult paired_sign_flip_test(const std::vector<double>& d) {
  for (std::size_t i = 0; i < d.size(); ++i)
    if (!(std::isfinite(d[i]))) fail("difference #" + std::to_string(i + 1) + " is not a finite number");
  SignFlipResult r;
  std::vector<double> nonzero;
  for (double x : d)
    if (x != 0) nonzero.push_back(x);
  // Sorted, so that neither the sums nor the Monte-Carlo draws depend on task order.
  std::sort(nonzero.begin(), nonzero.end(), [](double a, double b) {
    return std::fabs(a) != std::fabs(b) ? std::fabs(a) < std::fabs(b) : a < b;
  });
  std::vector<double> mag(nonzero.size());
  double observed = 0, scale = 0;
  for (std::size_t i = 0; i < nonzero.size(); ++i) {
    observed += nonzero[i];
    mag[i] = std::fabs(nonzero[i]);
    scale += mag[i];
  }
  r.mean = d.empty() ? 0 : observed / static_cast<double>(d.size());
  r.nonzero = nonzero.size();
  r.method = "exact";
  r.replicates = 1;
  if (nonzero.empty()) return r;
  double tol = 1e-9 * scale;
  std::size_t m = mag.size();
  Hits hits;
  if (m <= sign_flip_exact_max) {
    // Every pattern, bit i set = d_i negated; pattern 0 is the observed sum itself.
    std::size_t patterns = std::size_t{1} << m;
    for (std::size_t mask = 0; mask < patterns; ++mask) {
      double s = 0;
      for (std::size_t i = 0; i < m; ++i)
        s += (mask >> i & 1U) ? -mag[i] : mag[i];
      hits.add(s, observed, tol);
    }
    r.replicates = patterns;
    auto n = static_cast<double>(patterns);
    r.p_two_sided = static_cast<double>(hits.two_sided) / n;
    r.p_less = static_cast<double>(hits.less) / n;
    r.p_greater = static_cast<double>(hits.greater) / n;
    return r;
  }
  std::mt19937_64 rng(sign_flip_seed);
  // Four replicates are summed at once, each in its own accumulator and in
  // the same order as one at a time, from the same draws: the same sums bit
  // for bit, but the additions of different replicates overlap instead of
  // each waiting for the one before.
  static_assert(sign_flip_replicates % 4 == 0);
  const std::size_t words = (m + 63) / 64;
  std::vector<std::uint64_t> bits(4 * words);
  for (std::size_t b = 0; b < sign_flip_replicates; b += 4) {
    for (std::uint64_t& w : bits)
      w = rng(); // replicate b + l draws words [l·words, (l+1)·words), as it would alone
    // Sums of the flipped magnitudes, multiplied in rather than branched on:
    // a random branch mispredicts half the time and triples the run time.
    // A bit as 0.0 or 1.0 from a table: an int-to-double conversion costs
    // twice as much here (mag[i] · 1.0 and · 0.0 are the same either way).
    static constexpr double zero_one[2] = {0.0, 1.0};
    double f0 = 0, f1 = 0, f2 = 0, f3 = 0;
    for (std::size_t w = 0; w < words; ++w) {
      std::uint64_t b0 = bits[w], b1 = bits[words + w], b2 = bits[2 * words + w], b3 = bits[3 * words + w];
      for (std::size_t i = w * 64, end = std::min(m, i + 64); i < end; ++i) {
        const double x = mag[i];
        f0 += x * zero_one[b0 & 1U];
        f1 += x * zero_one[b1 & 1U];
        f2 += x * zero_one[b2 & 1U];
        f3 += x * zero_one[b3 & 1U];
        b0 >>= 1;
        b1 >>= 1;
        b2 >>= 1;
        b3 >>= 1;
      }
    }
    for (double f : {f0, f1, f2, f3})
      hits.add(scale - 2 * f, observed, tol);
  }
  r.method = "monte-carlo";
  r.replicates = sign_flip_replicates;
  auto n = static_cast<double>(sign_flip_replicates) + 1;
  r.p_two_sided = (1 + static_cast<double>(hits.two_sided)) / n;
  r.p_less = (1 + static_cast<double>(hits.less)) / n;
  r.p_greater = (1 + static_cast<double>(hits.greater)) / n;
  return r;
}

MeanInterval mean_diff_interval(const std::vector<double>& d) {
  for (std::size_t i = 0; i < d.size(); ++i)
    if (!(std::isfinite(d[i]))) fail("difference #" + std::to_string(i + 1) + " is not a finite number");
  MeanInterval r;
  if (d.empty()) return r;
  auto m = static_cast<double>(d.size());
  r.mean = std::accumulate(d.begin(), d.end(), 0.0) / m;
  r.interval = {r.mean, r.mean};
  if (d.size() < 2) return r;
  double ss = 0;
  for (double x : d)
    ss += (x - r.mean) * (x - r.mean);
  double sd = std::sqrt(ss / (m - 1));
  double half = metrics::t_quantile(0.975, m - 1) * sd / std::sqrt(m);
  r.interval = {r.mean - half, r.mean + half};
  r.has_spread = true;
  return r;
}

McNemarResult mcnemar_exact(std::int64_t b, std::int64_t c) {
  if (!(b >= 0 && c >= 0 && b <= max_count && c <= max_count))
    fail("discordant counts must be within 0.." + std::to_string(max_count) + ", got " + std::to_string(b) +
         " and " + std::to_string(c));
  McNemarResult r;
  r.discordant = b + c;
  if (r.discordant == 0) return r;
  const Binomial x(static_cast<double>(r.discordant), 0.5);
  r.p_more =
      b == 0 ? 1.0 : std::min(1.0, boost::math::cdf(boost::math::complement(x, static_cast<double>(b - 1))));
  r.p_fewer = std::min(1.0, boost::math::cdf(x, static_cast<double>(b)));
  r.p_two_sided = std::min(1.0, 2 * std::min(r.p_more, r.p_fewer));
  return r;
}

metrics::Interval p95_change_interval(const std::vector<double>& b, const std::vector<double>& a,
                                      int resamples) {
  if (b.empty() || a.empty() || resamples < 1) fail("p95_change_interval: empty side or no resamples");
  std::mt19937_64 rng(sign_flip_seed);
  // The p95 of a resample, by the report's own percentile.
  auto resampled_p95 = [&rng](const std::vector<double>& values, std::vector<double>& drawn) {
    std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
    for (auto& x : drawn)
      x = values[pick(rng)];
    return metrics::percentile_in_place(drawn, 95);
  };
  std::vector<double> db(b.size()), da(a.size());
  std::vector<double> change(static_cast<std::size_t>(resamples));
  for (auto& c : change) {
    const double pb = resampled_p95(b, db);
    c = 100 * (resampled_p95(a, da) / pb - 1);
  }
  return {metrics::percentile_in_place(change, 2.5), metrics::percentile_in_place(change, 97.5)};
}

NoiseFloor detectable_change(const std::vector<PassCount>& baseline, std::int64_t runs_current, double alpha,
                             double power) {
  if (!(runs_current >= 1))
    fail("current runs per task must be at least 1, got " + std::to_string(runs_current));
  if (!(alpha > 0 && alpha < 1)) fail("alpha must be in (0, 1), got " + std::to_string(alpha));
  if (!(power > 0 && power < 1)) fail("power must be in (0, 1), got " + std::to_string(power));
  NoiseFloor r;
  std::vector<PassCount> tasks;
  bool all_repeated = true;
  for (std::size_t i = 0; i < baseline.size(); ++i) {
    const auto& t = baseline[i];
    require_count(t.passes, t.runs, "baseline task #" + std::to_string(i + 1));
    if (t.runs == 0) continue; // every run errored: no rate to estimate from
    tasks.push_back(t);
    all_repeated = all_repeated && t.runs >= 2;
  }
  r.tasks = tasks.size();
  if (tasks.empty()) {
    r.method = "no tasks";
    r.drop_pp = r.normal_pp = r.discrete_pp = std::numeric_limits<double>::infinity();
    return r;
  }
  auto big_t = static_cast<double>(tasks.size());
  auto k_a = static_cast<double>(runs_current);
  double var_d = 0; // mean over tasks of Var(d_i)
  if (all_repeated) {
    r.method = "binomial per task";
    for (const auto& t : tasks) {
      auto n = static_cast<double>(t.runs);
      double p = static_cast<double>(t.passes) / n;
      double v = p * (1 - p) * n / (n - 1);
      var_d += v * (1 / n + 1 / k_a);
    }
    var_d /= big_t;
  } else {
    r.method = "between-task variance";
    double mean = 0;
    for (const auto& t : tasks)
      mean += static_cast<double>(t.passes) / static_cast<double>(t.runs);
    mean /= big_t;
    double ss = 0;
    for (const auto& t : tasks) {
      double dev = static_cast<double>(t.passes) / static_cast<double>(t.runs) - mean;
      ss += dev * dev;
    }
    // One task has no spread to measure; p̄(1−p̄) is the largest a single
    // Bernoulli outcome can have at that rate.
    double v = tasks.size() >= 2 ? ss / (big_t - 1) : mean * (1 - mean);
    for (const auto& t : tasks)
      var_d += v * (1 / static_cast<double>(t.runs) + 1 / k_a);
    var_d /= big_t;
  }
  r.sd_d = std::sqrt(var_d);
  double z = metrics::normal_quantile(1 - alpha) + metrics::normal_quantile(power);
  r.normal_pp = 100 * z * r.sd_d / std::sqrt(big_t);
  double min_changed = std::floor(std::log2(1 / alpha)) + 1;
  r.discrete_pp = 100 * min_changed / (k_a * big_t);
  r.drop_pp = std::max(r.normal_pp, r.discrete_pp);
  return r;
}

} // namespace gate::compare

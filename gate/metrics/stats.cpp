#include <gate/metrics/stats.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace gate::metrics {

namespace {

// Two-sided 95%: Φ⁻¹(0.975).
constexpr double k_z975 = 1.959963984540054;

void require_counts(std::int64_t n, std::int64_t c, std::int64_t k, const char* what) {
  if (n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw std::invalid_argument(std::string(what) +
                                ": needs 0 <= c <= n and 1 <= k <= n (n=" + std::to_string(n) +
                                ", c=" + std::to_string(c) + ", k=" + std::to_string(k) + ")");
}

// C(a, k)/C(n, k) = Π_{j<k} (a−j)/(n−j), one factor per step so that no
// intermediate overflows even at n = 1,000; 0 once a factor reaches 0.
std::vector<double> binomial_ratio_curve(std::int64_t a, std::int64_t n) {
  std::vector<double> out(static_cast<std::size_t>(n));
  double ratio = 1;
  for (std::int64_t j = 0; j < n; ++j) {
    ratio = a - j <= 0 ? 0.0 : ratio * static_cast<double>(a - j) / static_cast<double>(n - j);
    out[static_cast<std::size_t>(j)] = ratio;
  }
  return out;
}

double binomial_ratio(std::int64_t a, std::int64_t n, std::int64_t k) {
  double ratio = 1;
  for (std::int64_t j = 0; j < k; ++j) {
    if (a - j <= 0) return 0;
    ratio = ratio * static_cast<double>(a - j) / static_cast<double>(n - j);
  }
  return ratio;
}

Interval clip01(double low, double high) { return {std::clamp(low, 0.0, 1.0), std::clamp(high, 0.0, 1.0)}; }

} // namespace

Interval wilson(double successes, double trials) {
  if (!(trials > 0)) return {0, 1};
  double p = successes / trials;
  double z2 = k_z975 * k_z975;
  double denom = 1 + z2 / trials;
  double center = (p + z2 / (2 * trials)) / denom;
  double half = k_z975 / denom * std::sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials));
  return clip01(center - half, center + half);
}

Interval task_mean_interval(const std::vector<double>& rates) {
  if (rates.size() < 2) return {0, 1};
  double t = static_cast<double>(rates.size());
  double sum = 0;
  for (double r : rates)
    sum += r;
  double mean = sum / t;
  double squares = 0;
  for (double r : rates)
    squares += (r - mean) * (r - mean);
  double sd = std::sqrt(squares / (t - 1));
  double half = t_quantile(0.975, t - 1) * sd / std::sqrt(t);
  return clip01(mean - half, mean + half);
}

double binomial(std::int64_t n, std::int64_t k) {
  if (n < 0 || k < 0 || k > n) return 0;
  k = std::min(k, n - k);
  // After step i the value is C(n−k+i, i), an integer, so it stays exact
  // while below 2^53.
  double result = 1;
  for (std::int64_t i = 1; i <= k; ++i)
    result = result * static_cast<double>(n - k + i) / static_cast<double>(i);
  return result;
}

double pass_at_k(std::int64_t n, std::int64_t c, std::int64_t k) {
  require_counts(n, c, k, "pass_at_k");
  return 1 - binomial_ratio(n - c, n, k);
}

double pass_hat_k(std::int64_t n, std::int64_t c, std::int64_t k) {
  require_counts(n, c, k, "pass_hat_k");
  return binomial_ratio(c, n, k);
}

std::vector<double> pass_at_k_curve(std::int64_t n, std::int64_t c) {
  if (n == 0) return {};
  require_counts(n, c, 1, "pass_at_k_curve");
  std::vector<double> out = binomial_ratio_curve(n - c, n);
  for (double& v : out)
    v = 1 - v;
  return out;
}

std::vector<double> pass_hat_k_curve(std::int64_t n, std::int64_t c) {
  if (n == 0) return {};
  require_counts(n, c, 1, "pass_hat_k_curve");
  return binomial_ratio_curve(c, n);
}

double percentile(std::vector<double> values, double p) { return percentile_in_place(values, p); }

double percentile_in_place(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(values.begin(), at, values.end());
  const double a = *at;
  const double b = lo + 1 < values.size() ? *std::min_element(at + 1, values.end()) : a;
  return a + (rank - static_cast<double>(lo)) * (b - a);
}

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(rank));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double median(std::vector<double> values) { return percentile(std::move(values), 50); }

double jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> sa = a, sb = b;
  std::sort(sa.begin(), sa.end());
  sa.erase(std::unique(sa.begin(), sa.end()), sa.end());
  std::sort(sb.begin(), sb.end());
  sb.erase(std::unique(sb.begin(), sb.end()), sb.end());
  return jaccard_sorted(sa, sb);
}

double jaccard_sorted(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() && b.empty()) return 1;
  std::size_t common = 0;
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i < *j) {
      ++i;
    } else if (*j < *i) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

std::int64_t common_runs(const std::vector<std::int64_t>& counts) {
  std::map<std::int64_t, std::int64_t> seen;
  for (std::int64_t n : counts)
    ++seen[n];
  std::int64_t best = 0, best_count = 0;
  for (const auto& [n, count] : seen) // ascending: a tie keeps the smaller
    if (count > best_count) {
      best = n;
      best_count = count;
    }
  return best;
}

} // namespace gate::metrics

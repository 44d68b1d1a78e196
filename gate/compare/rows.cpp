#include <gate/compare/detail.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include <gate/compare/stats.hpp>
#include <gate/metrics/stats.hpp>

namespace gate::compare::detail {

namespace {

using metrics::TaskStats;
using results::Run;
using results::Task;

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

MetricRow make_row(std::string key, std::string name, std::string unit, std::string value_unit) {
  MetricRow row;
  row.key = std::move(key);
  row.name = std::move(name);
  row.unit = std::move(unit);
  row.value_unit = std::move(value_unit);
  return row;
}

bool has_runs(const Pair& p) { return p.sb->n > 0 && p.sa->n > 0; }

// delta and its 95% interval from per-task differences, scaled into the row's unit.
void set_delta(MetricRow& row, const std::vector<double>& d, double scale) {
  MeanInterval mi = mean_diff_interval(d);
  row.delta = mi.mean * scale;
  row.delta_interval = {mi.interval.low * scale, mi.interval.high * scale};
}

// The one-sided "worse" p-value of the sign-flip test on `d`.
void set_test(MetricRow& row, const std::vector<double>& d, bool greater_is_worse, const std::string& over) {
  OneSided s = sign_flip(d);
  row.p_value = greater_is_worse ? s.p_greater : s.p_less;
  row.test = s.method + " over " + std::to_string(d.size()) + " " + over;
}

MetricRow success_row(const report::Report& b, const report::Report& a, const std::vector<Pair>& pairs,
                      double alpha) {
  MetricRow row = make_row("success_rate", "success rate", "pp", "%");
  row.baseline = 100 * b.stats.overall.success_rate;
  row.current = 100 * a.stats.overall.success_rate;
  std::vector<double> all, affected;
  std::vector<PassCount> floor_base;
  std::int64_t runs_current = 0;
  for (const Pair& p : pairs) {
    if (!has_runs(p)) continue;
    double d = p.sa->rate - p.sb->rate;
    all.push_back(d);
    // Replayed tasks cannot move by chance; a change there is a grader
    // change, flagged per task, and would only dilute the test.
    if (p.inputs_unchanged) continue;
    affected.push_back(d);
    floor_base.push_back({p.sb->c, p.sb->n});
    runs_current = std::max(runs_current, p.sa->n);
  }
  // Δ is the mean per-task difference over every paired task with runs: the
  // quantity the paired test is about, equal to current − baseline when both
  // reports hold the same tasks with the same run counts.
  set_delta(row, all, 100);
  if (affected.empty()) {
    row.test = "no affected task with runs in both reports";
    return row;
  }
  set_test(row, affected, false, "affected tasks");
  // The floor of the test actually run: over the affected tasks, whose
  // baseline counts estimate the per-task noise.
  NoiseFloor nf = detectable_change(floor_base, runs_current, alpha);
  if (std::isfinite(nf.drop_pp)) row.noise_floor = nf.drop_pp;
  return row;
}

MetricRow gap_row(const report::Report& b, const report::Report& a, const std::vector<Pair>& pairs,
                  const Options& o) {
  MetricRow row = make_row("consistency_gap", "consistency gap", "pp", "pp");
  row.higher_is_better = false;
  row.baseline = b.stats.consistency_gap_pp;
  row.current = a.stats.consistency_gap_pp;
  std::vector<double> d;
  std::int64_t became_mixed = 0, became_consistent = 0, base_mixed = 0;
  for (const Pair& p : pairs) {
    if (!has_runs(p)) continue;
    // As in the report's own gap: a task whose runs took different routes
    // is mixed for a reason that is not the model's.
    if (!o.include_polluted && (p.sb->route_polluted || p.sa->route_polluted)) continue;
    int mb = p.sb->mixed ? 1 : 0, ma = p.sa->mixed ? 1 : 0;
    d.push_back(ma - mb);
    became_mixed += ma > mb;
    became_consistent += mb > ma;
    base_mixed += mb;
  }
  set_delta(row, d, 100);
  if (d.empty()) {
    row.test = "no paired task with runs in both reports";
    return row;
  }
  row.p_value = mcnemar_exact(became_mixed, became_consistent).p_more;
  row.test = "McNemar exact over " + std::to_string(d.size()) + " tasks (" + std::to_string(became_mixed) +
             " became mixed, " + std::to_string(became_consistent) + " became consistent)";
  // Noise floor. Given its true rate a task is mixed with some probability
  // q_i, independently in the two reports, so Var(d_i) = 2q_i(1−q_i) and the
  // mean over tasks is at most 2ḡ(1−ḡ) (concavity), ḡ = the baseline's mixed
  // share: the normal floor errs high. McNemar cannot reach p < alpha with
  // fewer than floor(log2(1/alpha)) + 1 tasks all moving one way (p = 2^−b),
  // which bounds the floor from below.
  double tasks = static_cast<double>(d.size());
  double g = static_cast<double>(base_mixed) / tasks;
  double z = metrics::normal_quantile(1 - o.thresholds.alpha) + metrics::normal_quantile(0.8);
  double normal_pp = 100 * z * std::sqrt(2 * g * (1 - g) / tasks);
  double discrete_pp = 100 * (std::floor(std::log2(1 / o.thresholds.alpha)) + 1) / tasks;
  row.noise_floor = std::max(normal_pp, discrete_pp);
  return row;
}

MetricRow pass_hat_row(const report::Report& b, const report::Report& a, const std::vector<Pair>& pairs) {
  MetricRow row = make_row("pass_hat_k", "pass^k", "pp", "%");
  // The largest k every paired task with runs has on both sides.
  std::int64_t k = 0;
  for (const Pair& p : pairs)
    if (has_runs(p)) k = k == 0 ? std::min(p.sb->n, p.sa->n) : std::min({k, p.sb->n, p.sa->n});
  if (k == 0) {
    row.test = "no paired task with runs in both reports";
    return row;
  }
  row.name = "pass^" + std::to_string(k);
  auto at = [k](const std::vector<double>& curve) {
    return curve.size() >= static_cast<std::size_t>(k) ? 100 * curve[static_cast<std::size_t>(k - 1)] : 0.0;
  };
  row.baseline = at(b.stats.pass_hat_k);
  row.current = at(a.stats.pass_hat_k);
  std::vector<double> all, affected;
  auto idx = static_cast<std::size_t>(k - 1);
  for (const Pair& p : pairs) {
    if (!has_runs(p)) continue;
    double d = p.sa->pass_hat_k[idx] - p.sb->pass_hat_k[idx];
    all.push_back(d);
    if (!p.inputs_unchanged) affected.push_back(d); // as for the success rate
  }
  set_delta(row, all, 100);
  if (affected.empty())
    row.test = "no affected task with runs in both reports";
  else
    set_test(row, affected, false, "affected tasks");
  return row;
}

std::int64_t tokens(const TaskStats& s) { return s.prompt_tokens + s.completion_tokens; }

MetricRow tokens_row(const report::Report& b, const report::Report& a, const std::vector<Pair>& pairs) {
  MetricRow row = make_row("tokens_per_task", "tokens per task", "%", "tokens");
  row.higher_is_better = false;
  row.baseline = b.stats.tokens_per_task;
  row.current = a.stats.tokens_per_task;
  // Per-task totals over all runs: a change of k is a change of cost too.
  std::vector<double> d;
  double sum_b = 0, sum_a = 0;
  for (const Pair& p : pairs) {
    auto tb = static_cast<double>(tokens(*p.sb)), ta = static_cast<double>(tokens(*p.sa));
    sum_b += tb;
    sum_a += ta;
    d.push_back(ta - tb);
  }
  if (sum_b <= 0) {
    row.test = sum_a <= 0 ? "no tokens recorded" : "the baseline recorded no tokens";
    return row;
  }
  // Σ(a − b)/Σb = mean(d)/mean(b): the interval of mean(d), over the
  // baseline mean taken as fixed, is the interval of the relative change.
  set_delta(row, d, 100 * static_cast<double>(d.size()) / sum_b);
  set_test(row, d, true, "paired tasks");
  std::int64_t no_usage = b.stats.runs_without_usage + a.stats.runs_without_usage;
  if (no_usage > 0) row.test += "; " + std::to_string(no_usage) + " runs reported no usage (counted as 0)";
  return row;
}

// Mean model latency of a task's fresh, non-errored runs (what call_latency counts).
std::optional<double> fresh_latency(const Task& t) {
  double sum = 0;
  int count = 0;
  for (const Run& r : t.runs)
    if (!r.cache_hit && !r.errored()) {
      sum += r.latency_ms;
      ++count;
    }
  if (count == 0) return std::nullopt;
  return sum / count;
}

MetricRow latency_row(const report::Report& b, const report::Report& a, const std::vector<Pair>& pairs) {
  MetricRow row = make_row("p95_latency", "p95 latency", "%", "ms");
  row.higher_is_better = false;
  row.baseline = b.stats.call_latency.p95;
  row.current = a.stats.call_latency.p95;
  // Replayed calls have no latency: with nothing fresh on one side there is
  // nothing to compare, and the row is shown for information only.
  if (b.stats.call_latency.count == 0 || a.stats.call_latency.count == 0) {
    row.test = "no fresh calls";
    return row;
  }
  if (row.baseline <= 0) {
    row.test = "baseline p95 is 0 ms";
    return row;
  }
  row.delta = 100 * (row.current / row.baseline - 1);
  row.delta_interval = {row.delta, row.delta};
  // A p95 has no paired form; the interval and the test are on the per-task
  // mean latency, relative to the baseline's mean over the same tasks.
  std::vector<double> d;
  double sum_b = 0;
  for (const Pair& p : pairs) {
    auto lb = fresh_latency(*p.base), la = fresh_latency(*p.cur);
    if (!lb || !la) continue;
    d.push_back(*la - *lb);
    sum_b += *lb;
  }
  if (d.empty() || sum_b <= 0) {
    row.test = "no task has fresh calls with latency in both reports";
    return row;
  }
  MeanInterval mi = mean_diff_interval(d);
  double scale = 100 * static_cast<double>(d.size()) / sum_b;
  row.delta_interval = {mi.interval.low * scale, mi.interval.high * scale};
  set_test(row, d, true, "tasks (per-task mean latency of fresh calls)");
  return row;
}

MetricRow error_row(const report::Report& b, const report::Report& a, const std::vector<Pair>& pairs) {
  MetricRow row = make_row("error_rate", "error rate", "pp", "%");
  row.higher_is_better = false;
  row.baseline = 100 * b.stats.error_rate;
  row.current = 100 * a.stats.error_rate;
  std::vector<double> d;
  for (const Pair& p : pairs) {
    auto rb = static_cast<double>(p.base->runs.size()), ra = static_cast<double>(p.cur->runs.size());
    if (rb == 0 || ra == 0) continue;
    d.push_back(static_cast<double>(p.sa->errored) / ra - static_cast<double>(p.sb->errored) / rb);
  }
  set_delta(row, d, 100);
  if (d.empty())
    row.test = "no paired task with runs in both reports";
  else
    set_test(row, d, true, "paired tasks");
  return row;
}

std::optional<double> threshold_for(const std::string& key, const config::Thresholds& t) {
  if (key == "success_rate") return t.max_success_drop_pp;
  if (key == "consistency_gap") return t.max_consistency_gap_rise_pp;
  if (key == "pass_hat_k") return t.max_pass_k_drop_pp;
  if (key == "tokens_per_task") return t.max_token_rise_pct;
  if (key == "p95_latency") return t.max_p95_latency_rise_pct;
  if (key == "error_rate") return t.max_error_rate_rise_pp;
  return std::nullopt;
}

} // namespace

OneSided sign_flip(const std::vector<double>& d) {
  std::size_t nonzero = 0;
  double sum = 0, sum_sq = 0;
  for (double x : d) {
    if (x == 0) continue;
    ++nonzero;
    sum += x;
    sum_sq += x * x;
  }
  OneSided r;
  if (nonzero <= sign_flip_normal_above) {
    SignFlipResult s = paired_sign_flip_test(d);
    r.p_less = s.p_less;
    r.p_greater = s.p_greater;
    r.method = s.method == "exact" ? "sign-flip exact"
                                   : "sign-flip Monte Carlo (" + std::to_string(s.replicates) + ", seeded)";
    return r;
  }
  double z = sum / std::sqrt(sum_sq);
  r.p_less = normal_cdf(z);
  r.p_greater = normal_cdf(-z);
  r.method = "sign-flip normal limit";
  return r;
}

std::vector<MetricRow> metric_rows(const report::Report& baseline, const report::Report& current,
                                   const std::vector<Pair>& pairs, const Options& o) {
  std::vector<MetricRow> rows;
  rows.push_back(success_row(baseline, current, pairs, o.thresholds.alpha));
  rows.push_back(gap_row(baseline, current, pairs, o));
  rows.push_back(pass_hat_row(baseline, current, pairs));
  rows.push_back(tokens_row(baseline, current, pairs));
  rows.push_back(latency_row(baseline, current, pairs));
  rows.push_back(error_row(baseline, current, pairs));
  return rows;
}

void gate_rows(std::vector<MetricRow>& rows, const config::Thresholds& t) {
  std::vector<double> family;
  std::vector<std::size_t> members;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    MetricRow& row = rows[i];
    row.threshold = threshold_for(row.key, t);
    row.gated = row.threshold.has_value() && row.p_value.has_value();
    if (!row.gated) continue;
    family.push_back(*row.p_value);
    members.push_back(i);
  }
  std::vector<double> adjusted = holm(family);
  for (std::size_t j = 0; j < members.size(); ++j)
    rows[members[j]].p_adjusted = adjusted[j];
  for (MetricRow& row : rows) {
    if (!row.threshold) continue;
    double worsening = row.higher_is_better ? -row.delta : row.delta;
    // A drop of exactly the threshold is "at least" it, whatever the last
    // bit of 100·(1/50) happens to be.
    row.crossed = worsening >= *row.threshold - 1e-9;
    row.significant = row.p_adjusted && below_alpha(*row.p_adjusted, t.alpha);
    row.failed = row.gated && row.crossed && row.significant;
  }
}

} // namespace gate::compare::detail

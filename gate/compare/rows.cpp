#include <gate/compare/detail.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
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

void unavailable(MetricRow& row, std::string why) {
  row.available = false;
  row.unavailable = std::move(why);
}

double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x)
    s += v;
  return x.empty() ? 0.0 : s / static_cast<double>(x.size());
}

// A noise floor, or none when it is not finite or exceeds `most`, the
// largest worsening the row's statistic can make from its baseline: a
// change that big could not be told from noise either.
std::optional<double> within(double floor, double most) {
  if (!std::isfinite(floor) || floor > most + 1e-9) return std::nullopt;
  return floor;
}

// One task's value on each side, for a row whose per-task values lie in
// [0, 1] (a rate, a gap, an error share).
struct PairValue {
  double b = 0, a = 0;
  bool in_scope = false; // affected: the test, Δ, interval and floor are over these
};

// The one-sided "worse" p-value of the sign-flip test on `d`.
void set_sign_flip(MetricRow& row, const std::vector<double>& d, bool greater_is_worse,
                   const std::string& over) {
  OneSided s = sign_flip(d);
  row.p_value = greater_is_worse ? s.p_greater : s.p_less;
  row.min_p = s.min_p;
  row.test = s.method + " over " + std::to_string(d.size()) + " " + over;
}

// Baseline and current over every pair given, Δ over the scope with its 95%
// interval clipped to what the scope's values allow (each in [0, 1]), the
// paired test over the scope. Values in percentage points.
void fill_unit_row(MetricRow& row, const std::vector<PairValue>& values, bool greater_is_worse,
                   bool sign_flip_test = true) {
  std::vector<double> b, a, d, scope_b;
  for (const PairValue& v : values) {
    b.push_back(v.b);
    a.push_back(v.a);
    if (!v.in_scope) continue;
    d.push_back(v.a - v.b);
    scope_b.push_back(v.b);
  }
  row.tasks = static_cast<std::int64_t>(values.size());
  row.baseline = 100 * mean(b);
  row.current = 100 * mean(a);
  row.suite_delta = row.current - row.baseline;
  row.scope_tasks = static_cast<std::int64_t>(d.size());
  if (d.empty()) {
    row.test = "no affected task: every paired task gave its baseline's answers";
    return;
  }
  MeanInterval mi = mean_diff_interval(d);
  // The current scope mean lies in [0, 1], so Δ lies in [−mean_b, 1 − mean_b].
  const double mb = mean(scope_b);
  row.delta = 100 * mi.mean;
  row.delta_interval = {100 * std::max(mi.interval.low, -mb), 100 * std::min(mi.interval.high, 1 - mb)};
  if (sign_flip_test) set_sign_flip(row, d, greater_is_worse, "affected tasks");
}

// METRICS.md "Common k": the run count that most measured tasks of a side
// have, the smaller of the two sides'. Rows that depend on k compare both
// sides there, through the unbiased per-task estimators.
std::int64_t common_k(const std::vector<Pair>& pairs) {
  std::vector<std::int64_t> nb, na;
  for (const Pair& p : pairs)
    if (p.measured) {
      nb.push_back(p.sb->n);
      na.push_back(p.sa->n);
    }
  if (nb.empty()) return 0;
  return std::min(metrics::common_runs(nb), metrics::common_runs(na));
}

// Pairs measured with at least k runs on each side.
bool has_k(const Pair& p, std::int64_t k) { return p.measured && p.sb->n >= k && p.sa->n >= k; }

std::string left_out_text(std::int64_t below_k, std::int64_t k) {
  if (below_k == 0) return "";
  return "; " + std::to_string(below_k) + " tasks with fewer than " + std::to_string(k) +
         " measured runs left out";
}

RowCalc success_row(const std::vector<Pair>& pairs) {
  RowCalc calc{make_row("success_rate", "success rate", "pp", "%")};
  MetricRow& row = calc.row;
  std::vector<PairValue> values;
  std::vector<PassCount> floor_base;
  std::int64_t runs_current = 0;
  for (const Pair& p : pairs) {
    if (!p.measured) continue;
    values.push_back({p.sb->rate, p.sa->rate, p.affected()});
    if (!p.affected()) continue;
    floor_base.push_back({p.sb->c, p.sb->n});
    runs_current = std::max(runs_current, p.sa->n);
  }
  if (values.empty()) {
    unavailable(row, "no paired task has a measured run in both reports");
    return calc;
  }
  fill_unit_row(row, values, false);
  if (floor_base.empty()) return calc;
  // The floor of the test actually run: over the affected tasks, whose
  // baseline counts estimate the per-task noise. The rate cannot fall below
  // 0: a floor beyond the scope's baseline is a fall no data could show.
  double scope_rate = 0;
  for (const PassCount& t : floor_base)
    scope_rate += t.runs > 0 ? static_cast<double>(t.passes) / static_cast<double>(t.runs) : 0.0;
  const double most_pp = 100 * scope_rate / static_cast<double>(floor_base.size());
  calc.floor = [floor_base, runs_current, most_pp](double level) -> std::optional<double> {
    NoiseFloor nf = detectable_change(floor_base, runs_current, level);
    return within(nf.drop_pp, most_pp);
  };
  return calc;
}

RowCalc gap_row(const std::vector<Pair>& pairs, std::int64_t k, const Options& o) {
  RowCalc calc{make_row("consistency_gap", "consistency gap", "pp", "pp")};
  MetricRow& row = calc.row;
  row.higher_is_better = false;
  if (k < 2) {
    unavailable(row, "a single measured run per task has no consistency gap");
    return calc;
  }
  row.k = k;
  std::vector<PairValue> values;
  std::int64_t below_k = 0, polluted = 0, became_mixed = 0, became_consistent = 0;
  std::set<std::string> polluted_fields;
  bool binary = true;
  for (const Pair& p : pairs) {
    if (!p.measured) continue;
    if (!has_k(p, k)) {
      ++below_k;
      continue;
    }
    // As in the report's own gap: a task whose runs took different routes
    // is mixed for a reason that is not the model's.
    if (!o.include_polluted && (p.sb->route_polluted || p.sa->route_polluted)) {
      ++polluted;
      polluted_fields.insert(p.sb->route_diff.begin(), p.sb->route_diff.end());
      polluted_fields.insert(p.sa->route_diff.begin(), p.sa->route_diff.end());
      continue;
    }
    auto gap = [k](const TaskStats& s) {
      return metrics::pass_at_k(s.n, s.c, k) - metrics::pass_hat_k(s.n, s.c, k);
    };
    PairValue v{gap(*p.sb), gap(*p.sa), p.affected()};
    values.push_back(v);
    if (!v.in_scope) continue;
    const double d = v.a - v.b;
    binary = binary && (d == 0 || d == 1 || d == -1);
    became_mixed += d > 0;
    became_consistent += d < 0;
  }
  if (values.empty() && polluted > 0) {
    std::string fields;
    for (const auto& f : polluted_fields)
      fields += (fields.empty() ? "" : ", ") + f;
    const bool one = polluted == 1;
    unavailable(row, (one ? "the 1 paired task" : "the " + std::to_string(polluted) + " paired tasks") +
                         " with " + std::to_string(k) + " measured runs in both reports " +
                         (one ? "is" : "are") + " route-polluted (" +
                         (fields.empty() ? "the route" : fields) +
                         (polluted_fields.size() > 1 ? " differ" : " differs") + " between " +
                         (one ? "its" : "their") +
                         " runs), and polluted tasks are left out of the gap (include_polluted: true counts "
                         "them)");
    return calc;
  }
  if (values.empty()) {
    unavailable(row, "no paired task has " + std::to_string(k) + " measured runs in both reports");
    return calc;
  }
  // Every gap 0 or 1 (both sides ran each task k times): the paired test on
  // binary outcomes is McNemar's, exact, and equals the exact sign-flip of
  // the ±1 differences.
  fill_unit_row(row, values, true, !binary);
  if (row.scope_tasks == 0) return calc;
  if (binary) {
    McNemarResult m = mcnemar_exact(became_mixed, became_consistent);
    row.p_value = m.p_more;
    row.min_p = std::pow(0.5, static_cast<double>(m.discordant));
    row.test = "McNemar exact over " + std::to_string(row.scope_tasks) + " affected tasks (" +
               std::to_string(became_mixed) + " became mixed, " + std::to_string(became_consistent) +
               " became consistent)";
  }
  row.test += ", at k = " + std::to_string(k) + left_out_text(below_k, k);
  // Noise floor. Given its true rate a task's gap has some mean q_i,
  // independently in the two reports, so Var(d_i) <= 2q_i(1−q_i) and the
  // mean over tasks is at most 2ḡ(1−ḡ) (concavity), ḡ = the baseline's mean
  // gap over the scope: the normal floor errs high. The test cannot reach
  // p < level with fewer than floor(log2(1/level)) + 1 tasks all moving one
  // way (p = 2^−b), which bounds the floor from below.
  double scope_b = 0;
  for (const PairValue& v : values)
    if (v.in_scope) scope_b += v.b;
  const double tasks = static_cast<double>(row.scope_tasks);
  const double g = scope_b / tasks;
  // The mean gap cannot rise above 1: at most 100(1 − ḡ) pp.
  calc.floor = [g, tasks](double level) -> std::optional<double> {
    double z = metrics::normal_quantile(1 - level) + metrics::normal_quantile(0.8);
    double normal_pp = 100 * z * std::sqrt(2 * g * (1 - g) / tasks);
    double discrete_pp = 100 * (std::floor(std::log2(1 / level)) + 1) / tasks;
    return within(std::max(normal_pp, discrete_pp), 100 * (1 - g));
  };
  return calc;
}

RowCalc pass_hat_row(const std::vector<Pair>& pairs, std::int64_t k) {
  RowCalc calc{make_row("pass_hat_k", "pass^k", "pp", "%")};
  MetricRow& row = calc.row;
  if (k < 1) {
    unavailable(row, "no paired task has a measured run in both reports");
    return calc;
  }
  row.k = k;
  row.name = "pass^" + std::to_string(k);
  std::vector<PairValue> values;
  std::int64_t below_k = 0;
  for (const Pair& p : pairs) {
    if (!p.measured) continue;
    if (!has_k(p, k)) {
      ++below_k;
      continue;
    }
    values.push_back(
        {metrics::pass_hat_k(p.sb->n, p.sb->c, k), metrics::pass_hat_k(p.sa->n, p.sa->c, k), p.affected()});
  }
  fill_unit_row(row, values, false);
  row.test += ", at k = " + std::to_string(k) + left_out_text(below_k, k);
  return calc;
}

std::int64_t tokens(const TaskStats& s) { return s.prompt_tokens + s.completion_tokens; }

bool usage_in(const report::Report& r) { return r.stats.runs_without_usage < r.stats.total_runs; }

RowCalc tokens_row(const report::Report& b, const report::Report& a, const std::vector<Pair>& pairs) {
  RowCalc calc{make_row("tokens_per_task", "tokens per task", "%", "tokens")};
  MetricRow& row = calc.row;
  row.higher_is_better = false;
  if (!usage_in(b) || !usage_in(a)) {
    unavailable(row, std::string("no token usage in the ") + (usage_in(b) ? "current report" : "baseline"));
    return calc;
  }
  // Per-task totals over all runs, errored ones included: a change of k,
  // and every retry, is a change of cost too.
  std::vector<double> d;
  double sum_b = 0, sum_a = 0, scope_b = 0;
  for (const Pair& p : pairs) {
    if (p.base->runs.empty() || p.cur->runs.empty()) continue;
    auto tb = static_cast<double>(tokens(*p.sb)), ta = static_cast<double>(tokens(*p.sa));
    sum_b += tb;
    sum_a += ta;
    ++row.tasks;
    if (p.inputs_unchanged) continue;
    d.push_back(ta - tb);
    scope_b += tb;
  }
  if (row.tasks == 0 || sum_b <= 0) {
    unavailable(row, "the baseline's paired tasks used no tokens");
    return calc;
  }
  row.baseline = sum_b / static_cast<double>(row.tasks);
  row.current = sum_a / static_cast<double>(row.tasks);
  row.suite_delta = 100 * (sum_a / sum_b - 1);
  row.scope_tasks = static_cast<std::int64_t>(d.size());
  if (d.empty() || scope_b <= 0) {
    row.test = d.empty() ? "no affected task: every paired task gave its baseline's answers"
                         : "the affected tasks used no tokens in the baseline";
    return calc;
  }
  // Σ(a − b)/Σb = mean(d)/mean(b): the interval of mean(d), over the
  // baseline mean taken as fixed, is the interval of the relative change,
  // which cannot fall below −100%.
  MeanInterval mi = mean_diff_interval(d);
  const double scale = 100 * static_cast<double>(d.size()) / scope_b;
  row.delta = mi.mean * scale;
  row.delta_interval = {std::max(mi.interval.low * scale, -100.0), mi.interval.high * scale};
  set_sign_flip(row, d, true, "affected tasks");
  std::int64_t no_usage = b.stats.runs_without_usage + a.stats.runs_without_usage;
  if (no_usage > 0) row.test += "; " + std::to_string(no_usage) + " runs reported no usage (counted as 0)";
  return calc;
}

// Mean model latency of a task's fresh, non-errored runs that carry one
// (what call_latency counts).
std::optional<double> fresh_latency(const Task& t) {
  double sum = 0;
  int count = 0;
  for (const Run& r : t.runs)
    if (metrics::timed_fresh(r)) {
      sum += r.latency_ms;
      ++count;
    }
  if (count == 0) return std::nullopt;
  return sum / count;
}

// The latencies a report's call_latency is taken over.
std::vector<double> fresh_latencies(const report::Report& r) {
  std::vector<double> out;
  for (const Task& t : r.tasks)
    for (const Run& run : t.runs)
      if (metrics::timed_fresh(run)) out.push_back(run.latency_ms);
  return out;
}

RowCalc latency_row(const report::Report& b, const report::Report& a, const std::vector<Pair>& pairs) {
  RowCalc calc{make_row("p95_latency", "p95 latency", "%", "ms")};
  MetricRow& row = calc.row;
  row.higher_is_better = false;
  // Replayed calls have no latency: with nothing fresh on one side there is
  // nothing to compare.
  if (b.stats.call_latency.count == 0 || a.stats.call_latency.count == 0) {
    unavailable(row, std::string("no fresh call timed in the ") +
                         (b.stats.call_latency.count == 0 ? "baseline" : "current report") +
                         "; replayed calls have no latency");
    return calc;
  }
  row.baseline = b.stats.call_latency.p95;
  row.current = a.stats.call_latency.p95;
  row.delta = 100 * (row.current / row.baseline - 1);
  row.suite_delta = row.delta;
  // The interval is the p95 change's own, by resampling each report's
  // fresh calls; the cost is bounded for suites of many calls.
  const std::vector<double> calls_b = fresh_latencies(b), calls_a = fresh_latencies(a);
  const int resamples =
      static_cast<int>(std::clamp<std::size_t>(20'000'000 / (calls_b.size() + calls_a.size()), 200, 2000));
  row.delta_interval = p95_change_interval(calls_b, calls_a, resamples);
  const std::string interval_text = "; interval: percentile bootstrap of the p95 change (" +
                                    std::to_string(resamples) +
                                    " resamples of each report's fresh calls, seeded)";
  // A p95 has no paired form; the test is on the per-task mean latency.
  std::vector<double> d;
  for (const Pair& p : pairs) {
    auto lb = fresh_latency(*p.base), la = fresh_latency(*p.cur);
    if (!lb || !la) continue;
    d.push_back(*la - *lb);
  }
  row.tasks = row.scope_tasks = static_cast<std::int64_t>(d.size());
  if (d.empty()) {
    row.test = "no task has fresh calls with latency in both reports" + interval_text;
    return calc;
  }
  set_sign_flip(row, d, true, "tasks (per-task mean latency of fresh calls)");
  row.test += interval_text;
  return calc;
}

RowCalc error_row(const std::vector<Pair>& pairs) {
  RowCalc calc{make_row("error_rate", "error rate", "pp", "%")};
  MetricRow& row = calc.row;
  row.higher_is_better = false;
  std::vector<PairValue> values;
  for (const Pair& p : pairs) {
    auto rb = static_cast<double>(p.base->runs.size()), ra = static_cast<double>(p.cur->runs.size());
    if (rb == 0 || ra == 0) continue;
    values.push_back({static_cast<double>(p.sb->errored) / rb, static_cast<double>(p.sa->errored) / ra,
                      !p.inputs_unchanged});
  }
  if (values.empty()) {
    unavailable(row, "no paired task has runs in both reports");
    return calc;
  }
  fill_unit_row(row, values, true);
  return calc;
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
  double sum = 0, sum_sq = 0, sum_abs = 0;
  for (double x : d) {
    if (x == 0) continue;
    ++nonzero;
    sum += x;
    sum_sq += x * x;
    sum_abs += std::fabs(x);
  }
  OneSided r;
  if (nonzero <= sign_flip_normal_above) {
    SignFlipResult s = paired_sign_flip_test(d);
    r.p_less = s.p_less;
    r.p_greater = s.p_greater;
    // Every sign the same is the most extreme pattern: 2^-m exactly, and
    // never below the Monte Carlo estimate's own floor 1 / (1 + replicates).
    r.min_p = std::pow(0.5, static_cast<double>(nonzero));
    if (s.method == "exact") {
      r.method = "sign-flip exact";
    } else {
      r.min_p = std::max(r.min_p, 1.0 / (1.0 + static_cast<double>(s.replicates)));
      r.method = "sign-flip Monte Carlo (" + std::to_string(s.replicates) + ", seeded)";
    }
    return r;
  }
  double z = sum / std::sqrt(sum_sq);
  r.p_less = normal_cdf(z);
  r.p_greater = normal_cdf(-z);
  r.min_p = normal_cdf(-sum_abs / std::sqrt(sum_sq));
  r.method = "sign-flip normal limit";
  return r;
}

std::vector<RowCalc> metric_rows(const report::Report& baseline, const report::Report& current,
                                 const std::vector<Pair>& pairs, const Options& o) {
  const std::int64_t k = common_k(pairs);
  std::vector<RowCalc> rows;
  rows.push_back(success_row(pairs));
  rows.push_back(gap_row(pairs, k, o));
  rows.push_back(pass_hat_row(pairs, k));
  rows.push_back(tokens_row(baseline, current, pairs));
  rows.push_back(latency_row(baseline, current, pairs));
  rows.push_back(error_row(pairs));
  return rows;
}

std::int64_t tasks_needed(double alpha, std::size_t family) {
  const double f = static_cast<double>(std::max<std::size_t>(family, 1));
  return static_cast<std::int64_t>(std::floor(std::log2(f / alpha))) + 1;
}

std::vector<MetricRow> gate_rows(std::vector<RowCalc> calcs, const config::Thresholds& t) {
  std::vector<double> family;
  std::vector<std::size_t> members;
  for (std::size_t i = 0; i < calcs.size(); ++i) {
    MetricRow& row = calcs[i].row;
    row.threshold = threshold_for(row.key, t);
    row.gated = row.available && row.threshold.has_value() && row.p_value.has_value();
    if (!row.gated) continue;
    family.push_back(*row.p_value);
    members.push_back(i);
  }
  std::vector<double> adjusted = holm(family);
  for (std::size_t j = 0; j < members.size(); ++j)
    calcs[members[j]].row.p_adjusted = adjusted[j];
  // Holm tests the smallest p at alpha / F: the level a single real change
  // among otherwise quiet metrics has to reach.
  const double f = static_cast<double>(std::max<std::size_t>(members.size(), 1));
  std::vector<MetricRow> rows;
  for (RowCalc& calc : calcs) {
    MetricRow& row = calc.row;
    if (calc.floor) row.noise_floor = calc.floor(row.gated ? t.alpha / f : t.alpha);
    if (row.available && row.threshold) {
      double worsening = row.higher_is_better ? -row.delta : row.delta;
      // A drop of exactly the threshold is "at least" it, whatever the last
      // bit of 100·(1/50) happens to be.
      row.crossed = worsening >= *row.threshold - 1e-9;
      row.significant = row.p_adjusted && below_alpha(*row.p_adjusted, t.alpha);
      row.failed = row.gated && row.crossed && row.significant;
      row.inconclusive =
          row.gated && row.crossed && !row.significant && row.min_p && !below_alpha(*row.min_p * f, t.alpha);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

} // namespace gate::compare::detail

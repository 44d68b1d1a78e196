#include <gate/compare/compare.hpp>

#include <algorithm>
#include <future>
#include <numeric>
#include <stdexcept>

#include <gate/compare/detail.hpp>
#include <gate/compare/stats.hpp>
#include <gate/report/measured.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::compare {

namespace {

using detail::Pair;
using metrics::TaskStats;
using results::Run;
using results::Task;

constexpr std::size_t max_failing_checks = 5;
// Below this many paired tasks a second thread costs more than it saves.
constexpr std::size_t parallel_above = 10000;
constexpr std::size_t excerpt_bytes = 200;

// Indices of r.tasks in id order. Reports are written sorted, so the sort
// is normally skipped; a duplicate id would make pairing ambiguous.
std::vector<std::size_t> by_id(const report::Report& r, const char* side) {
  if (r.task_stats.size() != r.tasks.size())
    throw std::invalid_argument(std::string("compare: the ") + side +
                                " report's statistics were not computed (report::compute)");
  std::vector<std::size_t> order(r.tasks.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Ids strictly increasing (one comparison per task): sorted, no duplicate.
  bool increasing = true;
  for (std::size_t i = 1; i < r.tasks.size() && increasing; ++i)
    increasing = r.tasks[i - 1].id.compare(r.tasks[i].id) < 0;
  if (increasing) return order;
  auto less = [&](std::size_t x, std::size_t y) { return r.tasks[x].id < r.tasks[y].id; };
  std::sort(order.begin(), order.end(), less);
  for (std::size_t i = 1; i < order.size(); ++i)
    if (r.tasks[order[i]].id == r.tasks[order[i - 1]].id)
      throw Error(Exit::bad_input,
                  std::string("the ") + side + " report has task \"" + r.tasks[order[i]].id + "\" twice");
  return order;
}

// METRICS.md "Unchanged inputs": every run of both sides sent one request
// fingerprint, and each current run gave the answer of the baseline's run of
// the same replica. Then nothing that could vary did, and an outcome change
// is the checks' doing. Same requests, other answers from the cache: the
// entries were recorded again since the baseline, so the runs are fresh
// samples.
struct Inputs {
  bool unchanged = false;
  bool rerecorded = false;
  bool fingerprints = true; // both sides carry request fingerprints
};

Inputs classify_inputs(const Task& b, const Task& a) {
  Inputs in;
  if (b.runs.empty() || a.runs.empty()) return in;
  const std::string& fp = b.runs.front().fingerprint;
  if (fp.empty()) { // imported runs without fingerprints prove nothing
    in.fingerprints = false;
    return in;
  }
  auto same = [&](const Run& r) { return r.fingerprint == fp; };
  if (!std::all_of(a.runs.begin(), a.runs.end(), same) || !std::all_of(b.runs.begin(), b.runs.end(), same))
    return in;
  bool all_equal = true, replayed_other = false;
  for (const Run& r : a.runs) {
    auto it = std::find_if(b.runs.begin(), b.runs.end(), [&](const Run& x) { return x.index == r.index; });
    const bool equal = it != b.runs.end() && !r.errored() && !it->errored() && !r.answer_sha256.empty() &&
                       r.answer_sha256 == it->answer_sha256;
    all_equal = all_equal && equal;
    replayed_other = replayed_other || (!equal && r.cache_hit && it != b.runs.end() && !r.errored());
  }
  in.unchanged = all_equal;
  in.rerecorded = !all_equal && replayed_other;
  return in;
}

// Upstream text shortened for a verdict: redacted before it is cut, so a
// secret cut in half cannot slip past the redaction.
std::string excerpt(const std::string& s) { return std::string(utf8_prefix(redact(s), excerpt_bytes)); }

std::vector<std::string> failing_checks(const Task& t) {
  std::vector<std::string> out;
  auto add = [&](const std::string& s) {
    std::string e = excerpt(s);
    if (out.size() < max_failing_checks && std::find(out.begin(), out.end(), e) == out.end())
      out.push_back(std::move(e));
  };
  for (const Run& r : t.runs) {
    if (r.passed) continue;
    if (r.errored()) {
      add("error: " + r.error);
      continue;
    }
    for (const auto& c : r.checks)
      if (!c.passed) add(c.detail.empty() ? c.label : c.label + ": " + c.detail);
  }
  return out;
}

std::string first_failing_answer(const Task& t) {
  for (const Run& r : t.runs)
    if (!r.passed && !r.errored()) return excerpt(results::shown_answer(r));
  return "";
}

// Listing order: regressed, flipped, newly flaky, fixed, newly stable.
int order_class(const TaskDiff& t) {
  if (t.regressed) return 0;
  if (t.flipped) return 1;
  if (t.became_flaky) return 2;
  if (t.fixed) return 3;
  return 4;
}

struct Paired {
  std::vector<Pair> pairs;
  std::vector<std::string> added, removed;
  std::vector<Verdict::AddedRuns> added_runs; // parallel to added
  bool fingerprints = true;
};

Paired pair_tasks(const report::Report& b, const report::Report& a) {
  auto ob = by_id(b, "baseline"), oa = by_id(a, "current");
  Paired out;
  out.pairs.reserve(std::min(ob.size(), oa.size()));
  std::size_t i = 0, j = 0;
  while (i < ob.size() || j < oa.size()) {
    const Task* tb = i < ob.size() ? &b.tasks[ob[i]] : nullptr;
    const Task* ta = j < oa.size() ? &a.tasks[oa[j]] : nullptr;
    const int order = !tb ? 1 : !ta ? -1 : tb->id.compare(ta->id); // < 0: only in the baseline
    if (order < 0) {
      out.removed.push_back(tb->id);
      ++i;
    } else if (order > 0) {
      out.added.push_back(ta->id);
      out.added_runs.push_back({a.task_stats[oa[j]].c, a.task_stats[oa[j]].n});
      ++j;
    } else {
      Pair p{tb, ta, &b.task_stats[ob[i]], &a.task_stats[oa[j]]};
      p.measured = p.sb->n > 0 && p.sa->n > 0;
      const Inputs in = classify_inputs(*tb, *ta);
      p.inputs_unchanged = p.measured && in.unchanged;
      p.rerecorded = p.measured && in.rerecorded;
      out.fingerprints = out.fingerprints && in.fingerprints;
      out.pairs.push_back(p);
      ++i;
      ++j;
    }
  }
  return out;
}

// One-sided Fisher p-values of every pair with runs on both sides, and their
// Benjamini–Hochberg q-values; pairs outside the family keep p = q = 1.
struct PerTaskTests {
  std::vector<double> p_less, p_greater, q_less, q_greater;
};

PerTaskTests fisher_family(const std::vector<Pair>& pairs) {
  PerTaskTests t;
  std::size_t m = pairs.size();
  t.p_less.assign(m, 1);
  t.p_greater.assign(m, 1);
  t.q_less.assign(m, 1);
  t.q_greater.assign(m, 1);
  std::vector<std::size_t> members;
  std::vector<double> less, greater;
  for (std::size_t i = 0; i < m; ++i) {
    const TaskStats &sb = *pairs[i].sb, &sa = *pairs[i].sa;
    if (!pairs[i].measured) continue;
    // A tail that spans the whole support of X is exactly 1; most tasks of a
    // large suite sit there (all pass now, or all failed before), and the
    // shortcut keeps 100,000 tasks cheap.
    std::int64_t passes = sa.c + sb.c;
    bool top = sa.c == std::min(passes, sa.n), bottom = sa.c == std::max<std::int64_t>(0, passes - sb.n);
    t.p_less[i] = top ? 1.0 : fisher_one_sided_less(sa.c, sa.n, sb.c, sb.n);
    t.p_greater[i] = bottom ? 1.0 : fisher_one_sided_greater(sa.c, sa.n, sb.c, sb.n);
    members.push_back(i);
    less.push_back(t.p_less[i]);
    greater.push_back(t.p_greater[i]);
  }
  auto q_less = benjamini_hochberg(less), q_greater = benjamini_hochberg(greater);
  for (std::size_t j = 0; j < members.size(); ++j) {
    t.q_less[members[j]] = q_less[j];
    t.q_greater[members[j]] = q_greater[j];
  }
  return t;
}

TaskDiff diff_task(const Pair& p, double p_less, double p_greater, double q_less, double q_greater,
                   double alpha) {
  const TaskStats &sb = *p.sb, &sa = *p.sa;
  TaskDiff d;
  d.id = p.cur->id;
  d.scenario = p.cur->scenario;
  d.c_b = sb.c;
  d.n_b = sb.n;
  d.c_a = sa.c;
  d.n_a = sa.n;
  d.inputs_unchanged = p.inputs_unchanged;
  d.rerecorded = p.rerecorded;
  const bool both = p.measured;
  // A side whose runs all errored says nothing about the agent: errors are
  // gated by the error rate, not here.
  d.flipped = both && sb.c == sb.n && sa.c < sa.n;
  // Compared as c_a·n_b vs c_b·n_a: exact, no rounding of the rates.
  bool lower = both && sa.c * sb.n < sb.c * sa.n;
  bool higher = both && sa.c * sb.n > sb.c * sa.n;
  d.grader_change = p.inputs_unchanged && (lower || higher);
  d.regressed = detail::below_alpha(q_less, alpha) || (p.inputs_unchanged && lower);
  d.fixed = !d.regressed && (detail::below_alpha(q_greater, alpha) || (p.inputs_unchanged && higher));
  d.became_flaky = both && !sb.mixed && sa.mixed;
  d.became_stable = both && sb.mixed && !sa.mixed;
  d.stable_failing = d.became_stable && sa.c == 0;
  d.p_value = d.fixed ? p_greater : p_less;
  d.q_value = d.fixed ? q_greater : q_less;
  return d;
}

bool listed(const TaskDiff& d) {
  return d.flipped || d.regressed || d.fixed || d.became_flaky || d.became_stable;
}

std::vector<ScenarioRow> scenarios(const std::vector<Pair>& pairs) {
  struct Acc {
    std::int64_t cb = 0, nb = 0, ca = 0, na = 0, tasks = 0;
  };
  std::map<std::string, Acc> by;
  for (const Pair& p : pairs) {
    if (!p.measured) continue;
    Acc& a = by[p.cur->scenario];
    a.cb += p.sb->c;
    a.nb += p.sb->n;
    a.ca += p.sa->c;
    a.na += p.sa->n;
    ++a.tasks;
  }
  auto rate = [](std::int64_t c, std::int64_t n) {
    return n == 0 ? 0.0 : static_cast<double>(c) / static_cast<double>(n);
  };
  std::vector<ScenarioRow> out;
  for (const auto& [name, a] : by)
    out.push_back({name, rate(a.cb, a.nb), rate(a.ca, a.na), a.tasks});
  return out;
}

} // namespace

const char* to_string(Status s) {
  switch (s) {
  case Status::passed: return "passed";
  case Status::failed: return "failed";
  case Status::inconclusive: return "inconclusive";
  case Status::unmeasured: return "could not measure";
  }
  return "?";
}

Verdict compare(const report::Report& baseline, const report::Report& current, const Options& o) {
  double alpha = o.thresholds.alpha;
  if (!(alpha > 0 && alpha < 1))
    throw Error(Exit::bad_input, "thresholds: alpha must be within (0, 1), got " + std::to_string(alpha));
  Verdict v;
  v.alpha = alpha;
  v.max_new_failures = o.thresholds.max_new_failures;
  v.on_inconclusive = o.thresholds.on_inconclusive;
  v.max_errored_runs_pct = o.thresholds.max_errored_runs_pct;
  v.baseline_suite = baseline.suite;
  v.current_suite = current.suite;
  std::string suite_warning = detail::check_suites(baseline.suite, current.suite, o.allow_suite_change);

  Paired paired = pair_tasks(baseline, current);
  const std::vector<Pair>& pairs = paired.pairs;
  v.added = std::move(paired.added);
  v.added_runs = std::move(paired.added_runs);
  v.removed = std::move(paired.removed);
  v.fingerprints_known = paired.fingerprints;
  v.coverage =
      detail::check_coverage(baseline, current, static_cast<std::int64_t>(pairs.size()), o.allow_partial);

  // Nothing measured is not a pass (METRICS.md "Measured runs").
  const double max_errored = o.thresholds.max_errored_runs_pct;
  if (!report::can_judge(report::measured(baseline), max_errored) ||
      !report::can_judge(report::measured(current), max_errored))
    return detail::unmeasured_verdict(std::move(v), baseline, current);

  detail::RouteDiff routes = detail::diff_routes(baseline, current);
  v.route_diff = routes.lines;
  if (!v.route_diff.empty()) v.warnings.push_back("routes differ: " + detail::join(v.route_diff, ", "));
  if (!suite_warning.empty()) v.warnings.push_back(suite_warning);
  if (!v.coverage.empty()) v.warnings.push_back("partial comparison: " + v.coverage);

  // The suite metrics need only the pairs: for a large suite they are
  // measured on a second core while this one judges the tasks. A failure
  // of either is reported as it would be in sequence: the per-task part's
  // first (get() is not reached; the future's destructor waits).
  const bool in_parallel = pairs.size() >= parallel_above;
  std::future<std::vector<detail::RowCalc>> rows;
  if (in_parallel)
    rows = std::async(std::launch::async, [&] { return detail::metric_rows(baseline, current, pairs, o); });

  PerTaskTests tests = fisher_family(pairs);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Pair& p = pairs[i];
    if (!p.measured) {
      v.unmeasured.push_back(p.cur->id);
      continue;
    }
    ++v.paired;
    if (p.inputs_unchanged) ++v.unchanged_inputs;
    if (p.rerecorded) ++v.rerecorded;
    TaskDiff d =
        diff_task(p, tests.p_less[i], tests.p_greater[i], tests.q_less[i], tests.q_greater[i], alpha);
    v.flips += d.flipped;
    v.regressed += d.regressed;
    v.fixed += d.fixed;
    v.became_flaky += d.became_flaky;
    v.became_stable += d.became_stable;
    if (!listed(d)) continue;
    d.failing_checks = failing_checks(*p.cur);
    d.answer_excerpt = first_failing_answer(*p.cur);
    d.input = p.cur->input;
    d.first_divergence = p.sa->first_divergence;
    v.tasks.push_back(std::move(d));
  }
  v.affected = v.paired - v.unchanged_inputs;
  for (auto& w : detail::prompt_warnings(baseline, current, pairs, v.affected))
    v.warnings.push_back(std::move(w));
  std::sort(v.tasks.begin(), v.tasks.end(), [](const TaskDiff& x, const TaskDiff& y) {
    int cx = order_class(x), cy = order_class(y);
    return cx != cy ? cx < cy : x.id < y.id;
  });
  if (!v.unmeasured.empty())
    v.warnings.push_back(std::to_string(v.unmeasured.size()) +
                         " paired tasks have no measured run on a side (every run errored) and are left out");
  if (v.rerecorded > 0)
    v.warnings.push_back(
        std::to_string(v.rerecorded) +
        " tasks were re-recorded since the baseline (same requests, other replayed answers): "
        "they are tested as fresh samples; refresh the baseline with `gate baseline update` "
        "once the cache is settled");

  v.metrics = detail::gate_rows(in_parallel ? rows.get() : detail::metric_rows(baseline, current, pairs, o),
                                o.thresholds);
  v.scenarios = scenarios(pairs);
  if (baseline.stats.priced || current.stats.priced) {
    const auto side = [](const metrics::SuiteStats& s) {
      return CostSide{s.priced, s.cost_usd, s.cached_cost_usd};
    };
    v.cost = Cost{side(baseline.stats), side(current.stats)};
  }

  v.reasons = detail::reasons(v);
  v.inconclusive = detail::inconclusive_reasons(v);
  v.route_fields = routes.fields;
  decide(v);
  return v;
}

void decide(Verdict& v) {
  v.status = Status::passed;
  v.exit = Exit::pass;
  if (!v.reasons.empty()) {
    v.status = Status::failed;
    v.exit = Exit::threshold;
  } else if (!v.inconclusive.empty()) {
    v.status = Status::inconclusive;
    v.exit = v.on_inconclusive == "fail" ? Exit::threshold : Exit::pass;
  }
  v.headline = detail::headline(v, v.route_fields);
}

} // namespace gate::compare

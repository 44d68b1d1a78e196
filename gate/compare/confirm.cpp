#include <gate/compare/confirm.hpp>

#include <algorithm>
#include <boost/math/distributions/hypergeometric.hpp>
#include <cmath>
#include <cstdio>
#include <map>

#include <gate/compare/detail.hpp>
#include <gate/util/format.hpp>

namespace gate::compare {

namespace {

struct Side {
  std::int64_t passed = 0, measured = 0;
  int next_replica = 0; // one past the highest replica index the side used
  std::string fingerprint;
};

Side side_of(const results::Task& t) {
  Side s;
  s.fingerprint = request_fingerprint(t);
  for (const results::Run& r : t.runs) {
    s.next_replica = std::max(s.next_replica, r.index + 1);
    if (r.errored()) continue;
    ++s.measured;
    s.passed += r.passed ? 1 : 0;
  }
  return s;
}

// "0.017", "<0.001": p-values and levels in the reasons.
std::string number3(double x) {
  if (x < 0.001) return "<0.001";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", x);
  return buf;
}

std::string runs_text(int first, int count) {
  return count == 1 ? "run " + std::to_string(first)
                    : "runs " + std::to_string(first) + "-" + std::to_string(first + count - 1);
}

} // namespace

std::string request_fingerprint(const results::Task& t) {
  if (t.runs.empty()) return "";
  const std::string& fp = t.runs.front().fingerprint;
  for (const results::Run& r : t.runs)
    if (r.fingerprint != fp) return "";
  return fp;
}

const char* to_string(Confirmation::State s) {
  switch (s) {
  case Confirmation::State::confirmed: return "confirmed";
  case Confirmation::State::dismissed: return "dismissed";
  case Confirmation::State::needs_calls: return "needs calls";
  case Confirmation::State::incomplete: return "incomplete";
  case Confirmation::State::unmeasured: return "could not measure";
  }
  return "?";
}

bool needs_confirmation(const Verdict& v, bool flips) {
  if (v.status == Status::failed || v.status == Status::unmeasured) return false;
  if (v.status == Status::inconclusive) return true;
  if (std::any_of(v.metrics.begin(), v.metrics.end(),
                  [](const MetricRow& r) { return r.gated && r.crossed && !r.significant; }))
    return true;
  return flips && v.flips > 0;
}

ConfirmPlan plan_confirmation(const report::Report& baseline, const report::Report& current,
                              const ConfirmAsk& ask,
                              const std::function<Confirmable(const std::string& id)>& about) {
  std::map<std::string_view, const results::Task*> base;
  for (const auto& t : baseline.tasks)
    base.emplace(t.id, &t);
  std::vector<ConfirmPick> candidates;
  for (const auto& t : current.tasks) {
    auto it = base.find(t.id);
    if (it == base.end()) continue;
    const Side b = side_of(*it->second), a = side_of(t);
    if (b.measured == 0 || a.measured == 0) continue;
    // Fresh runs of one request per side; a side that sent several, or none
    // known, has no single request to send again.
    if (b.fingerprint.empty() || a.fingerprint.empty()) continue;
    if (b.fingerprint == a.fingerprint) continue;
    ConfirmPick p;
    p.baseline_rate = static_cast<double>(b.passed) / static_cast<double>(b.measured);
    p.current_rate = static_cast<double>(a.passed) / static_cast<double>(a.measured);
    p.difference = p.baseline_rate - p.current_rate;
    if (p.difference <= 0) continue;
    const Confirmable c = about(t.id);
    if (!c.resendable) continue;
    p.id = t.id;
    p.flipped = b.passed == b.measured && a.passed < a.measured;
    p.calls_per_run = std::max(1, c.calls_per_run);
    p.baseline_fingerprint = b.fingerprint;
    p.current_fingerprint = a.fingerprint;
    p.baseline_first_replica = b.next_replica;
    p.current_first_replica = a.next_replica;
    candidates.push_back(std::move(p));
  }
  std::sort(candidates.begin(), candidates.end(), [](const ConfirmPick& x, const ConfirmPick& y) {
    if (x.difference != y.difference) return x.difference > y.difference;
    if (x.flipped != y.flipped) return x.flipped;
    return x.id < y.id;
  });
  // The candidates that fit at `runs` per side, in order.
  auto fit = [&](int runs) {
    ConfirmPlan plan;
    plan.runs = runs;
    plan.ask = ask;
    for (ConfirmPick p : candidates) {
      p.calls = 2 * static_cast<std::int64_t>(runs) * p.calls_per_run;
      if (plan.calls + p.calls > ask.max_calls) {
        plan.left_out.push_back(p.id);
        continue;
      }
      plan.calls += p.calls;
      plan.picks.push_back(std::move(p));
    }
    std::sort(plan.left_out.begin(), plan.left_out.end());
    return plan;
  };
  for (int runs = ask.runs; runs <= std::max(ask.runs, k_max_confirm_runs); ++runs) {
    ConfirmPlan plan = fit(runs);
    if (plan.picks.empty()) break;
    if (decides_at(plan.picks, runs, ask.level)) return plan;
  }
  return fit(ask.runs);
}

bool decides_at(const std::vector<ConfirmPick>& picks, int runs, double level) {
  std::vector<ConfirmCounts> expected;
  for (const ConfirmPick& p : picks) {
    auto scaled = [runs](double rate) { return static_cast<std::int64_t>(std::lround(rate * runs)); };
    ConfirmCounts c;
    c.id = p.id;
    c.baseline_passed = std::max<std::int64_t>(0, scaled(p.baseline_rate) - 1);
    c.baseline_runs = c.current_runs = runs;
    c.current_passed = scaled(p.current_rate);
    expected.push_back(std::move(c));
  }
  return stratified_exact_p(expected) <= level;
}

double stratified_exact_p(const std::vector<ConfirmCounts>& tasks) {
  // law[s] = P(sum of the baseline's passes so far = s)
  std::vector<double> law{1.0};
  std::int64_t observed = 0;
  for (const ConfirmCounts& t : tasks) {
    if (t.baseline_passed < 0 || t.current_passed < 0 || t.baseline_passed > t.baseline_runs ||
        t.current_passed > t.current_runs)
      throw Error(Exit::bad_input, "confirmation counts of task \"" + t.id + "\" are inconsistent");
    if (t.baseline_runs == 0 || t.current_runs == 0) continue;
    const std::int64_t n = t.baseline_runs, total = t.baseline_runs + t.current_runs;
    const std::int64_t passes = t.baseline_passed + t.current_passed;
    observed += t.baseline_passed;
    const std::int64_t lo = std::max<std::int64_t>(0, passes - t.current_runs), hi = std::min(passes, n);
    std::vector<double> next(law.size() + static_cast<std::size_t>(n), 0.0);
    // passes of `total` runs are passes; the baseline's n runs are the sample.
    const boost::math::hypergeometric_distribution<double> task(
        static_cast<unsigned>(passes), static_cast<unsigned>(n), static_cast<unsigned>(total));
    for (std::int64_t x = lo; x <= hi; ++x) {
      const double px = boost::math::pdf(task, static_cast<unsigned>(x));
      for (std::size_t s = 0; s < law.size(); ++s)
        next[s + static_cast<std::size_t>(x)] += law[s] * px;
    }
    law = std::move(next);
  }
  double p = 0;
  for (std::size_t s = static_cast<std::size_t>(observed); s < law.size(); ++s)
    p += law[s];
  return std::min(1.0, p);
}

double confirmation_level(const Verdict& v) {
  const auto gated =
      std::count_if(v.metrics.begin(), v.metrics.end(), [](const MetricRow& r) { return r.gated; });
  return v.alpha / static_cast<double>(gated + 1);
}

void apply_confirmation(Verdict& v, const ConfirmPlan& plan, std::vector<ConfirmCounts> fresh,
                        std::int64_t calls_made, std::optional<std::int64_t> tokens) {
  Confirmation c;
  c.runs = plan.runs;
  c.max_calls = plan.ask.max_calls;
  c.planned_calls = plan.calls;
  c.calls = calls_made;
  c.tokens = tokens;
  c.left_out = plan.left_out;
  c.level = plan.ask.level;
  c.p_value = stratified_exact_p(fresh);
  std::vector<std::string> worse;
  std::int64_t measured = 0;
  for (const ConfirmCounts& f : fresh) {
    ConfirmedTask t{f.id, f.baseline_passed, f.baseline_runs, f.current_passed, f.current_runs, false};
    t.worse = f.baseline_runs > 0 && f.current_runs > 0 &&
              f.baseline_passed * f.current_runs > f.current_passed * f.baseline_runs;
    if (t.worse) worse.push_back(f.id);
    c.tasks.push_back(std::move(t));
    measured += f.baseline_runs + f.current_runs;
    c.errored += f.errored;
    if (c.error.empty()) c.error = f.error;
  }
  const std::string tested = std::to_string(fresh.size()) + " task" + (fresh.size() == 1 ? "" : "s") + " × " +
                             std::to_string(plan.runs) + " fresh runs per side";
  const std::int64_t made = measured + c.errored;
  const std::string errored = std::to_string(c.errored) + " of " + std::to_string(made) +
                              " fresh runs errored (" + (c.error.empty() ? "no error text" : c.error) + ")";
  if (made > 0 &&
      100.0 * static_cast<double>(c.errored) / static_cast<double>(made) > plan.ask.max_errored_pct) {
    // As for the main run: too few answers to stand for the tasks.
    c.state = Confirmation::State::unmeasured;
    v.confirmation = std::move(c);
    v.reasons.push_back("confirmation runs: " + errored + ", above thresholds.max_errored_runs_pct " +
                        fixed(plan.ask.max_errored_pct, 1));
    detail::could_not_measure(v);
    return;
  }
  if (c.p_value <= c.level) {
    c.state = Confirmation::State::confirmed;
    v.reasons.push_back("confirmed by " + tested + " (stratified exact p " + number3(c.p_value) +
                        " ≤ level " + number3(c.level) + "): worse on " + detail::join(worse, ", "));
  } else if (c.errored > 0) {
    // An errored run might have been the evidence: no dismissal on a part.
    c.state = Confirmation::State::incomplete;
    const std::string doubt = "confirmation incomplete: " + errored + "; the rest show no regression (p " +
                              number3(c.p_value) + "), which cannot dismiss the doubt: run gate check again";
    (v.status == Status::inconclusive ? v.inconclusive : v.warnings).push_back(doubt);
  } else {
    c.state = Confirmation::State::dismissed;
    if (plan.left_out.empty()) {
      v.inconclusive.clear();
      v.warnings.push_back("confirmation dismissed the doubt as noise: " + tested + " (stratified exact p " +
                           number3(c.p_value) + " > level " + number3(c.level) + ")");
    } else {
      v.inconclusive.push_back("confirmation covered " + std::to_string(plan.picks.size()) + " of " +
                               std::to_string(plan.picks.size() + plan.left_out.size()) +
                               " tasks whose success fell and found no regression (p " + number3(c.p_value) +
                               "); raise confirm.max_calls (" + std::to_string(plan.ask.max_calls) +
                               ") to cover the rest");
    }
  }
  v.confirmation = std::move(c);
  decide(v);
}

void confirmation_needs_calls(Verdict& v, const ConfirmPlan& plan, std::vector<std::string> missing,
                              std::string command) {
  const int runs = plan.runs;
  Confirmation c;
  c.state = Confirmation::State::needs_calls;
  c.runs = runs;
  c.max_calls = plan.ask.max_calls;
  c.planned_calls = plan.calls;
  c.level = plan.ask.level;
  c.left_out = plan.left_out;
  for (const ConfirmPick& p : plan.picks)
    c.tasks.push_back({p.id, 0, 0, 0, 0, false});
  if (missing.empty())
    for (const ConfirmPick& p : plan.picks)
      missing.push_back("task \"" + p.id + "\" baseline " + runs_text(p.baseline_first_replica, runs) +
                        ", current " + runs_text(p.current_first_replica, runs));
  c.missing = std::move(missing);
  c.command = std::move(command);
  const std::size_t shown = std::min<std::size_t>(c.missing.size(), 5);
  std::string runs_needed;
  for (std::size_t i = 0; i < shown; ++i)
    runs_needed += (i == 0 ? "" : "; ") + c.missing[i];
  if (c.missing.size() > shown)
    runs_needed += "; … and " + std::to_string(c.missing.size() - shown) + " more";
  v.warnings.push_back("confirmation not run: replay-only cannot make its " + std::to_string(plan.calls) +
                       " fresh calls (" + runs_needed + "); record them with: " + c.command);
  v.confirmation = std::move(c);
}

} // namespace gate::compare

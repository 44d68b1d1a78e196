#include <gate/compare/detail.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include <gate/report/measured.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

#include <gate/util/format.hpp>

namespace gate::compare::detail {

namespace {

using results::Route;
using results::Run;

constexpr std::size_t max_ids_in_reason = 5;

std::string fixed1(double x) { return fixed(x, 1); }
std::string signed1(double x) { return signed_fixed(x, 1); }

std::string p_text(double p) {
  if (p < 0.001) return "p<0.001";
  char buf[32];
  std::snprintf(buf, sizeof buf, "p=%.3f", p);
  return buf;
}

std::string plural(std::int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string route_value(const Route& r, const std::string& key) {
  auto it = r.find(key);
  return it == r.end() ? "(unset)" : redact(it->second);
}

// Keys whose value differs between two routes; a key missing on one side differs.
void differing_keys(const Route& b, const Route& a, std::vector<std::string>& out) {
  auto ib = b.begin(), ia = a.begin();
  while (ib != b.end() || ia != a.end()) {
    if (ia == a.end() || (ib != b.end() && ib->first < ia->first)) {
      out.push_back(ib->first);
      ++ib;
    } else if (ib == b.end() || ia->first < ib->first) {
      out.push_back(ia->first);
      ++ia;
    } else {
      if (ib->second != ia->second) out.push_back(ib->first);
      ++ib;
      ++ia;
    }
  }
}

// "on 20 affected tasks (−3.0pp suite-wide)" when the scope is not the
// whole paired set; "" when it is.
std::string scope_text(const MetricRow& r, std::int64_t paired) {
  if (r.scope_tasks == r.tasks && r.tasks == paired) return "";
  return " on " + plural(r.scope_tasks, "affected task", "affected tasks") + " (" + signed1(r.suite_delta) +
         r.unit + " suite-wide)";
}

std::string metric_reason(const MetricRow& r, std::int64_t paired) {
  double worsening = r.higher_is_better ? -r.delta : r.delta;
  return r.name + (r.higher_is_better ? " fell " : " rose ") + fixed1(worsening) + r.unit +
         scope_text(r, paired) + " (threshold " + fixed1(*r.threshold) + r.unit + ", " +
         p_text(*r.p_adjusted) + " adjusted)";
}

std::string regressed_reason(const Verdict& v) {
  std::vector<std::string> ids;
  std::int64_t grader = 0;
  for (const TaskDiff& t : v.tasks) {
    if (!t.regressed) continue;
    if (ids.size() < max_ids_in_reason) ids.push_back(t.id);
    grader += t.grader_change;
  }
  std::string s = plural(v.regressed, "task", "tasks") + " regressed: " + join(ids, ", ");
  if (v.regressed > static_cast<std::int64_t>(ids.size())) s += ", …";
  if (grader > 0) s += " (" + std::to_string(grader) + " by a check or grader change)";
  return s;
}

// What the success-rate change means next to its noise, for the pass line.
std::string success_note(const MetricRow& s, double alpha) {
  if (!s.available) return "";
  bool worse = s.delta < 0;
  std::optional<double> p = s.p_adjusted ? s.p_adjusted : s.p_value;
  if (worse && p && below_alpha(*p, alpha))
    return s.threshold ? ", below the " + fixed1(*s.threshold) + "pp threshold" : ", significant";
  if (s.noise_floor && std::fabs(s.delta) < *s.noise_floor)
    return ", within noise ±" + fixed1(*s.noise_floor) + "pp";
  return "";
}

} // namespace

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::string check_suites(const report::SuiteInfo& baseline, const report::SuiteInfo& current, bool allow) {
  std::vector<std::string> long_form, short_form;
  auto field = [&](const std::string& name, const std::string& b, const std::string& a) {
    if (b == a) return;
    long_form.push_back(name + " \"" + b + "\" in the baseline, \"" + a + "\" in the current report");
    short_form.push_back(name + " \"" + b + "\" → \"" + a + "\"");
  };
  field("name", baseline.name, current.name);
  field("version", baseline.version, current.version);
  field("sha256", baseline.sha256, current.sha256);
  auto unnamed = [](const report::SuiteInfo& s) {
    return s.name == report::k_unnamed_suite && s.version == report::k_unnamed_version;
  };
  if (long_form.empty() && unnamed(baseline) && unnamed(current)) {
    // gate analyze's default name says nothing about where the task ids
    // came from: two unrelated benchmarks would pair "task 1" with "task 1".
    const std::string what = std::string("both reports carry gate analyze's default suite name (") +
                             report::k_unnamed_suite + " " + report::k_unnamed_version + ")";
    if (!allow)
      throw Error(Exit::bad_input, what + ", so nothing says their tasks are of one suite; name the suite "
                                          "(gate analyze --suite-name NAME --suite-version V) or pass "
                                          "--allow-suite-change");
    return what + ": tasks are paired by id, as allowed";
  }
  if (long_form.empty()) return "";
  if (!allow)
    throw Error(Exit::bad_input,
                "the baseline and the current report are of different suites: " + join(long_form, "; ") +
                    "; compare them anyway with --allow-suite-change (only the tasks in "
                    "both are then compared)");
  return "suite changed (" + join(short_form, ", ") + "): only the tasks in both reports are compared";
}

namespace {

// The route most runs of a report went through (METRICS.md "Routes":
// compared side against side, not run against run). Runs of one report
// mostly share one route object (route_of), so they are counted by address
// first and equal maps merged after.
Route modal_route(const report::Report& r) {
  std::map<const Route*, std::int64_t> by_object;
  for (const results::Task& t : r.tasks)
    for (const Run& run : t.runs)
      ++by_object[&report::route_of(r, run)];
  std::vector<std::pair<const Route*, std::int64_t>> merged;
  for (const auto& [route, count] : by_object) {
    const Route* here = route; // clang 14 captures no structured binding
    auto it = std::find_if(merged.begin(), merged.end(), [here](const auto& m) { return *m.first == *here; });
    if (it == merged.end())
      merged.emplace_back(route, count);
    else
      it->second += count;
  }
  if (merged.empty()) return r.route;
  // The largest count; a tie goes to the smaller route, so the choice does
  // not depend on where each map happens to live.
  auto best = merged.begin();
  for (auto it = merged.begin(); it != merged.end(); ++it)
    if (it->second > best->second || (it->second == best->second && *it->first < *best->first)) best = it;
  return *best->first;
}

} // namespace

RouteDiff diff_routes(const report::Report& base_report, const report::Report& cur_report) {
  // Fields a side varies with the run index by design are that harness's
  // way of running trials, reported once in each report, not a difference.
  auto ignored = [&](const std::string& k) {
    return !results::compared_route_key(k) || base_report.stats.route_by_run.count(k) > 0 ||
           cur_report.stats.route_by_run.count(k) > 0;
  };
  std::map<std::string, std::string> lines; // by field name: sorted output
  std::vector<std::string> keys;
  differing_keys(base_report.route, cur_report.route, keys);
  for (const std::string& k : keys)
    if (!ignored(k))
      lines[k] = k + ": " + route_value(base_report.route, k) + " → " + route_value(cur_report.route, k);
  const Route modal_b = modal_route(base_report), modal_a = modal_route(cur_report);
  keys.clear();
  differing_keys(modal_b, modal_a, keys);
  for (const std::string& k : keys)
    if (!ignored(k) && !lines.count(k))
      lines[k] = k + ": " + route_value(modal_b, k) + " → " + route_value(modal_a, k) + " (in most runs)";
  RouteDiff out;
  for (const auto& [k, line] : lines) {
    out.lines.push_back(line);
    out.fields.push_back(k);
  }
  return out;
}

std::string partial_reason(const report::Report& r) {
  std::vector<std::string> why;
  if (!r.complete)
    why.push_back("incomplete" +
                  (r.incomplete_reason.empty()
                       ? std::string()
                       : " (" + std::string(utf8_prefix(redact(r.incomplete_reason), 200)) + ")"));
  if (const auto* c = r.config.if_object())
    if (const auto* shard = c->if_contains("shard"); shard && shard->is_object()) {
      const auto& o = shard->get_object();
      const auto* i = o.if_contains("index");
      const auto* n = o.if_contains("count");
      if (i && n && i->is_int64() && n->is_int64())
        why.push_back("shard " + std::to_string(i->get_int64()) + "/" + std::to_string(n->get_int64()));
      else
        why.push_back("a shard");
    }
  return join(why, ", ");
}

std::string check_coverage(const report::Report& baseline, const report::Report& current, std::int64_t paired,
                           bool allow) {
  const std::string b = partial_reason(baseline), a = partial_reason(current);
  if (b.empty() && a.empty()) return "";
  auto runs = [](const report::Report& r) {
    std::int64_t n = 0;
    for (const results::Task& t : r.tasks)
      n += static_cast<std::int64_t>(t.runs.size());
    return n;
  };
  std::string sides;
  if (!a.empty()) sides += "the current report is " + a;
  if (!b.empty()) sides += std::string(sides.empty() ? "" : "; ") + "the baseline is " + b;
  const std::string covers =
      std::to_string(paired) + " of the baseline's " + std::to_string(baseline.tasks.size()) + " tasks (" +
      std::to_string(runs(current)) + " of " + std::to_string(runs(baseline)) + " runs)";
  if (!allow)
    throw Error(Exit::bad_input,
                sides + ": it holds " + covers +
                    ", so a verdict would not be one on the suite; rerun to finish it, merge "
                    "every shard with `gate merge`, or pass --allow-partial to compare the "
                    "part it holds");
  return "covers " + covers + "; " + sides;
}

std::vector<std::string> reasons(const Verdict& v) {
  std::vector<std::string> out;
  for (const MetricRow& r : v.metrics)
    if (r.failed) out.push_back(metric_reason(r, v.paired));
  if (v.regressed > 0) out.push_back(regressed_reason(v));
  if (v.max_new_failures && v.flips > *v.max_new_failures) {
    std::vector<std::string> ids;
    for (const TaskDiff& t : v.tasks)
      if (t.flipped && ids.size() < max_ids_in_reason) ids.push_back(t.id);
    std::string s = plural(v.flips, "new failure", "new failures") + " (max_new_failures " +
                    std::to_string(*v.max_new_failures) + "): " + join(ids, ", ");
    if (v.flips > static_cast<std::int64_t>(ids.size())) s += ", …";
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> inconclusive_reasons(const Verdict& v) {
  std::size_t family = 0;
  for (const MetricRow& r : v.metrics)
    family += r.gated;
  std::vector<std::string> out;
  for (const MetricRow& r : v.metrics) {
    if (!r.inconclusive) continue;
    const double worsening = r.higher_is_better ? -r.delta : r.delta;
    const std::int64_t needed = tasks_needed(v.alpha, family);
    out.push_back(r.name + (r.higher_is_better ? " fell " : " rose ") + fixed1(worsening) + r.unit +
                  scope_text(r, v.paired) + ", but on so few changed tasks no test could reach p < " +
                  fixed(v.alpha, 3) + " after Holm over " +
                  plural(static_cast<std::int64_t>(family), "metric", "metrics") +
                  " (best possible adjusted " +
                  p_text(std::min(1.0, *r.min_p * static_cast<double>(family))) + "; at least " +
                  std::to_string(needed) +
                  " tasks must change); decide it with fresh runs of the tasks that fell (gate check "
                  "--confirm 3, with the key), or add tasks or runs, or set thresholds.max_new_failures for "
                  "deterministic runs");
  }
  return out;
}

std::string headline(const Verdict& v, const std::vector<std::string>& route_fields) {
  std::string h;
  if (!route_fields.empty()) h = "⚠ routes differ (" + join(route_fields, ", ") + ") — ";
  std::string partial =
      v.coverage.empty() ? "" : " [partial: " + v.coverage.substr(0, v.coverage.find(';')) + "]";
  if (v.status == Status::failed) return h + "❌ gate failed: " + join(v.reasons, "; ") + partial;
  if (v.status == Status::inconclusive)
    return h + "⚠ gate inconclusive: " + join(v.inconclusive, "; ") + partial;
  auto success = std::find_if(v.metrics.begin(), v.metrics.end(),
                              [](const MetricRow& r) { return r.key == "success_rate"; });
  h += "✅ gate passed: ";
  if (success != v.metrics.end() && success->available) {
    const std::string delta = success->scope_tasks > 0 && !scope_text(*success, v.paired).empty()
                                  ? signed1(success->delta) + "pp" + scope_text(*success, v.paired)
                                  : signed1(success->suite_delta) + "pp";
    h += "success " + fixed1(success->baseline) + "% → " + fixed1(success->current) + "% (" + delta +
         success_note(*success, v.alpha) + "); ";
  }
  h += std::to_string(v.regressed) + " regressed; ";
  if (!v.fingerprints_known)
    h += std::to_string(v.paired) + " tasks compared (fingerprints unknown)";
  else
    h += plural(v.unchanged_inputs, "task", "tasks") + " unchanged, " + std::to_string(v.affected) +
         " affected";
  return h + partial;
}

void could_not_measure(Verdict& v) {
  v.status = Status::unmeasured;
  v.exit = Exit::cannot_run;
  v.headline = "⛔ gate could not measure: " + join(v.reasons, "; ");
}

Verdict unmeasured_verdict(Verdict v, const report::Report& baseline, const report::Report& current) {
  const report::Measured mb = report::measured(baseline), ma = report::measured(current);
  const double max_pct = v.max_errored_runs_pct;
  auto side = [&](const char* name, const report::Report& r, const report::Measured& m) {
    if (report::can_judge(m, max_pct)) return;
    v.reasons.push_back(std::string(name) + ": success " + report::success_text(r, m) + "; " +
                        report::errors_text(m) + " (thresholds.max_errored_runs_pct " + fixed1(max_pct) +
                        ")");
  };
  side("current report", current, ma);
  side("baseline", baseline, mb);
  could_not_measure(v);
  return v;
}

} // namespace gate::compare::detail

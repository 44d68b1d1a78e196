#include <gate/compare/detail.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

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

std::string metric_reason(const MetricRow& r) {
  double worsening = r.higher_is_better ? -r.delta : r.delta;
  return r.name + (r.higher_is_better ? " fell " : " rose ") + fixed1(worsening) + r.unit + " (threshold " +
         fixed1(*r.threshold) + r.unit + ", " + p_text(*r.p_adjusted) + " adjusted)";
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
  if (long_form.empty()) return "";
  if (!allow)
    throw Error(Exit::bad_input,
                "the baseline and the current report are of different suites: " + join(long_form, "; ") +
                    "; compare them anyway with --allow-suite-change (only the tasks in "
                    "both are then compared)");
  return "suite changed (" + join(short_form, ", ") + "): only the tasks in both reports are compared";
}

RouteDiff diff_routes(const report::Report& base_report, const report::Report& cur_report,
                      const std::vector<Pair>& pairs) {
  const Route& baseline = base_report.route;
  const Route& current = cur_report.route;
  struct Change {
    std::string from, to;
    std::int64_t tasks = 0;
  };
  std::map<std::string, Change> configured, in_runs;
  std::vector<std::string> keys;
  differing_keys(baseline, current, keys);
  for (const std::string& k : keys)
    configured[k] = {route_value(baseline, k), route_value(current, k), 0};

  std::vector<std::string> task_keys, run_keys;
  // Most runs of a report share one route object (route_of): the keys found
  // for the last pair of route objects hold for the next pair of the same
  // two, without comparing the maps again.
  const Route *last_ref = nullptr, *last_route = nullptr;
  for (const Pair& p : pairs) {
    if (p.base->runs.empty()) continue;
    const Route& ref = report::route_of(base_report, p.base->runs.front());
    task_keys.clear();
    for (const Run& r : p.cur->runs) {
      // A task that is not route-polluted ran every run on its first run's
      // route: one map comparison per task instead of one per run.
      if (&r != &p.cur->runs.front() && !p.sa->route_polluted) break;
      const Route& route = report::route_of(cur_report, r);
      if (&ref != last_ref || &route != last_route) {
        last_ref = &ref;
        last_route = &route;
        run_keys.clear();
        if (route != ref) differing_keys(ref, route, run_keys);
      }
      for (const std::string& k : run_keys) {
        if (!in_runs.count(k)) in_runs[k] = {route_value(ref, k), route_value(route, k), 0};
        task_keys.push_back(k);
      }
    }
    std::sort(task_keys.begin(), task_keys.end());
    task_keys.erase(std::unique(task_keys.begin(), task_keys.end()), task_keys.end());
    for (const std::string& k : task_keys)
      ++in_runs[k].tasks;
  }

  RouteDiff out;
  std::map<std::string, bool> fields;
  for (const auto& [k, c] : configured) {
    out.lines.push_back(k + ": " + c.from + " → " + c.to);
    fields[k] = true;
  }
  for (const auto& [k, c] : in_runs) {
    if (configured.count(k)) continue;
    out.lines.push_back(k + ": " + c.from + " → " + c.to + " (in the runs of " +
                        plural(c.tasks, "task", "tasks") + ")");
    fields[k] = true;
  }
  for (const auto& [k, unused] : fields)
    out.fields.push_back(k);
  return out;
}

void add_incomplete(const report::Report& r, const std::string& side, std::vector<std::string>& warnings) {
  if (r.complete) return;
  std::string w = side + " report is incomplete";
  if (!r.incomplete_reason.empty())
    w += " (" + std::string(utf8_prefix(redact(r.incomplete_reason), 200)) + ")";
  warnings.push_back(w + ": it holds only the runs that finished");
}

std::vector<std::string> reasons(const Verdict& v) {
  std::vector<std::string> out;
  for (const MetricRow& r : v.metrics)
    if (r.failed) out.push_back(metric_reason(r));
  if (v.regressed > 0) out.push_back(regressed_reason(v));
  if (v.max_new_failures && v.flips > *v.max_new_failures)
    out.push_back(plural(v.flips, "new failure", "new failures") + " (max_new_failures " +
                  std::to_string(*v.max_new_failures) + ")");
  return out;
}

std::string headline(const Verdict& v, const std::vector<std::string>& route_fields) {
  std::string h;
  if (!route_fields.empty()) h = "⚠ routes differ (" + join(route_fields, ", ") + ") — ";
  if (!v.passed) return h + "❌ gate failed: " + join(v.reasons, "; ");
  auto success = std::find_if(v.metrics.begin(), v.metrics.end(),
                              [](const MetricRow& r) { return r.key == "success_rate"; });
  h += "✅ gate passed: ";
  if (success != v.metrics.end())
    h += "success " + fixed1(success->baseline) + "% → " + fixed1(success->current) + "% (" +
         signed1(success->delta) + "pp" + success_note(*success, v.alpha) + "); ";
  return h + std::to_string(v.regressed) + " regressed; " + plural(v.unchanged_inputs, "task", "tasks") +
         " unchanged, " + std::to_string(v.affected) + " affected";
}

} // namespace gate::compare::detail

#include <gate/render/html.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include <gate/render/escape.hpp>
#include <gate/render/html_detail.hpp>
#include <gate/render/na.hpp>
#include <gate/render/shared.hpp>
#include <gate/util/format.hpp>

namespace gate::render {

namespace {

using namespace html_detail;

// A number with `digits` decimals; "—" when not finite.
std::string num(double v, int digits) { return std::isfinite(v) ? fixed(v, digits) : "—"; }

// "+1.5", "−0.3" with a real minus sign, as the verdict's own text.
std::string signed_num(double v) { return std::isfinite(v) ? signed_fixed(v, 1) : "—"; }

std::string with_unit(const std::string& number, const std::string& unit) {
  if (number == "—") return number;
  return unit == "%" ? number + "%" : number + " " + text(unit);
}

std::string value(double v, const std::string& value_unit) {
  if (value_unit == "ms") return std::isfinite(v) ? text(human_ms(v)) : "—";
  if (value_unit == "tokens") return num(v, 1);
  return with_unit(num(v, 1), value_unit);
}

std::string metric_status(const compare::MetricRow& m, std::string& cls) {
  cls.clear();
  if (!m.available) return "n/a";
  if (m.inconclusive) {
    cls = "crossed";
    return "inconclusive (too few changed tasks)";
  }
  if (m.failed) {
    cls = "failed";
    return "failed";
  }
  if (!m.threshold) return "not gated";
  if (m.crossed) {
    cls = "crossed";
    return m.gated ? "crossed, not significant" : "crossed, no test";
  }
  return "ok";
}

void metric_table(const compare::Verdict& v, std::string& out) {
  out += "<section id=\"gate-metrics\">\n<h2>Metrics</h2>\n<table><thead><tr><th>Metric</th><th>Baseline</th>"
         "<th>Current</th><th>Δ</th><th>95% interval</th><th>Threshold</th><th>Adjusted p</th>"
         "<th>Noise floor</th><th>Status</th></tr></thead>\n<tbody>\n";
  for (const compare::MetricRow& m : v.metrics) {
    std::string name = text(m.name);
    if (!m.higher_is_better) name += " <span class=\"muted small\">(lower is better)</span>";
    if (!m.test.empty()) name += "<div class=\"muted small\">" + text(m.test) + "</div>";
    std::string interval = "—";
    if (std::isfinite(m.delta_interval.low) && std::isfinite(m.delta_interval.high))
      interval = with_unit(
          "[" + signed_num(m.delta_interval.low) + ", " + signed_num(m.delta_interval.high) + "]", m.unit);
    std::string p = "—";
    if (m.p_adjusted)
      p = p_value(*m.p_adjusted);
    else if (m.p_value)
      p = p_value(*m.p_value) + " <span class=\"muted small\">(unadjusted)</span>";
    std::string cls;
    std::string status = metric_status(m, cls);
    if (!m.available) {
      out += "<tr><td>" + name + "</td><td colspan=\"7\" class=\"muted\">n/a (" + text(m.unavailable) +
             ")</td><td class=\"status\">" + status + "</td></tr>\n";
      continue;
    }
    out += cls.empty() ? "<tr>" : "<tr class=\"" + cls + "\">";
    out += "<td>" + name + "</td><td class=\"num\">" + value(m.baseline, m.value_unit) +
           "</td><td class=\"num\">" + value(m.current, m.value_unit) + "</td><td class=\"num\">" +
           with_unit(signed_num(m.delta), m.unit) + "</td><td class=\"num\">" + interval +
           "</td><td class=\"num\">" + (m.threshold ? with_unit(num(*m.threshold, 1), m.unit) : "—") +
           "</td><td class=\"num\">" + p + "</td><td class=\"num\">" +
           (m.noise_floor ? "±" + with_unit(num(*m.noise_floor, 1), m.unit) : "—") +
           "</td><td class=\"status\">" + status + "</td></tr>\n";
  }
  out +=
      "</tbody></table>\n<p class=\"hint\">Δ is measured over the paired tasks. A metric fails the gate only "
      "when its worsening reaches the threshold <em>and</em> it is significant: Holm-adjusted p below α = " +
      num(v.alpha, 3) +
      " over the gated metrics. The noise floor is the smallest worsening this suite "
      "size and run count would detect.</p>\n</section>\n";
}

struct Bar {
  std::string label;
  double base = 0, cur = 0; // in [0, 1]
  std::int64_t tasks = 0;
};

// Horizontal bars in inline SVG, baseline over current: no script, no
// external asset.
void chart(const std::vector<Bar>& bars, std::string& out) {
  constexpr int label_w = 210, bar_w = 340, width = 620, bar_h = 12, row_h = 36, top = 22;
  const int height = top + row_h * static_cast<int>(bars.size()) + 4;
  out += "<section id=\"gate-chart\">\n<h2>Success by scenario</h2>\n<svg class=\"chart\" width=\"" +
         std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
         std::to_string(width) + " " + std::to_string(height) +
         "\" role=\"img\" aria-label=\"success rate by scenario\">\n";
  out +=
      "<rect class=\"base\" x=\"210\" y=\"4\" width=\"10\" height=\"10\"/><text x=\"224\" y=\"13\">baseline"
      "</text><rect class=\"cur\" x=\"300\" y=\"4\" width=\"10\" height=\"10\"/><text x=\"314\" y=\"13\">"
      "current</text>\n";
  auto bar = [&](const char* cls, double rate, int y) {
    double w = std::clamp(std::isfinite(rate) ? rate : 0.0, 0.0, 1.0) * bar_w;
    out += "<rect class=\"" + std::string(cls) + "\" x=\"" + std::to_string(label_w) + "\" y=\"" +
           std::to_string(y) + "\" width=\"" + num(w, 1) + "\" height=\"" + std::to_string(bar_h) +
           "\"/><text x=\"" + num(label_w + w + 4, 1) + "\" y=\"" + std::to_string(y + 10) + "\">" +
           pct(rate) + "</text>\n";
  };
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    int y = top + row_h * static_cast<int>(i);
    std::string label = b.label.empty() ? "(none)" : clean(b.label);
    out += "<g><title>" + text(label) + " — " + std::to_string(b.tasks) + " tasks</title><text x=\"0\" y=\"" +
           std::to_string(y + 18) + "\">" + text(truncate_utf8(label, 30)) + "</text>\n";
    bar("base", b.base, y);
    bar("cur", b.cur, y + bar_h + 2);
    out += "</g>\n";
  }
  out += "</svg>\n</section>\n";
}

void list(const char* heading, const char* cls, const std::vector<std::string>& items, std::string& out) {
  if (items.empty()) return;
  out += std::string("<h2>") + heading + "</h2>\n<ul class=\"" + cls + "\">\n";
  for (const std::string& s : items)
    out += "<li>" + text(s) + "</li>\n";
  out += "</ul>\n";
}

std::string suite_line(const report::SuiteInfo& s) {
  std::string out = text(s.name);
  if (!s.version.empty()) out += " " + text(s.version);
  if (!s.sha256.empty()) out += " <span class=\"muted\">(sha256 " + text(s.sha256.substr(0, 12)) + ")</span>";
  return out;
}

std::string report_line(const char* side, const report::Report& r) {
  std::string out = std::string(side) + ": " + suite_line(r.suite) + " · gate " + text(r.gate_version);
  if (!r.finished_at.empty()) out += " · finished " + text(r.finished_at);
  return out;
}

Side side_of(const report::Report& r, std::size_t i) {
  return {&r.tasks[i],
          i < r.task_stats.size() && r.task_stats.size() == r.tasks.size() ? &r.task_stats[i] : nullptr};
}

std::unordered_map<std::string, std::size_t> index_of(const report::Report& r) {
  std::unordered_map<std::string, std::size_t> out;
  for (std::size_t i = 0; i < r.tasks.size(); ++i)
    out.emplace(r.tasks[i].id, i);
  return out;
}

std::vector<TaskEntry> verdict_entries(const compare::Verdict& v, const report::Report& baseline,
                                       const report::Report& current) {
  auto in_base = index_of(baseline), in_cur = index_of(current);
  auto find = [](const auto& index, const report::Report& r, const std::string& id) {
    auto it = index.find(id);
    return it == index.end() ? Side{} : side_of(r, it->second);
  };
  std::vector<TaskEntry> out;
  std::unordered_map<std::string, bool> listed;
  for (const compare::TaskDiff& d : v.tasks) {
    TaskEntry e{d.id, d.scenario, {}, find(in_base, baseline, d.id), find(in_cur, current, d.id), &d};
    if (d.regressed) e.status.push_back("regressed");
    if (d.flipped) e.status.push_back("flipped");
    if (d.fixed) e.status.push_back("fixed");
    if (d.became_flaky) e.status.push_back("flaky");
    if (d.became_stable) e.status.push_back(d.stable_failing ? "stable, failing" : "stable");
    if (e.status.empty()) e.status.push_back("unchanged");
    listed[d.id] = true;
    out.push_back(std::move(e));
  }
  for (std::size_t i = 0; i < current.tasks.size(); ++i) {
    const results::Task& t = current.tasks[i];
    if (listed.count(t.id) || !in_base.count(t.id)) continue;
    out.push_back(
        {t.id, t.scenario, {"unchanged"}, find(in_base, baseline, t.id), side_of(current, i), nullptr});
  }
  for (const std::string& id : v.added) {
    Side s = find(in_cur, current, id);
    out.push_back({id, s.task ? s.task->scenario : "", {"added"}, {}, s, nullptr});
  }
  for (const std::string& id : v.removed) {
    Side s = find(in_base, baseline, id);
    out.push_back({id, s.task ? s.task->scenario : "", {"removed"}, s, {}, nullptr});
  }
  return out;
}

// The confirmation runs: the decision and spend, then each picked task's
// fresh runs, or the runs replay-only could not make.
void confirmation_section(const compare::Verdict& v, std::string& out) {
  if (!v.confirmation) return;
  const compare::Confirmation& c = *v.confirmation;
  out += "<section id=\"gate-confirmation\">\n<h2>Confirmation</h2>\n<p>";
  if (c.state == compare::Confirmation::State::needs_calls) {
    out += "Not run: replay-only cannot make its " + std::to_string(c.planned_calls) +
           " fresh calls. Record them with <code>" + text(c.command) + "</code>.</p>\n<ul>\n";
    for (const auto& m : c.missing)
      out += "<li>" + text(m) + "</li>\n";
    out += "</ul>\n</section>\n";
    return;
  }
  char p[64];
  std::snprintf(p, sizeof p, "%.3g, level %.3g", c.p_value, c.level);
  out += "<strong>" + text(confirmation_outcome(c)) + "</strong>: " + std::to_string(c.tasks.size()) +
         " tasks × " + std::to_string(c.runs) + " fresh runs per side (stratified exact p " + p + "); " +
         std::to_string(c.calls) + " of at most " + std::to_string(c.max_calls) + " calls, " +
         (c.tokens ? std::to_string(*c.tokens) : std::string("n/a")) + " tokens.</p>\n";
  out += "<table>\n<thead><tr><th>Task</th><th>Baseline (fresh)</th><th>Current (fresh)</th><th></th></tr>"
         "</thead>\n<tbody>\n";
  for (const auto& t : c.tasks)
    out += "<tr><td>" + text(t.id) + "</td><td>" + std::to_string(t.baseline_passed) + "/" +
           std::to_string(t.baseline_runs) + "</td><td>" + std::to_string(t.current_passed) + "/" +
           std::to_string(t.current_runs) + "</td><td>" + (t.worse ? "worse" : "not worse") + "</td></tr>\n";
  out += "</tbody>\n</table>\n</section>\n";
}

} // namespace

std::string verdict_html(const compare::Verdict& v, const report::Report& baseline,
                         const report::Report& current, const HtmlOptions& o) {
  std::vector<TaskEntry> tasks = verdict_entries(v, baseline, current);
  std::size_t shortened = 0;
  std::string data = script_safe(data_json(tasks, o, shortened));

  std::string body;
  body.reserve(4096 + tasks.size() * 256);
  body += "<header>\n<h1>gate verdict: " + suite_line(v.current_suite) +
          "</h1>\n<p id=\"gate-headline\" "
          "class=\"headline " +
          std::string(v.passed() ? "pass" : "fail") + "\">" + text(v.headline) + "</p>\n<p class=\"muted\">" +
          report_line("baseline", baseline) + "<br>" + report_line("current", current) + "</p>\n";
  list(v.status == compare::Status::unmeasured ? "What could not be measured" : "Why it failed", "reasons",
       v.reasons, body);
  list("Why it is inconclusive", "warnings", v.inconclusive, body);
  list("Warnings", "warnings", v.warnings, body);
  body += "</header>\n";
  metric_table(v, body);
  confirmation_section(v, body);

  body += "<section id=\"gate-summary\">\n<h2>Tasks at a glance</h2>\n<p>" + std::to_string(v.paired) +
          " paired · " + std::to_string(v.regressed) + " regressed · " + std::to_string(v.fixed) +
          " fixed · " + std::to_string(v.flips) + " flipped · " + std::to_string(v.became_flaky) +
          " became flaky · " + std::to_string(v.became_stable) + " became stable · " +
          std::to_string(v.added.size()) + " added · " + std::to_string(v.removed.size()) +
          " removed</p>\n<p class=\"muted\">" + std::to_string(v.unchanged_inputs) +
          " paired tasks had unchanged inputs (replayed), " + std::to_string(v.affected) +
          " were affected by the change.";
  if (v.max_new_failures) body += " max_new_failures: " + std::to_string(*v.max_new_failures) + ".";
  body += "</p>\n";
  // "0 regressed" under a failed gate reads like a contradiction: say what
  // failed instead (a suite metric, a threshold on new failures, ...).
  if (!v.passed() && v.regressed == 0 && !v.reasons.empty())
    body += "<p class=\"fail-reason\">No task regressed on its own; the gate " +
            std::string(v.status == compare::Status::unmeasured ? "could not measure" : "failed") + ": " +
            text(v.reasons.front()) + (v.reasons.size() > 1 ? " (and the reasons above)" : "") + "</p>\n";
  body += "</section>\n";

  std::vector<Bar> bars;
  for (const compare::ScenarioRow& s : v.scenarios)
    bars.push_back({s.scenario, s.baseline, s.current, s.tasks});
  if (!(bars.empty() || (bars.size() == 1 && bars.front().label.empty()))) chart(bars, body);

  task_section(tasks, shortened, o, body);
  std::string title = std::string("gate: ") + compare::to_string(v.status) + " — " + v.current_suite.name;
  return page(title, body, data);
}

} // namespace gate::render

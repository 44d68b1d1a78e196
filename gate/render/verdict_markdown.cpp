#include <gate/render/verdict_markdown.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <gate/render/escape.hpp>
#include <gate/render/shared.hpp>

#include <gate/util/format.hpp>

namespace gate::render {

namespace {

using compare::MetricRow;
using compare::TaskDiff;
using compare::Verdict;

constexpr std::string_view k_marker = "<!-- gate-verdict -->\n";
constexpr std::size_t k_fold_after = 10;
constexpr std::size_t k_headline_bytes = 1000; // escaped, at most 5× this: fits k_min_verdict_bytes
constexpr std::size_t k_line_bytes = 1000;     // one reason, warning or route line
constexpr std::size_t k_hint_bytes = 200;
constexpr std::size_t k_check_bytes = 100;
constexpr std::size_t k_chart_max = 20; // more bars than this are unreadable; the table has them all
constexpr std::size_t k_chart_name = 30;

std::string signed1(double x) { return signed_fixed(x, 1); }

// What follows a number in `unit`: "12.5 pp", "12.5%", "410 tokens".
std::string suffix(const std::string& unit) {
  if (unit == "%") return "%";
  if (unit.empty()) return "";
  return " " + md_cell(unit);
}

// A measured value: rates and pp with one decimal, tokens and ms whole
// when large enough that a decimal says nothing.
std::string amount(double x, const std::string& unit) {
  if ((unit == "tokens" || unit == "ms") && std::fabs(x) >= 10) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", x);
    return buf + suffix(unit);
  }
  return fixed(x, 1) + suffix(unit);
}

// Appends to a document that must stay within a byte limit. Space for the
// closing truncation line is held back from the start, and a section's
// closing text (`tail`) is counted as soon as the section opens, so that
// stopping at any row still leaves room to close everything.
class Budget {
public:
  Budget(std::size_t max_bytes, std::size_t reserve) : limit_(max_bytes - reserve) {}

  bool full() const { return full_; }

  // Adds `s` if it fits with the open section's tail.
  bool add(std::string_view s) {
    if (!room(s.size() + tail_.size())) return false;
    out_ += s;
    return true;
  }

  // Opens a section: `head` when it, its first row and its tail fit.
  bool open(std::string_view head, std::size_t first_row, std::string tail) {
    if (!room(head.size() + first_row + tail.size())) return false;
    out_ += head;
    tail_ = std::move(tail);
    return true;
  }

  void close() {
    out_ += tail_;
    tail_.clear();
  }

  void skip(std::size_t rows) { omitted_ += rows; }

  std::string finish(const std::string& hint) {
    if (omitted_ > 0) out_ += truncation_line(omitted_, hint);
    return std::move(out_);
  }

  static std::string truncation_line(std::size_t rows, const std::string& hint) {
    return "\n**… truncated — " + std::to_string(rows) + (rows == 1 ? " more row" : " more rows") +
           "; full report in " + hint + "**\n";
  }

private:
  // Once a piece did not fit, nothing after it is added: the document is a
  // prefix of the full one in priority order, not a selection of small rows.
  bool room(std::size_t n) {
    if (!full_ && out_.size() + n <= limit_) return true;
    full_ = true;
    return false;
  }

  std::string out_;
  std::string tail_;
  std::size_t limit_;
  std::size_t omitted_ = 0;
  bool full_ = false;
};

// A titled list of rows (table rows or bullets), folded in <details> when long.
struct Section {
  std::string title; // heading and intro, ending in a blank line
  std::string summary;
  std::string head; // table header lines, or ""
  std::vector<std::string> rows;
  std::size_t fold_after = k_fold_after;
};

void emit(Budget& b, const Section& s) {
  if (s.rows.empty()) return;
  bool fold = s.rows.size() > s.fold_after;
  std::string head = s.title;
  // The summary is built from trusted words and counts only; cells are
  // escaped so no row can contain '<' and close the block early.
  if (fold) head += "<details><summary>" + s.summary + "</summary>\n\n";
  head += s.head;
  if (!b.open(head, s.rows.front().size(), fold ? "\n</details>\n\n" : "\n")) {
    b.skip(s.rows.size());
    return;
  }
  std::size_t shown = 0;
  while (shown < s.rows.size() && b.add(s.rows[shown]))
    ++shown;
  b.skip(s.rows.size() - shown);
  b.close();
}

void piece(Budget& b, const std::string& text) {
  if (!b.add(text)) b.skip(1);
}

std::string bullets_title(const char* title) { return std::string("**") + title + "**\n\n"; }

void header(const Verdict& v, Budget& b) {
  piece(b, "## " + md_cell(truncate_utf8(v.headline, k_headline_bytes)) + "\n\n");
  auto suite = [](const report::SuiteInfo& s) {
    std::string t = s.name.empty() ? "(unnamed)" : md_cell(s.name);
    if (!s.version.empty()) t += ' ' + md_cell(s.version);
    if (!s.sha256.empty()) t += " (sha256 " + md_code_span(s.sha256.substr(0, 12)) + ")";
    return t;
  };
  std::string line = "Suite " + suite(v.current_suite);
  const auto &sb = v.baseline_suite, &sa = v.current_suite;
  if (sb.name != sa.name || sb.version != sa.version || sb.sha256 != sa.sha256)
    line = "Suite " + suite(sb) + " in the baseline, " + suite(sa) + " now";
  char alpha[32];
  std::snprintf(alpha, sizeof alpha, "%g", v.alpha);
  line += " · " + plural(v.paired, "paired task", "paired tasks") + " · α = " + alpha;
  if (v.max_new_failures) line += " · max_new_failures " + std::to_string(*v.max_new_failures);
  piece(b, line + "\n\n");

  const bool unmeasured = v.status == compare::Status::unmeasured;
  Section reasons{bullets_title(unmeasured ? "What could not be measured" : "Why it failed"), "", "", {}};
  for (const auto& r : v.reasons)
    reasons.rows.push_back("- " + md_cell(truncate_utf8(r, k_line_bytes)) + "\n");
  reasons.summary = plural(static_cast<std::int64_t>(reasons.rows.size()), "reason", "reasons");
  emit(b, reasons);
  Section undecided{bullets_title("Why it is inconclusive"), "", "", {}};
  for (const auto& r : v.inconclusive)
    undecided.rows.push_back("- " + md_cell(truncate_utf8(r, k_line_bytes)) + "\n");
  undecided.summary = plural(static_cast<std::int64_t>(undecided.rows.size()), "reason", "reasons");
  emit(b, undecided);
  Section warnings{bullets_title("Warnings"), "", "", {}};
  for (const auto& w : v.warnings)
    warnings.rows.push_back("- ⚠ " + md_cell(truncate_utf8(w, k_line_bytes)) + "\n");
  warnings.summary = plural(static_cast<std::int64_t>(warnings.rows.size()), "warning", "warnings");
  emit(b, warnings);
}

std::string status(const MetricRow& r) {
  if (!r.available) return "➖ n/a";
  if (r.failed) return "❌ fail";
  if (r.inconclusive) return "⚠ inconclusive (too few changed tasks)";
  if (!r.threshold) return "➖ not gated";
  if (!r.gated) return "➖ not gated (no test fits)";
  if (r.crossed) return "⚠ crossed, not significant";
  return "✅ pass";
}

std::string p_cell(const MetricRow& r) {
  if (r.p_adjusted) return p_value(*r.p_adjusted);
  if (r.p_value) return p_value(*r.p_value) + " (unadjusted)";
  return "—";
}

void metrics(const Verdict& v, Budget& b) {
  char alpha[32];
  std::snprintf(alpha, sizeof alpha, "%g", v.alpha);
  Section s;
  s.title = "### Metrics\n\nA metric fails only when its change reaches its threshold **and** is significant "
            "(p adjusted by Holm over the gated metrics, below α = " +
            std::string(alpha) +
            "). ⚠ crossed, not significant: the change reached the threshold but is within noise.\n\n";
  s.summary = plural(static_cast<std::int64_t>(v.metrics.size()), "metric", "metrics");
  s.head = "| Metric | Baseline | Current | Δ | 95% interval of Δ | Threshold | p (adj.) | Noise floor | "
           "Status |\n|---|---:|---:|---:|---|---:|---:|---:|---|\n";
  for (const MetricRow& r : v.metrics) {
    if (!r.available) {
      const std::string na = "n/a (" + md_cell(r.unavailable) + ")";
      s.rows.push_back(md_row({md_cell(r.name), na, "n/a", "n/a", "—", "—", "—", "—", status(r)}));
      continue;
    }
    std::string u = suffix(r.unit);
    std::string threshold = "—";
    if (r.threshold) threshold = signed1(r.higher_is_better ? -*r.threshold : *r.threshold) + u;
    std::string interval = signed1(r.delta_interval.low) + " to " + signed1(r.delta_interval.high) + u;
    std::string floor = r.noise_floor ? "±" + fixed(*r.noise_floor, 1) + u : "—";
    std::string delta = signed1(r.delta) + u;
    if (r.scope_tasks != r.tasks)
      delta += " on " + std::to_string(r.scope_tasks) + " affected (" + signed1(r.suite_delta) + u +
               " on all " + std::to_string(r.tasks) + ")";
    s.rows.push_back(
        md_row({md_cell(r.name), amount(r.baseline, r.value_unit), amount(r.current, r.value_unit), delta,
                interval, threshold, p_cell(r), floor, status(r)}));
  }
  emit(b, s);

  Section tests{"", "How each metric was tested", "", {}, 0};
  for (const MetricRow& r : v.metrics)
    if (!r.test.empty())
      tests.rows.push_back("- " + md_cell(r.name) + ": " + md_cell(truncate_utf8(r.test, k_line_bytes)) +
                           "\n");
  emit(b, tests);
}

// The cost line (METRICS.md "Cost"): information beside the metrics, not
// a gated row.
void cost(const Verdict& v, Budget& b) {
  if (!v.cost) return;
  const auto usd = [](const compare::CostSide& side, const std::optional<double>& x) {
    if (!side.priced) return std::string("n/a (no pricing)");
    return x ? usd_text(*x) : std::string("n/a");
  };
  const compare::Cost& c = *v.cost;
  piece(b, "**Cost (not gated)**: paid " + usd(c.baseline, c.baseline.paid) + " → " +
               usd(c.current, c.current.paid) + "; replayed runs, as recorded " +
               usd(c.baseline, c.baseline.cached) + " → " + usd(c.current, c.current.cached) + "\n\n");
}

// Each listed task appears in exactly one section, the first that applies;
// its other changes are named in the Note column.
enum class Kind { regressed, flaky, fixed, stable, flipped };

Kind kind_of(const TaskDiff& t) {
  if (t.regressed) return Kind::regressed;
  if (t.became_flaky) return Kind::flaky;
  if (t.fixed) return Kind::fixed;
  if (t.became_stable) return Kind::stable;
  return Kind::flipped;
}

std::string note(const TaskDiff& t, Kind k) {
  std::vector<std::string> parts;
  if (t.grader_change) parts.push_back("check or grader change");
  if (t.flipped && k != Kind::flipped) parts.push_back("flipped");
  if (t.became_flaky && k != Kind::flaky) parts.push_back("became flaky");
  if (t.fixed && k != Kind::fixed) parts.push_back("fixed");
  if (t.became_stable && k != Kind::stable)
    parts.push_back(t.stable_failing ? "became stable, failing" : "became stable");
  if (t.stable_failing && k == Kind::stable) parts.push_back("stable, failing: every run fails now");
  if (t.rerecorded) parts.push_back("re-recorded since the baseline");
  if (t.inputs_unchanged && !t.grader_change) parts.push_back("inputs unchanged");
  std::string s;
  for (const auto& p : parts)
    s += (s.empty() ? "" : " · ") + p;
  return s.empty() ? "—" : s;
}

std::string task_row(const TaskDiff& t, Kind k) {
  std::string checks;
  for (const auto& c : t.failing_checks)
    checks += (checks.empty() ? "" : "; ") + md_cell(truncate_utf8(c, k_check_bytes));
  std::string answer = t.answer_excerpt.empty()
                           ? "—"
                           : md_code_span(truncate_utf8(t.answer_excerpt, k_md_excerpt_bytes), true);
  // The question beside the answer, for regressed and flipped tasks (the
  // ones a reviewer must judge); "—" for the others and when unknown.
  const bool asks = k == Kind::regressed || t.flipped;
  std::string input = !asks || t.input.empty()
                          ? "—"
                          : md_code_span(truncate_utf8(question_excerpt(t.input), k_md_excerpt_bytes), true);
  std::string passed = std::to_string(t.c_b) + "/" + std::to_string(t.n_b) + " → " + std::to_string(t.c_a) +
                       "/" + std::to_string(t.n_a);
  std::string divergence = t.first_divergence ? "step " + std::to_string(*t.first_divergence) : "—";
  return md_row({md_cell(truncate_utf8(t.id, k_md_id_bytes)),
                 md_cell(truncate_utf8(t.scenario, k_md_id_bytes)), passed, p_value(t.q_value),
                 checks.empty() ? "—" : checks, input, answer, divergence, note(t, k)});
}

void tasks(const Verdict& v, Budget& b) {
  struct Spec {
    Kind kind;
    const char* title;
    const char* intro;
    const char* noun; // for the <details> summary
  };
  static const Spec k_specs[] = {
      {Kind::regressed, "Regressed tasks",
       "Lower pass rate with one-sided Fisher q below α (Benjamini–Hochberg over all tasks), or an outcome "
       "change on unchanged, replayed inputs: a check or grader change.",
       "regressed tasks"},
      {Kind::flaky, "Newly flaky", "Outcome-consistent in the baseline, mixed outcomes now.",
       "newly flaky tasks"},
      {Kind::fixed, "Fixed", "Higher pass rate, significant, or changed on replayed inputs.", "fixed tasks"},
      {Kind::stable, "Became stable", "Mixed outcomes in the baseline, outcome-consistent now.",
       "tasks that became stable"},
      {Kind::flipped, "Flipped (not significant on their own)",
       "Passed every run in the baseline, not now. On its own a flip is not evidence: at k = 3 a task "
       "with a true pass rate of 0.5 goes from 3/3 to 0/3 by chance once in 64 comparisons.",
       "flipped tasks"},
  };
  for (const Spec& spec : k_specs) {
    Section s;
    for (const TaskDiff& t : v.tasks)
      if (kind_of(t) == spec.kind) s.rows.push_back(task_row(t, spec.kind));
    auto n = static_cast<std::int64_t>(s.rows.size());
    s.title = std::string("### ") + spec.title + " (" + std::to_string(n) + ")\n\n" + spec.intro + "\n\n";
    s.summary = std::to_string(n) + " " + spec.noun;
    s.head = "| Task | Scenario | Passed (baseline → current) | q (BH) | Failing checks | Input (excerpt) | "
             "Answer (excerpt) | First divergence | Note |\n|---|---|---|---:|---|---|---|---|---|\n";
    emit(b, s);
  }
}

void id_list(const char* title, const std::vector<std::string>& ids, Budget& b) {
  Section s;
  auto n = static_cast<std::int64_t>(ids.size());
  s.title =
      std::string("### ") + title + " (" + std::to_string(n) + ")\n\nLeft out of the paired numbers.\n\n";
  s.summary = plural(n, "task", "tasks");
  for (const auto& id : ids)
    s.rows.push_back("- " + md_code_span(truncate_utf8(id, k_md_id_bytes)) + "\n");
  emit(b, s);
}

// Added tasks with how each does now: a new task is tested, not only named.
void added_list(const Verdict& v, Budget& b) {
  Section s;
  auto n = static_cast<std::int64_t>(v.added.size());
  s.title = "### Added tasks (" + std::to_string(n) + ")\n\nLeft out of the paired numbers.\n\n";
  s.summary = plural(n, "task", "tasks");
  for (std::size_t i = 0; i < v.added.size(); ++i) {
    std::string how = "no measured run";
    if (i < v.added_runs.size() && v.added_runs[i].runs > 0)
      how = std::to_string(v.added_runs[i].passed) + "/" + std::to_string(v.added_runs[i].runs) +
            " runs passed";
    s.rows.push_back("- " + md_code_span(truncate_utf8(v.added[i], k_md_id_bytes)) + ": " + how + "\n");
  }
  emit(b, s);
}

// Mermaid labels: [A-Za-z0-9 _-] only, each other character one '_', so a
// name cannot end the quoted string or the fence.
std::string chart_label(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size() && out.size() < k_chart_name; ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    if ((c & 0xc0) == 0x80) continue; // UTF-8 continuation: its lead byte already gave a '_'
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ' ||
              c == '_' || c == '-';
    out += ok ? static_cast<char>(c) : '_';
  }
  return out.empty() ? "none" : out;
}

void scenarios(const Verdict& v, Budget& b) {
  const auto& rows = v.scenarios;
  // A single unnamed scenario says nothing the metric table does not.
  if (rows.empty() || (rows.size() == 1 && rows.front().scenario.empty())) return;
  Section s;
  s.title = "### Success by scenario\n\n";
  if (rows.size() >= 2 && rows.size() <= k_chart_max) {
    std::string names, base, cur;
    for (const auto& r : rows) {
      const char* sep = names.empty() ? "" : ", ";
      names += sep + ("\"" + chart_label(r.scenario) + "\"");
      base += sep + fixed(100 * r.baseline, 1);
      cur += sep + fixed(100 * r.current, 1);
    }
    // Two bar series would be drawn on top of each other (Mermaid 11 has no
    // grouped bars), hiding the lower one: the baseline is bars and the
    // current run a line over them, so a rise shows as the line above its
    // bar. Named plots get a legend where the renderer draws one
    // (showLegend); the title and the caption say it where it does not.
    s.title += "```mermaid\n%%{init: {\"xyChart\": {\"showLegend\": true}, \"themeVariables\": {\"xyChart\": "
               "{\"plotColorPalette\": \"#9ca3af, #2563eb\"}}}}%%\nxychart-beta\n"
               "  title \"Success rate by scenario (%): bars baseline, line current\"\n  x-axis [" +
               names + "]\n  y-axis \"success %\" 0 --> 100\n  bar \"baseline\" [" + base +
               "]\n  line \"current\" [" + cur +
               "]\n```\n\nGrey bars: the baseline; blue line: the current run.\n\n";
  }
  s.summary = plural(static_cast<std::int64_t>(rows.size()), "scenario", "scenarios");
  s.head = "| Scenario | Paired tasks | Baseline | Current |\n|---|---:|---:|---:|\n";
  for (const auto& r : rows)
    s.rows.push_back(
        md_row({r.scenario.empty() ? "(none)" : md_cell(truncate_utf8(r.scenario, k_md_id_bytes)),
                std::to_string(r.tasks), fixed(100 * r.baseline, 1) + "%", fixed(100 * r.current, 1) + "%"}));
  emit(b, s);
}

// What the confirmation runs did: the decision, the spend, then each task's
// fresh runs (or, replay-only, the runs it needs and how to record them).
void confirmation(const Verdict& v, Budget& b) {
  if (!v.confirmation) return;
  const compare::Confirmation& c = *v.confirmation;
  Section s{"### Confirmation\n\n", "", "", {}};
  using State = compare::Confirmation::State;
  if (c.state == State::needs_calls) {
    s.title += "Not run: replay-only cannot make the " + std::to_string(c.planned_calls) +
               " fresh calls it needs. Record them with `" + md_cell(truncate_utf8(c.command, k_line_bytes)) +
               "`.\n\n";
    for (const auto& m : c.missing)
      s.rows.push_back("- " + md_cell(truncate_utf8(m, k_line_bytes)) + "\n");
    s.summary = plural(static_cast<std::int64_t>(s.rows.size()), "run needed", "runs needed");
    emit(b, s);
    return;
  }
  char p[64];
  std::snprintf(p, sizeof p, "%.3g, level %.3g", c.p_value, c.level);
  s.title +=
      "**" + md_cell(truncate_utf8(confirmation_outcome(c), k_line_bytes)) +
      "**: " + std::to_string(c.tasks.size()) + " tasks × " + std::to_string(c.runs) +
      " fresh runs per side (stratified exact p " + p + "); " + std::to_string(c.calls) + " of at most " +
      std::to_string(c.max_calls) + " calls, " + (c.tokens ? std::to_string(*c.tokens) : std::string("n/a")) +
      " tokens" +
      (c.left_out.empty() ? "" : "; " + std::to_string(c.left_out.size()) + " tasks left out of the budget") +
      ".\n\n";
  s.head = "| Task | Baseline (fresh) | Current (fresh) | |\n|---|---:|---:|---|\n";
  for (const auto& t : c.tasks)
    s.rows.push_back(md_row({md_cell(truncate_utf8(t.id, k_md_id_bytes)),
                             std::to_string(t.baseline_passed) + "/" + std::to_string(t.baseline_runs),
                             std::to_string(t.current_passed) + "/" + std::to_string(t.current_runs),
                             t.worse ? "worse" : "not worse"}));
  s.summary = plural(static_cast<std::int64_t>(s.rows.size()), "task", "tasks");
  emit(b, s);
}

} // namespace

std::string verdict_markdown(const Verdict& v, const VerdictMarkdownOptions& o) {
  if (o.max_bytes < k_min_verdict_bytes)
    throw std::invalid_argument("verdict_markdown: max_bytes must be at least " +
                                std::to_string(k_min_verdict_bytes));
  std::string hint = md_cell(truncate_utf8(o.full_report_hint, k_hint_bytes));
  // The widest truncation line: any row count fits in 20 digits.
  std::size_t reserve = Budget::truncation_line(std::numeric_limits<std::size_t>::max(), hint).size();
  Budget b(o.max_bytes, reserve);
  b.add(k_marker);
  header(v, b);
  metrics(v, b);
  cost(v, b);
  confirmation(v, b);
  tasks(v, b);
  added_list(v, b);
  id_list("Removed tasks", v.removed, b);
  id_list("Unmeasured tasks (every run errored on a side)", v.unmeasured, b);
  if (!v.fingerprints_known)
    piece(b,
          "**" + plural(v.paired, "paired task", "paired tasks") +
              ", fingerprints unknown**: the runs carry no request fingerprints, so every task is treated as "
              "affected\n\n");
  else
    piece(b, "**" + plural(v.unchanged_inputs, "task", "tasks") + " unchanged, " +
                 std::to_string(v.affected) + " affected by this change** (of " + std::to_string(v.paired) +
                 " paired and measured; unchanged: every run sent the baseline's request and got its answer" +
                 (v.rerecorded > 0 ? "; " + std::to_string(v.rerecorded) + " re-recorded since the baseline"
                                   : "") +
                 ")\n\n");
  scenarios(v, b);
  Section routes{"### Route differences\n\n", "", "", {}};
  for (const auto& line : v.route_diff)
    routes.rows.push_back("- " + md_cell(truncate_utf8(line, k_line_bytes)) + "\n");
  routes.summary = plural(static_cast<std::int64_t>(routes.rows.size()), "difference", "differences");
  emit(b, routes);
  return b.finish(hint);
}

} // namespace gate::render

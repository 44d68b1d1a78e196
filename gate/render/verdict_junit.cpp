#include <gate/render/verdict_junit.hpp>

#include <cmath>
#include <cstdio>

#include <gate/render/escape.hpp>
#include <gate/render/shared.hpp>

#include <gate/util/format.hpp>

namespace gate::render {

namespace {

using compare::MetricRow;
using compare::TaskDiff;
using compare::Verdict;

std::string number(double x) { return fixed(x, 1); }
std::string signed_ascii(double x) { return signed_fixed(x, 1, true); }

// Everything the row holds, one fact per line, for the failure body.
std::string metric_lines(const MetricRow& r) {
  if (!r.available) return "n/a: " + r.unavailable + "\n";
  std::string u = unit_suffix(r.unit), vu = unit_suffix(r.value_unit);
  std::string s = "baseline " + number(r.baseline) + vu + ", current " + number(r.current) + vu + "\n";
  s += "delta " + signed_ascii(r.delta) + u + " (95% interval " + signed_ascii(r.delta_interval.low) +
       " to " + signed_ascii(r.delta_interval.high) + u + ")\n";
  if (r.threshold)
    s += "threshold " + signed_ascii(r.higher_is_better ? -*r.threshold : *r.threshold) + u + "\n";
  else
    s += "not gated: no threshold\n";
  if (r.p_value) s += "p " + p_value(*r.p_value, "<") + " (one-sided, worse)\n";
  if (r.p_adjusted) s += "p adjusted (Holm) " + p_value(*r.p_adjusted, "<") + "\n";
  if (r.noise_floor) s += "noise floor " + number(*r.noise_floor) + u + "\n";
  if (!r.test.empty()) s += "test: " + r.test + "\n";
  return s;
}

std::string metric_case(const MetricRow& r) {
  std::string out = "    <testcase classname=\"metrics\" name=\"" + xml_escape("metric: " + r.name) + "\"";
  std::string body = xml_text(metric_lines(r));
  if (r.failed) {
    std::string message = r.name + " " + signed_ascii(r.delta) + unit_suffix(r.unit) +
                          " crossed its threshold and is significant";
    return out + ">\n      <failure type=\"metric\" message=\"" + xml_escape(message) + "\">" + body +
           "</failure>\n    </testcase>\n";
  }
  return out + ">\n      <system-out>" + body + "</system-out>\n    </testcase>\n";
}

std::string passed_text(const TaskDiff& t) {
  return std::to_string(t.c_b) + "/" + std::to_string(t.n_b) + " -> " + std::to_string(t.c_a) + "/" +
         std::to_string(t.n_a) + " runs passed";
}

std::string task_lines(const TaskDiff& t) {
  std::string s = "baseline -> current: " + passed_text(t) + "\n";
  std::string changes;
  auto add = [&](bool on, const char* what) {
    if (on) changes += (changes.empty() ? "" : ", ") + std::string(what);
  };
  add(t.regressed, "regressed");
  add(t.flipped, "flipped");
  add(t.became_flaky, "became flaky");
  add(t.fixed, "fixed");
  add(t.became_stable, t.stable_failing ? "became stable, failing" : "became stable");
  add(t.grader_change, "check or grader change (inputs unchanged)");
  s += "changes: " + changes + "\n";
  s += "p " + p_value(t.p_value, "<") + ", q (Benjamini-Hochberg) " + p_value(t.q_value, "<") + "\n";
  for (const auto& c : t.failing_checks)
    s += "failing check: " + c + "\n";
  if (!t.input.empty())
    s += "input: " + truncate_utf8(question_excerpt(t.input), k_junit_excerpt_bytes) + "\n";
  if (!t.answer_excerpt.empty())
    s += "answer: " + truncate_utf8(t.answer_excerpt, k_junit_excerpt_bytes) + "\n";
  if (t.first_divergence) s += "first divergence at step " + std::to_string(*t.first_divergence) + "\n";
  return s;
}

std::string task_case(const TaskDiff& t) {
  std::string out = "    <testcase classname=\"" + xml_escape(t.scenario.empty() ? "tasks" : t.scenario) +
                    "\" name=\"" + xml_escape(t.id) + "\"";
  std::string body = xml_text(task_lines(t));
  if (t.regressed) {
    std::string message = "regressed: " + passed_text(t);
    if (t.grader_change) message += " (check or grader change)";
    return out + ">\n      <failure type=\"regressed\" message=\"" + xml_escape(message) + "\">" + body +
           "</failure>\n    </testcase>\n";
  }
  return out + ">\n      <system-out>" + body + "</system-out>\n    </testcase>\n";
}

// The confirmation runs as one test case: a failure when they confirmed a
// regression (the gate failed on them alone, so a reader counting failures
// must see it), skipped when replay-only could not make them.
std::string confirmation_case(const compare::Confirmation& c) {
  using State = compare::Confirmation::State;
  std::string body;
  for (const auto& t : c.tasks)
    body += t.id + ": baseline " + std::to_string(t.baseline_passed) + "/" + std::to_string(t.baseline_runs) +
            ", current " + std::to_string(t.current_passed) + "/" + std::to_string(t.current_runs) +
            (t.worse ? " (worse)" : "") + "\n";
  body += "p " + p_value(c.p_value, "<") + ", level " + p_value(c.level, "<") + "; " +
          std::to_string(c.calls) + " of at most " + std::to_string(c.max_calls) + " calls\n";
  std::string out = "    <testcase classname=\"gate\" name=\"confirmation\">\n      ";
  if (c.state == State::confirmed)
    out += "<failure type=\"confirmed\" message=\"fresh runs on both sides confirm the regression\">" +
           xml_text(body) + "</failure>";
  else if (c.state == State::needs_calls)
    out += "<skipped message=\"" + xml_escape("not run: replay-only; record with " + c.command) + "\"/>";
  else if (c.state == State::unmeasured)
    out += "<error type=\"unmeasured\" message=\"" + xml_escape(confirmation_outcome(c)) + "\">" +
           xml_text(body) + "</error>";
  else if (c.state == State::incomplete)
    out += "<skipped message=\"" + xml_escape(confirmation_outcome(c)) + "\"/>";
  else
    out += "<system-out>" + xml_text("dismissed as noise\n" + body) + "</system-out>";
  return out + "\n    </testcase>\n";
}

// The verdict as a test case (see verdict_junit). A failure lists every
// rule that failed it; an undecided one names what would decide it.
std::string decision_case(const Verdict& v) {
  using State = compare::Confirmation::State;
  std::string out = "    <testcase classname=\"gate\" name=\"decision\">\n      ";
  auto lines = [](const std::vector<std::string>& xs) {
    std::string s;
    for (const auto& x : xs)
      s += x + "\n";
    return s;
  };
  std::string decide;
  if (v.confirmation && v.confirmation->state == State::needs_calls)
    decide = "; decide it with fresh runs: " + v.confirmation->command;
  switch (v.status) {
  case compare::Status::passed: out += "<system-out>" + xml_text(v.headline + "\n") + "</system-out>"; break;
  case compare::Status::failed:
    out += "<failure type=\"failed\" message=\"" + xml_escape(v.headline) + "\">" +
           xml_text(lines(v.reasons)) + "</failure>";
    break;
  case compare::Status::inconclusive: {
    const std::string first = (v.inconclusive.empty() ? v.headline : v.inconclusive.front()) + decide;
    if (v.on_inconclusive == "fail")
      out += "<failure type=\"inconclusive\" message=\"" +
             xml_escape("inconclusive (on_inconclusive: fail): " + first) + "\">" +
             xml_text(lines(v.inconclusive)) + "</failure>";
    else
      out += "<skipped message=\"" + xml_escape(first) + "\"/>";
    break;
  }
  case compare::Status::unmeasured:
    out += "<error type=\"unmeasured\" message=\"" +
           xml_escape(v.reasons.empty() ? v.headline : v.reasons.front()) + "\">" +
           xml_text(lines(v.reasons)) + "</error>";
    break;
  }
  return out + "\n    </testcase>\n";
}

} // namespace

std::string verdict_junit(const Verdict& v) {
  std::int64_t failures = 0;
  for (const MetricRow& r : v.metrics)
    failures += r.failed;
  for (const TaskDiff& t : v.tasks)
    failures += t.regressed;
  const bool confirmed = v.confirmation && v.confirmation->state == compare::Confirmation::State::confirmed;
  // Confirmation runs that were not made, or errored, decided nothing.
  const bool unconfirmed =
      v.confirmation && (v.confirmation->state == compare::Confirmation::State::needs_calls ||
                         v.confirmation->state == compare::Confirmation::State::incomplete);
  failures += confirmed;
  // The verdict itself is one more test case, "decision", for every status:
  // a failed verdict is a failure whatever rule failed it (a rule with no
  // row or task of its own, such as max_new_failures, too), and a JUnit
  // reader never sees "all passed" for a verdict that could not measure or
  // decide.
  const bool unmeasured = v.status == compare::Status::unmeasured;
  const bool inconclusive = v.status == compare::Status::inconclusive;
  const bool decision_fails =
      v.status == compare::Status::failed || (inconclusive && v.on_inconclusive == "fail");
  failures += decision_fails;
  const bool confirmation_unmeasured =
      v.confirmation && v.confirmation->state == compare::Confirmation::State::unmeasured;
  const std::size_t tests = v.metrics.size() + v.tasks.size() + 1 + (v.confirmation ? 1 : 0);
  std::string counts = " tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
                       "\" errors=\"" +
                       std::to_string((unmeasured ? 1 : 0) + (confirmation_unmeasured ? 1 : 0)) + "\"";
  std::string out;
  out.reserve(2048 + v.tasks.size() * 512);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"gate\"" + counts + ">\n";
  out += "  <testsuite name=\"gate compare\"" + counts + " skipped=\"" +
         std::to_string((inconclusive && !decision_fails ? 1 : 0) + (unconfirmed ? 1 : 0)) +
         "\">\n    <properties>\n";
  auto property = [&](const char* name, const std::string& value) {
    out += "      <property name=\"" + std::string(name) + "\" value=\"" + xml_escape(value) + "\"/>\n";
  };
  property("verdict", compare::to_string(v.status));
  property("headline", v.headline);
  property("baseline_suite", v.baseline_suite.name + " " + v.baseline_suite.version);
  property("current_suite", v.current_suite.name + " " + v.current_suite.version);
  property("paired_tasks", std::to_string(v.paired));
  out += "    </properties>\n";
  out += decision_case(v);
  for (const MetricRow& r : v.metrics)
    out += metric_case(r);
  for (const TaskDiff& t : v.tasks)
    out += task_case(t);
  if (v.confirmation) out += confirmation_case(*v.confirmation);
  if (!v.reasons.empty() || !v.warnings.empty()) {
    std::string text;
    for (const auto& r : v.reasons)
      text += "reason: " + r + "\n";
    for (const auto& w : v.warnings)
      text += "warning: " + w + "\n";
    out += "    <system-err>" + xml_text(text) + "</system-err>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

} // namespace gate::render

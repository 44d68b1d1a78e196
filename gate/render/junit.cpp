#include <gate/render/junit.hpp>

#include <cstdio>
#include <map>
#include <stdexcept>

#include <gate/render/escape.hpp>
#include <gate/render/shared.hpp>

namespace gate::render {

namespace {

std::string seconds(double ms) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f", ms / 1000.0);
  return buf;
}

double task_ms(const results::Task& t) {
  double ms = 0;
  for (const auto& run : t.runs)
    ms += run.latency_ms;
  return ms;
}

// The bucket most runs errored in; ties go to the name that sorts first so
// the output is deterministic.
std::string main_bucket(const results::Task& t) {
  std::map<std::string, int> counts;
  for (const auto& run : t.runs)
    if (run.errored()) ++counts[run.error];
  std::string best;
  int most = 0;
  for (const auto& [bucket, n] : counts)
    if (n > most) {
      best = bucket;
      most = n;
    }
  return best;
}

// What the task asked (its question, as the Markdown report shows it),
// then one line per run that did not pass: its failing checks or its error.
std::string run_lines(const results::Task& t) {
  std::string text;
  if (!t.input.empty())
    text += "input: " + truncate_utf8(question_excerpt(t.input), k_junit_excerpt_bytes) + '\n';
  for (const auto& run : t.runs) {
    if (run.passed) continue;
    std::string prefix = "run " + std::to_string(run.index) + ": ";
    if (run.errored()) {
      text += prefix + "error " + run.error;
      if (!run.error_message.empty()) text += ": " + run.error_message;
      text += '\n';
      continue;
    }
    bool any = false;
    for (const auto& c : run.checks) {
      if (c.passed) continue;
      any = true;
      text += prefix + "check \"" + c.label + "\" failed";
      if (!c.detail.empty()) text += ": " + c.detail;
      text += '\n';
    }
    if (!any) text += prefix + "failed\n";
    text += "  answer: " + truncate_utf8(run.answer, k_junit_excerpt_bytes) + '\n';
  }
  return text;
}

} // namespace

std::string report_junit(const report::Report& r) {
  if (r.task_stats.size() != r.tasks.size())
    throw std::logic_error("render: task_stats is not parallel to tasks; call report::compute() first");
  std::int64_t failures = 0, errors = 0;
  double total_ms = 0;
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const auto& s = r.task_stats[i];
    if (s.n == 0 && s.errored > 0)
      ++errors;
    else if (s.c < s.n)
      ++failures;
    total_ms += task_ms(r.tasks[i]);
  }
  std::string counts = " tests=\"" + std::to_string(r.tasks.size()) + "\" failures=\"" +
                       std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\"";
  std::string suite = xml_escape(r.suite.name.empty() ? "gate" : r.suite.name);

  std::string out;
  out.reserve(1024 + r.tasks.size() * 256);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"gate\"" + counts + " time=\"" + seconds(total_ms) + "\">\n";
  out += "  <testsuite name=\"" + suite + "\"" + counts + " skipped=\"0\" time=\"" + seconds(total_ms) + "\"";
  if (!r.started_at.empty()) out += " timestamp=\"" + xml_escape(r.started_at) + "\"";
  out += ">\n    <properties>\n";
  auto property = [&](const char* name, const std::string& value) {
    out += "      <property name=\"" + std::string(name) + "\" value=\"" + xml_escape(value) + "\"/>\n";
  };
  property("gate_version", r.gate_version);
  property("suite_version", r.suite.version);
  property("suite_sha256", r.suite.sha256);
  property("complete", r.complete ? "true" : "false");
  if (!r.complete) property("incomplete_reason", r.incomplete_reason);
  out += "    </properties>\n";

  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const auto& t = r.tasks[i];
    const auto& s = r.task_stats[i];
    out += "    <testcase classname=\"" + (t.scenario.empty() ? suite : xml_escape(t.scenario)) +
           "\" name=\"" + xml_escape(t.id) + "\" time=\"" + seconds(task_ms(t)) + "\"";
    std::string errored_note = s.errored > 0 ? " (" + std::to_string(s.errored) + " errored)" : std::string();
    if (s.n == 0 && s.errored > 0) {
      out +=
          ">\n      <error type=\"" + xml_escape(main_bucket(t)) + "\" message=\"" +
          xml_escape(std::to_string(s.errored) + " of " + std::to_string(t.runs.size()) + " runs errored") +
          "\">" + xml_text(run_lines(t)) + "</error>\n    </testcase>\n";
    } else if (s.c < s.n) {
      out += ">\n      <failure type=\"failed\" message=\"" +
             xml_escape(std::to_string(s.c) + "/" + std::to_string(s.n) + " runs passed" + errored_note) +
             "\">" + xml_text(run_lines(t)) + "</failure>\n    </testcase>\n";
    } else if (s.errored > 0) {
      // All runs that ran passed; the errored ones are infrastructure, not
      // the agent, but a reader of the CI view should still see them.
      out += ">\n      <system-out>" + xml_text(run_lines(t)) + "</system-out>\n    </testcase>\n";
    } else {
      out += "/>\n";
    }
  }
  if (!r.complete)
    out += "    <system-err>" +
           xml_text("Incomplete report: " + r.incomplete_reason +
                    "; the numbers cover only the runs that finished.") +
           "</system-err>\n";
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

} // namespace gate::render

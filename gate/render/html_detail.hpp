#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <gate/compare/compare.hpp>
#include <gate/metrics/summary.hpp>
#include <gate/render/html.hpp>
#include <gate/results/results.hpp>

// Internal to the HTML renderer: html.cpp lays out the sections,
// html_data.cpp writes the embedded JSON, html_page.cpp the page around them
// (styles, scripts, CSP, task table). Not part of the public API.
namespace gate::render::html_detail {

// Redacted, valid UTF-8, bidirectional controls replaced by U+FFFD (they
// could reorder the text around them): what any untrusted string becomes
// before it is shown.
std::string clean(std::string_view text);
// clean(), then escaped for HTML text and attribute values.
std::string text(std::string_view s);

// One side of a task: its runs in one report and the counts from that
// report's task stats.
struct Side {
  const results::Task* task = nullptr;       // null: the task is not in this report
  const metrics::TaskStats* stats = nullptr; // null when the report holds no stats for it
};

// One row of the task table and one entry of the data blob.
struct TaskEntry {
  std::string id, scenario;
  std::vector<std::string> status; // first is the row's main status; never empty
  Side base, cur;                  // a report alone fills `cur` only
  const compare::TaskDiff* diff = nullptr;
};

// The statuses a filter can choose, in display order.
inline const std::vector<std::string>& verdict_statuses() {
  static const std::vector<std::string> s = {"regressed", "flipped",   "fixed", "flaky",
                                             "stable",    "unchanged", "added", "removed"};
  return s;
}

// The gate-data blob, as JSON text not yet made safe for a <script>:
//   {"short_answer_bytes": N, "answers_shortened": N,
//    "answers": [string, ...],            distinct answers, referenced by index
//    "tasks": [{"id", "scenario", "status": [string, ...],
//               regressed, flipped, failed and flaky tasks only:
//               "input": string, "input_truncated": true (only when cut),
//               "baseline_input": string (only when the baseline's differs),
//               "diff": null | {"p", "q", "inputs_unchanged", "grader_change",
//                               "first_divergence": null | N},
//               "b": null | side, "a": null | side}]}
//   side = {"c": N | null, "n": N | null, "errored": N | null, "runs": [run, ...]}
//   run  = {"index", "passed", "checks": [{"label", "passed", "detail"?}],
//           "answer": index, "prompt_tokens", "completion_tokens",
//           "latency_ms", "latency" (the same for people: "85 µs"), and only
//           when not their default:
//           "error" (""), "error_message" (""), "answer_truncated" (false),
//           "answer_shortened" (false), "usage_known" (true),
//           "cache_hit" (false), "attempts" (1), "tools" ([], tool names)}
// `shortened` receives the number of answers cut to short_answer_bytes.
std::string data_json(const std::vector<TaskEntry>& tasks, const HtmlOptions& o, std::size_t& shortened);

// `json` with < > & U+2028 U+2029 written as \u escapes: these occur only
// inside JSON strings, where the escape means the same character, and
// without them no "</script>" or "<!--" can end or confuse the data block.
std::string script_safe(std::string_view json);

// The task table section (search box, status filter, rows) and the empty
// detail panel.
void task_section(const std::vector<TaskEntry>& tasks, std::size_t shortened, const HtmlOptions& o,
                  std::string& out);

// The whole document around `body`; `data` is the script-safe JSON blob.
std::string page(std::string_view title, std::string_view body, std::string_view data);

} // namespace gate::render::html_detail

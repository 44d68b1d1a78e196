#pragma once

#include <cstddef>
#include <string>

#include <gate/compare/compare.hpp>

namespace gate::render {

struct VerdictMarkdownOptions {
  // 65,536 for a PR comment (GitHub's comment limit), 1 MiB for a job step
  // summary. Must be at least k_min_verdict_bytes.
  std::size_t max_bytes = 65'536;
  // Where the reader finds what a truncated document left out, e.g.
  // "artifact gate-report / verdict.html".
  std::string full_report_hint = "the gate-report artifact";
};

inline constexpr std::size_t k_min_verdict_bytes = 8192;

// The verdict for people (PR comment, step summary). Layout, in priority
// order: the marker line "<!-- gate-verdict -->" (the PR commenter finds its
// own comment by it), the headline, reasons, warnings, the metric table,
// the task sections (regressed, newly flaky, fixed, became stable, flipped),
// added and removed tasks, the unchanged/affected count, success by scenario
// (Mermaid chart and table), route differences. Sections of more than 10
// rows are folded in <details>. When the next row would not fit in
// max_bytes, everything after it is left out and counted in a closing
// "… truncated — N more rows; full report in <hint>" line: the result never
// exceeds max_bytes and every <details> it opens is closed. All untrusted
// text is escaped (escape.hpp). Formats what the Verdict holds; computes no
// metric. Throws std::invalid_argument when max_bytes < k_min_verdict_bytes.
std::string verdict_markdown(const compare::Verdict& v, const VerdictMarkdownOptions& o = {});

} // namespace gate::render

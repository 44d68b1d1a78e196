#pragma once

#include <cstddef>
#include <string>

#include <gate/report/report.hpp>

namespace gate::render {

struct MarkdownOptions {
  // Rows per task list (failing and flaky, route-polluted); the rest are
  // counted in an explicit "not shown" line that points at the JSON report.
  std::size_t max_rows = 200;
  // And at most this many bytes of rows per list, so that the document
  // stays well under GitHub's 1 MiB job-summary limit whatever the task
  // ids and answers hold.
  std::size_t max_list_bytes = 400'000;
  // Lists longer than this are folded inside <details>.
  std::size_t fold_after = 10;
};

// The human-readable report (report.md, the job summary): headline,
// metrics with their definitions, breakdowns, failing tasks. Formats what
// the Report holds; computes no metric. All untrusted text is escaped.
std::string report_markdown(const report::Report& r, const MarkdownOptions& o = {});

} // namespace gate::render

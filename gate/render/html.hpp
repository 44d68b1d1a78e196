#pragma once

#include <cstddef>
#include <string>

#include <gate/compare/compare.hpp>
#include <gate/report/report.hpp>

// The self-contained HTML report: one file, no external assets, no network
// (a Content-Security-Policy forbids every fetch and allows only its own two
// inline scripts, by hash). It formats what the Verdict and Reports hold and
// computes no metric.
//
// Page layout:
//   header     title, headline, reasons, warnings, route changes
//   #gate-metrics   metric table (verdict) or suite numbers (report)
//   #gate-chart     per-scenario success bars, inline SVG
//   #gate-tasks     every task, one <tr data-i="N"> each, N indexing
//                   gate-data's "tasks"; the search box (#gate-search) and
//                   the status filter (#gate-status) set `hidden` on rows
//   #gate-detail    the runs of the task whose row was clicked
//   #gate-errors    script errors (window.onerror), empty when all is well
//   <script type="application/json" id="gate-data">  see html_detail.hpp
// On load the page honours ?q=<text> (search), ?status=<status> and
// ?open=<task id> (opens that task's panel), and sets
// <html data-gate-ready="1"> once its script has run.
namespace gate::render {

struct HtmlOptions {
  // Distinct answers are embedded in full until their total reaches this
  // many bytes; later ones are cut to `short_answer_bytes`, and the page
  // says so. Changed tasks come first, so their answers are the ones kept.
  std::size_t answer_budget_bytes = 8u << 20;
  std::size_t short_answer_bytes = 300;
};

// The comparison of `current` with `baseline`: every paired task (then the
// added and removed ones) with baseline and current runs side by side. A
// task's status comes from its entry in v.tasks; tasks not listed there are
// "unchanged".
std::string verdict_html(const compare::Verdict& v, const report::Report& baseline,
                         const report::Report& current, const HtmlOptions& o = {});

} // namespace gate::render

#include <gate/render/markdown_tasks.hpp>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <gate/render/escape.hpp>
#include <gate/render/shared.hpp>

namespace gate::render {

namespace {

constexpr std::size_t k_md_label_bytes = 60;
constexpr std::size_t k_detail_bytes = 100;
constexpr std::size_t k_reasons_shown = 5;

void require_stats(const report::Report& r) {
  if (r.task_stats.size() != r.tasks.size())
    throw std::logic_error("render: task_stats is not parallel to tasks; call report::compute() first");
}

// Folds a long table inside <details> and caps its rows; `rows` are
// complete table lines. The escapers keep every cell free of '<', so no
// text from a task can close the <details> early.
void table(const std::string& summary, const std::string& head, const std::vector<std::string>& rows,
           const MarkdownOptions& o, std::string& out) {
  bool fold = rows.size() > o.fold_after;
  if (fold) out += "<details><summary>" + summary + "</summary>\n\n";
  out += head;
  std::size_t shown = 0, bytes = 0;
  while (shown < rows.size() && shown < o.max_rows && bytes + rows[shown].size() <= o.max_list_bytes)
    bytes += rows[shown++].size();
  for (std::size_t i = 0; i < shown; ++i)
    out += rows[i];
  out += '\n';
  if (shown < rows.size())
    out += std::to_string(rows.size() - shown) + " more not shown; the full list is in the JSON report.\n\n";
  if (fold) out += "</details>\n\n";
}

// Why a task's runs failed: each failing check label (or error bucket) once,
// with how many runs it failed in and the first run's detail.
std::string reasons(const results::Task& t) {
  struct Reason {
    std::string key, detail;
    int runs = 0;
  };
  std::vector<Reason> found;
  auto note = [&](std::string key, const std::string& detail) {
    for (auto& f : found)
      if (f.key == key) {
        ++f.runs;
        return;
      }
    found.push_back({std::move(key), detail, 1});
  };
  for (const auto& run : t.runs) {
    if (run.passed) continue;
    if (run.errored()) {
      note("error: " + run.error, run.error_message);
      continue;
    }
    for (const auto& c : run.checks)
      if (!c.passed) note(c.label, c.detail);
  }
  std::string cell;
  for (std::size_t i = 0; i < found.size() && i < k_reasons_shown; ++i) {
    const auto& f = found[i];
    if (!cell.empty()) cell += "; ";
    cell += md_cell(truncate_utf8(f.key, k_md_label_bytes));
    if (f.runs > 1) cell += " (" + std::to_string(f.runs) + " runs)";
    if (!f.detail.empty()) cell += ": " + md_cell(truncate_utf8(f.detail, k_detail_bytes));
  }
  if (found.size() > k_reasons_shown)
    cell += "; +" + std::to_string(found.size() - k_reasons_shown) + " more";
  return cell;
}

// The first failed run's answer; for an agent run (whose answer is the
// state it left) its exit status and stdout, as the verdict shows them.
std::string excerpt(const results::Task& t) {
  for (const auto& run : t.runs)
    if (!run.passed && !run.errored()) {
      const std::string shown = results::shown_answer(run);
      return shown.empty() ? "(empty)" : md_cell(truncate_utf8(shown, k_md_excerpt_bytes));
    }
  return "";
}

// The task's question (question_excerpt), or "—" when the report has none.
std::string input_cell(const results::Task& t) {
  if (t.input_sha256.empty()) return "—";
  return md_cell(truncate_utf8(question_excerpt(t.input), k_md_excerpt_bytes));
}

} // namespace

void failing_tasks(const report::Report& r, const MarkdownOptions& o, std::string& out) {
  require_stats(r);
  out += "## Failing and flaky tasks\n\n";
  std::vector<std::string> rows;
  // Imported logs carry no inputs: no column of dashes for them.
  const bool inputs = std::any_of(r.tasks.begin(), r.tasks.end(),
                                  [](const results::Task& t) { return !t.input_sha256.empty(); });
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const auto& t = r.tasks[i];
    const auto& s = r.task_stats[i];
    bool all_errored = s.n == 0 && s.errored > 0;
    if (!all_errored && s.c >= s.n) continue;
    std::string passed = std::to_string(s.c) + "/" + std::to_string(s.n);
    if (s.errored > 0) passed += " (+" + std::to_string(s.errored) + " errored)";
    const char* outcome = all_errored ? "errored" : s.c == 0 ? "failing" : "flaky";
    rows.push_back("| " + md_cell(truncate_utf8(t.id, k_md_id_bytes)) + " | " +
                   md_cell(truncate_utf8(t.scenario, k_md_label_bytes)) + " | " + passed + " | " + outcome +
                   " | " + reasons(t) + " | " + (inputs ? input_cell(t) + " | " : "") + excerpt(t) + " |\n");
  }
  if (rows.empty()) {
    out += "None: every task passed in every run that did not error.\n\n";
    return;
  }
  table(std::to_string(rows.size()) + " failing and flaky tasks",
        inputs ? "| Task | Scenario | Passed | Outcome | Failing checks | Input (excerpt) | Answer (excerpt) "
                 "|\n|---|---|---:|---|---|---|---|\n"
               : "| Task | Scenario | Passed | Outcome | Failing checks | Answer (excerpt) "
                 "|\n|---|---|---:|---|---|---|\n",
        rows, o, out);
}

void polluted_tasks(const report::Report& r, const MarkdownOptions& o, std::string& out) {
  require_stats(r);
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const auto& s = r.task_stats[i];
    if (!s.route_polluted) continue;
    std::string cell;
    for (const auto& field : s.route_diff) {
      // The distinct values of the field across runs, in run order.
      std::vector<std::string> values;
      for (const auto& run : r.tasks[i].runs) {
        auto it = run.route.find(field);
        std::string v =
            it == run.route.end() ? "(unset)" : md_cell(truncate_utf8(it->second, k_md_label_bytes));
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
      }
      if (!cell.empty()) cell += "; ";
      cell += md_cell(field) + ": ";
      for (std::size_t j = 0; j < values.size() && j < k_reasons_shown; ++j)
        cell += (j ? " / " : "") + values[j];
      if (values.size() > k_reasons_shown)
        cell += " / +" + std::to_string(values.size() - k_reasons_shown) + " more";
    }
    rows.push_back("| " + md_cell(truncate_utf8(r.tasks[i].id, k_md_id_bytes)) + " | " + cell + " |\n");
  }
  if (rows.empty()) return;
  out +=
      "## Route-polluted tasks\n\nTheir runs did not share one route, so their consistency numbers are not "
      "comparable and are reported apart.\n\n";
  table(std::to_string(rows.size()) + " route-polluted tasks",
        "| Task | Differing route fields |\n|---|---|\n", rows, o, out);
}

} // namespace gate::render

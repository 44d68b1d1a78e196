#include <gate/render/markdown_consistency.hpp>

#include <algorithm>
#include <stdexcept>

#include <gate/render/escape.hpp>
#include <gate/render/na.hpp>
#include <gate/render/shared.hpp>
#include <gate/util/format.hpp>

namespace gate::render {

namespace {

std::string count(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + ' ' + (n == 1 ? one : many);
}

bool has_trajectories(const report::Report& r) {
  for (const auto& t : r.tasks)
    for (const auto& run : t.runs)
      if (!run.tool_calls.empty()) return true;
  return false;
}

// What a split at `step` usually means (METRICS.md "first divergence").
std::string hint(int step) {
  if (step == 0)
    return "look at the prompt and the routing (model, endpoint, sampling): the runs disagree before any "
           "tool result";
  return "look at context truncation and at the tool results the runs saw before step " +
         std::to_string(step);
}

void where_runs_split(const metrics::SuiteStats& s, std::string& out) {
  const auto& h = s.first_divergence_histogram;
  if (h.empty()) {
    out += "Every task's runs made the same sequence of tool calls.\n\n";
    return;
  }
  // The step most tasks split at; ties go to the earlier step, where the
  // cause sits upstream of the later ones.
  auto most = h.begin();
  for (auto it = h.begin(); it != h.end(); ++it)
    if (it->second > most->second) most = it;
  out += "**Runs diverge mostly at step " + std::to_string(most->first) + "** (" +
         count(most->second, "task", "tasks") + "): " + hint(most->first) + ".";
  if (h.size() > 1) {
    out += " All first divergences: ";
    bool first = true;
    for (const auto& [step, n] : h) {
      out += (first ? "" : ", ") + std::string("step ") + std::to_string(step) + " (" +
             count(n, "task", "tasks") + ")";
      first = false;
    }
    out += '.';
  }
  out += "\n\n";
}

void divergent_tasks(const report::Report& r, const MarkdownOptions& o, std::string& out) {
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const auto& s = r.task_stats[i];
    if (s.trajectory_consistent) continue;
    rows.push_back(
        "| " + md_cell(truncate_utf8(r.tasks[i].id, k_md_id_bytes)) + " | " +
        (s.first_divergence ? std::to_string(*s.first_divergence) : "—") + " | " +
        (s.trajectory_similarity ? fixed(*s.trajectory_similarity, 3) : std::string(k_not_in_data)) + " | " +
        (s.route_polluted ? "yes" : "no") + " |\n");
  }
  if (rows.empty()) return;
  out += "| Task | First divergence | Trajectory similarity | Route-polluted |\n|---|---:|---:|---|\n";
  std::size_t shown = std::min(rows.size(), o.max_rows);
  for (std::size_t i = 0; i < shown; ++i)
    out += rows[i];
  out += '\n';
  if (shown < rows.size())
    out += std::to_string(rows.size() - shown) + " more not shown; the full list is in the JSON report.\n\n";
}

void token_band(const report::Report& r, const MarkdownOptions& o, std::string& out) {
  const auto& s = r.stats;
  double band = r.options.token_band_pct;
  if (!s.token_band_outliers) {
    out += std::string("Token band: ") + k_not_in_data + " (no run reported token usage).\n\n";
    return;
  }
  if (*s.token_band_outliers == 0) {
    out += "No run's tokens fall outside ±" + fixed(band, band == static_cast<int>(band) ? 0 : 1) +
           "% of its task's median.\n\n";
    return;
  }
  out += count(*s.token_band_outliers, "run's", "runs'") + " tokens fall outside ±" +
         fixed(band, band == static_cast<int>(band) ? 0 : 1) +
         "% of their task's median; these are usually retries or truncation, not the model: ";
  std::size_t listed = 0;
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const auto& runs = r.task_stats[i].token_band_outliers;
    if (runs.empty()) continue;
    if (listed == o.max_rows) {
      out += "; more in the JSON report";
      break;
    }
    out += (listed++ ? "; " : "") + md_cell(truncate_utf8(r.tasks[i].id, k_md_id_bytes)) +
           (runs.size() == 1 ? " run " : " runs ");
    for (std::size_t j = 0; j < runs.size(); ++j)
      out += (j ? ", " : "") + std::to_string(runs[j]);
  }
  out += ".\n\n";
}

void pollution(const report::Report& r, std::string& out) {
  const auto& s = r.stats;
  if (!s.polluted_tasks) {
    out += std::string("Route hygiene: ") + k_not_in_data + " (no run records a route).\n\n";
    return;
  }
  if (*s.polluted_tasks == 0) {
    out += "Every task's runs shared one route.\n\n";
    return;
  }
  bool included = r.options.include_polluted;
  out += count(*s.polluted_tasks, "route-polluted task is", "route-polluted tasks are") +
         (included ? " counted in the consistency gap (include_polluted is on), so the gap mixes routes"
                   : " kept out of the consistency gap (see \"Route-polluted tasks\" for the fields that "
                     "differed); pass --include-polluted to count them") +
         ".\n\n";
}

} // namespace

void consistency_section(const report::Report& r, const MarkdownOptions& o, std::string& out) {
  if (r.task_stats.size() != r.tasks.size())
    throw std::logic_error("render: task_stats is not parallel to tasks; call report::compute() first");
  if (!has_trajectories(r)) return;
  const auto& s = r.stats;
  out += "## Consistency\n\n";
  out += "Consistency gap " + or_na(s.consistency_gap_pp, [](double x) { return fixed(x) + " pp"; }) +
         " (share of tasks whose runs both passed and "
         "failed); trajectory inconsistency " +
         or_na(s.trajectory_inconsistency_pp, [](double x) { return fixed(x) + " pp"; }) +
         " (share of tasks whose runs made different tool-call sequences); mean trajectory similarity " +
         or_na(s.trajectory_similarity, [](double x) { return fixed(x, 3); }) +
         " (1 = every run called the same tools with the same arguments).\n\n";
  where_runs_split(s, out);
  divergent_tasks(r, o, out);
  token_band(r, o, out);
  pollution(r, out);
}

} // namespace gate::render

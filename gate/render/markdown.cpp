#include <gate/render/markdown.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

#include <gate/render/escape.hpp>
#include <gate/render/markdown_consistency.hpp>
#include <gate/render/markdown_tasks.hpp>
#include <gate/render/na.hpp>
#include <gate/render/shared.hpp>
#include <gate/util/format.hpp>

namespace gate::render {

namespace {

using metrics::RateSummary;

std::string pp(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f pp", v);
  return buf;
}

std::string ms(double v) { return fixed(v, v < 10 ? 1 : 0) + " ms"; }

std::string interval(const RateSummary& s) { return pct(s.interval.low) + " – " + pct(s.interval.high); }

// 1000000 → "1,000,000": counts of runs in running text.
std::string grouped(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? '-' + out : out;
}

// The number of runs per task, as configured: the largest run count.
std::size_t runs_per_task(const report::Report& r, bool& uniform) {
  std::size_t k = 0;
  uniform = true;
  for (const auto& t : r.tasks) {
    if (k != 0 && t.runs.size() != k) uniform = false;
    k = std::max(k, t.runs.size());
  }
  return k;
}

void header(const report::Report& r, std::string& out) {
  out += "# gate report: " + md_cell(r.suite.name);
  if (!r.suite.version.empty()) out += ' ' + md_cell(r.suite.version);
  out += "\n\n";
  std::string meta;
  if (!r.suite.sha256.empty()) meta += "suite sha256 " + md_code_span(r.suite.sha256.substr(0, 12)) + " · ";
  meta += "gate " + md_cell(r.gate_version);
  if (!r.started_at.empty()) meta += " · started " + md_cell(r.started_at);
  if (!r.finished_at.empty()) meta += " · finished " + md_cell(r.finished_at);
  out += meta + "\n\n";
  if (!r.complete) {
    out += "> **Incomplete report**";
    if (!r.incomplete_reason.empty()) out += ": " + md_cell(r.incomplete_reason);
    out += ". The numbers cover only the runs that finished.\n\n";
  }
  if (r.resumed)
    out += "Resumed: " + grouped(r.resumed->runs) + " of " + grouped(r.stats.total_runs) +
           " runs came from the interrupted run of " + md_cell(r.resumed->from_started_at) + ".\n\n";
  const auto& s = r.stats;
  bool uniform = true;
  std::size_t k = runs_per_task(r, uniform);
  out += "**Success rate " + pct(s.overall.success_rate) + "** (95% interval " + interval(s.overall) + ", " +
         md_cell(s.overall.interval_method) + ") · " +
         plural(static_cast<std::int64_t>(r.tasks.size()), "task", "tasks") + " × " +
         (uniform ? "" : "up to ") + plural(static_cast<std::int64_t>(k), "run", "runs") + " · " +
         plural(s.errored_runs, "errored run", "errored runs") + "\n\n";
}

void row(std::string& out, std::initializer_list<std::string> cells) {
  out += '|';
  for (const auto& c : cells)
    out += ' ' + c + " |";
  out += '\n';
}

void metrics_table(const report::Report& r, std::string& out) {
  const auto& s = r.stats;
  out += "## Metrics\n\n| Metric | Value | Definition |\n|---|---|---|\n";
  const std::string measured_none = "n/a (0 of " + std::to_string(s.total_runs) + " runs measured)";
  row(out, {"Success rate", s.overall.runs > 0 ? pct(s.overall.success_rate) : measured_none,
            "passed runs ÷ runs that did not error"});
  row(out, {"95% interval", interval(s.overall),
            "over tasks, the unit of independence; method: " + md_cell(s.overall.interval_method)});
  for (std::size_t i = 0; i < s.pass_at_k.size(); ++i)
    row(out, {"pass@" + std::to_string(i + 1), pct(s.pass_at_k[i]),
              "chance that a task passes at least once in " +
                  plural(static_cast<std::int64_t>(i + 1), "run", "runs") +
                  ", mean over tasks (Chen et al. 2021): can it ever do this?"});
  for (std::size_t i = 0; i < s.pass_hat_k.size(); ++i)
    row(out, {"pass^" + std::to_string(i + 1), pct(s.pass_hat_k[i]),
              "chance that a task passes every time in " +
                  plural(static_cast<std::int64_t>(i + 1), "run", "runs") +
                  ", mean over tasks (Yao et al. 2024): does it do this every time?"});
  const std::string k = std::to_string(s.pass_at_k.size());
  std::string over =
      "over " + plural(s.pass_k_tasks, "task", "tasks") + " with " + k + " or more measured runs";
  if (s.pass_k_left_out > 0)
    over += "; " + plural(s.pass_k_left_out, "task", "tasks") + " with fewer left out";
  if (!s.pass_at_k.empty()) row(out, {"pass@k, pass^k coverage", "k = 1.." + k, md_cell(over)});
  auto pp_or_na = [&](const std::optional<double>& v) { return or_na(v, [&](double x) { return pp(x); }); };
  // Absent when no task had k measured runs on one route: the runs are in
  // the data, the gap is not.
  auto gap_or_na = [&](const std::optional<double>& v) {
    return v ? pp(*v) : "n/a (no task with " + k + " measured runs on one route)";
  };
  row(out, {"Consistency gap", gap_or_na(s.consistency_gap_pp),
            "pass@k − pass^k at k = " + k +
                ": share of tasks with mixed outcomes (route-polluted tasks left out)"});
  row(out, {"Mixed outcomes", gap_or_na(s.mixed_share_pp),
            "share of those tasks where some runs passed and some failed"});
  row(out, {"Answer inconsistency", pp_or_na(s.answer_inconsistency_pp),
            "share of tasks whose runs gave different final answers"});
  row(out, {"Trajectory inconsistency", pp_or_na(s.trajectory_inconsistency_pp),
            "share of tasks whose runs made different tool-call sequences (tasks with tool calls)"});
  row(out, {"Trajectory similarity", or_na(s.trajectory_similarity, [](double x) { return fixed(x, 3); }),
            "mean pairwise Jaccard similarity of the runs' tool-call sets; 1 = identical"});
  if (s.group_completion)
    row(out, {"Group completion", pct(*s.group_completion),
              "mean over runs of the share of groups whose every task passed"});
  double band = r.options.token_band_pct;
  row(out, {"Token band outliers",
            or_na(s.token_band_outliers, [](std::int64_t n) { return plural(n, "run", "runs"); }),
            "runs whose tokens fall outside ±" + fixed(band, band == static_cast<int>(band) ? 0 : 1) +
                "% of their task's median (retries, truncation)"});
  row(out, {"Route-polluted tasks", or_na(s.polluted_tasks, [](std::int64_t n) { return std::to_string(n); }),
            "tasks whose runs did not share one route; their consistency is not comparable"});
  for (const auto& [field, values] : s.route_by_run) {
    std::string shown;
    for (std::size_t i = 0; i < values.size() && i < 8; ++i)
      shown += (i > 0 ? ", " : "") + values[i];
    if (values.size() > 8) shown += ", …";
    row(out, {"Route by run: " + md_cell(field), md_cell(shown),
              "varies with the run index the same way in every task: the harness's design, not pollution"});
  }
  out += '\n';
}

void breakdown(const char* title, const char* column, const std::map<std::string, RateSummary>& m,
               std::string& out) {
  // A single unnamed group says nothing the headline does not.
  if (m.empty() || (m.size() == 1 && m.begin()->first.empty())) return;
  out += std::string("## ") + title + "\n\n| " + column + " | Tasks | Runs | Success | 95% interval |\n";
  out += "|---|---:|---:|---:|---|\n";
  for (const auto& [name, s] : m)
    row(out, {name.empty() ? "(none)" : md_cell(name), std::to_string(s.tasks), std::to_string(s.runs),
              pct(s.success_rate), interval(s)});
  out += '\n';
}

void tokens(const metrics::SuiteStats& s, std::string& out) {
  // The sums are 0 when no run reported usage; shown so, they would read
  // as a run that cost nothing.
  const bool unknown = s.runs_without_usage == s.total_runs && s.total_runs > 0;
  const auto count = [&](std::int64_t n) { return unknown ? std::string("n/a") : std::to_string(n); };
  out += "## Tokens\n\n| Tokens | Count |\n|---|---:|\n";
  row(out, {"Prompt", count(s.prompt_tokens)});
  row(out, {"Completion", count(s.completion_tokens)});
  row(out, {"From cache (no cost)", count(s.cached_tokens)});
  row(out, {"Paid", count(s.paid_tokens)});
  row(out, {"Per task", unknown ? std::string("n/a") : fixed(s.tokens_per_task, 1)});
  out += '\n';
  if (unknown)
    out += std::string("Token usage: ") + k_not_in_data + " (no run reported usage).\n\n";
  else if (s.runs_without_usage > 0)
    out += plural(s.runs_without_usage, "run", "runs") +
           " had no usage reported: their tokens are unknown, not zero.\n\n";
  // n/a here is not "not in the data" alone: a price may be missing too.
  const auto usd = [](const std::optional<double>& v) { return v ? usd_text(*v) : std::string("n/a"); };
  if (s.priced && s.recorded_cost)
    out += "Cost (as the harness recorded it, measured runs): " + usd(s.cost_usd) +
           (s.cost_usd ? "" : " (a measured run has no recorded cost)") + ".\n\n";
  else if (s.priced)
    out += "Cost (gate.yaml pricing, measured runs): paid " + usd(s.cost_usd) +
           "; replayed runs, as recorded (paid nothing now) " + usd(s.cached_cost_usd) +
           ". n/a: a run without usage, or a model without a price.\n\n";
  if (s.user_costed)
    out +=
        "Simulated user's cost (as the harness recorded it, not in the cost above): " + usd(s.user_cost_usd) +
        (s.user_cost_usd ? "" : " (a measured run has none recorded)") + ".\n\n";
}

void latency(const metrics::SuiteStats& s, std::string& out) {
  out += "## Latency\n\n";
  if (s.call_latency.count == 0) {
    out += s.cache_hits == s.total_runs
               ? "All runs replayed from cache: no fresh model calls to time.\n\n"
               : std::string(k_not_in_data) + ": no fresh run carries a latency.\n\n";
    return;
  }
  out += "Fresh calls only (a cache hit has no model latency).\n\n";
  out += "| | Count | p50 | p95 | Max |\n|---|---:|---:|---:|---:|\n";
  auto line = [&](const char* name, const metrics::Latency& l) {
    row(out, {name, std::to_string(l.count), ms(l.p50), ms(l.p95), ms(l.max)});
  };
  line("Model calls", s.call_latency);
  line("Runs", s.run_latency);
  out += '\n';
}

void errors(const metrics::SuiteStats& s, std::int64_t absorbed_429s, std::string& out) {
  out += "## Errors\n\n";
  if (absorbed_429s > 0)
    out += plural(absorbed_429s, "rate-limit answer (429) was", "rate-limit answers (429) were") +
           " retried and got past.\n\n";
  if (s.errored_runs == 0) {
    out += "No errored runs.\n\n";
    return;
  }
  out += std::to_string(s.errored_runs) + " of " + plural(s.total_runs, "run", "runs") + " errored (" +
         pct(s.error_rate) +
         "); errored runs are infrastructure failures, counted apart from the success rate.\n\n";
  out += "| Bucket | Runs |\n|---|---:|\n";
  for (const auto& [bucket, n] : s.errors_by_bucket)
    row(out, {md_cell(bucket), std::to_string(n)});
  out += '\n';
}

void divergence(const metrics::SuiteStats& s, std::string& out) {
  if (s.first_divergence_histogram.empty()) return;
  out += "## First divergence\n\nStep at which a task's tool calls first left the most common sequence: late "
         "steps point at context truncation, step 0 at the prompt or routing.\n\n";
  out += "| Step | Tasks |\n|---:|---:|\n";
  for (const auto& [step, n] : s.first_divergence_histogram)
    row(out, {std::to_string(step), std::to_string(n)});
  out += '\n';
}

} // namespace

std::string report_markdown(const report::Report& r, const MarkdownOptions& o) {
  std::string out;
  out.reserve(8192);
  header(r, out);
  metrics_table(r, out);
  breakdown("By scenario", "Scenario", r.stats.by_scenario, out);
  breakdown("By difficulty", "Difficulty", r.stats.by_difficulty, out);
  failing_tasks(r, o, out);
  polluted_tasks(r, o, out);
  consistency_section(r, o, out);
  tokens(r.stats, out);
  latency(r.stats, out);
  errors(r.stats, report::absorbed_rate_limits(r), out);
  divergence(r.stats, out);
  return out;
}

} // namespace gate::render

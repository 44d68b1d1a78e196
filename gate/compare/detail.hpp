#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gate/compare/compare.hpp>
#include <gate/metrics/summary.hpp>
#include <gate/results/results.hpp>

// Internal to gate_compare, shared by compare.cpp (pairing, per-task
// verdicts), rows.cpp (suite metrics) and text.cpp (comparability checks and
// the verdict's words). Not part of the public API.
namespace gate::compare::detail {

// p < alpha with a margin: exact p-values are ratios such as 1/20 that can
// equal alpha, and the last bit of their floating-point evaluation must not
// decide whether a task regressed.
inline bool below_alpha(double p, double alpha) { return p < alpha * (1 - 1e-9); }

// A task present in both reports.
struct Pair {
  const results::Task* base = nullptr;
  const results::Task* cur = nullptr;
  const metrics::TaskStats* sb = nullptr;
  const metrics::TaskStats* sa = nullptr;
  bool measured = false;         // a measured (non-errored) run on each side
  bool inputs_unchanged = false; // TaskDiff::inputs_unchanged
  bool rerecorded = false;       // TaskDiff::rerecorded
  bool affected() const { return measured && !inputs_unchanged; }
};

// Above this many non-zero differences the sign-flip test uses the normal
// limit of its own permutation distribution: 20,000 Monte-Carlo patterns over
// 100,000 tasks would cost seconds, and with thousands of bounded terms the
// limit is accurate far beyond the precision a gate decision needs.
inline constexpr std::size_t sign_flip_normal_above = 2000;

struct OneSided {
  double p_less = 1, p_greater = 1;
  double min_p = 1;   // the smallest p either tail could reach over these |d_i|
  std::string method; // "sign-flip exact", "sign-flip Monte Carlo (20000, seeded)", "sign-flip normal limit"
};

// The paired sign-flip test (stats.hpp), or its normal limit for large m:
// under "no change" S = Σ ±|d_i| has mean 0 and variance Σ d_i², so
// p_less = Φ(Σd / √Σd²).
OneSided sign_flip(const std::vector<double>& d);

// A measured row and how to find its noise floor: the floor depends on the
// one-sided level the row is tested at, which Holm sets only once the
// family of gated rows is known.
struct RowCalc {
  MetricRow row;
  std::function<std::optional<double>(double level)> floor = {};
};

// The six rows in a fixed order (success_rate, consistency_gap, pass_hat_k,
// tokens_per_task, p95_latency, error_rate), measured but not yet gated.
std::vector<RowCalc> metric_rows(const report::Report& baseline, const report::Report& current,
                                 const std::vector<Pair>& pairs, const Options& o);

// Sets threshold, gated, p_adjusted (Holm over the gated rows), the noise
// floor at the row's Holm level alpha / (gated rows), crossed, significant,
// failed and inconclusive.
std::vector<MetricRow> gate_rows(std::vector<RowCalc> rows, const config::Thresholds& t);

// The fewest non-zero task differences with which a test whose best p is
// 2^-m can reach `alpha` after Holm over `family` metrics.
std::int64_t tasks_needed(double alpha, std::size_t family);

// "" when the suites match; the warning to show when they differ and
// `allow` is set; Error(bad_input) naming both values otherwise. Two reports
// that both carry gate analyze's default name are not known to be of one
// suite either.
std::string check_suites(const report::SuiteInfo& baseline, const report::SuiteInfo& current, bool allow);

// "" for a report of the whole suite; else what it is ("interrupted: …",
// "shard 2/4").
std::string partial_reason(const report::Report& r);

// Refuses a partial report unless `allow` (Error(bad_input) naming what is
// missing); with it, returns the verdict's coverage line ("" when both
// reports are whole).
std::string check_coverage(const report::Report& baseline, const report::Report& current, std::int64_t paired,
                           bool allow);

struct RouteDiff {
  std::vector<std::string> lines;  // "model: a → b", values redacted
  std::vector<std::string> fields; // the field names, sorted
};

// The configured routes compared, then each side's modal run route for
// fields the configured routes do not already show; concurrency and the
// fields either side varies with the run index by design are left out.
RouteDiff diff_routes(const report::Report& baseline, const report::Report& current);

std::string join(const std::vector<std::string>& parts, const std::string& separator);

// "prompt changed: prompts/support.md (system); 11 of 44 paired tasks sent
// another input", one line per role whose template differs (prompts.cpp).
std::vector<std::string> prompt_warnings(const report::Report& baseline, const report::Report& current,
                                         const std::vector<Pair>& pairs, std::int64_t affected);

// One line per failed rule: metrics in row order, regressed tasks, new failures.
std::vector<std::string> reasons(const Verdict& v);

// One line per inconclusive row: what moved, why no test could call it,
// what would.
std::vector<std::string> inconclusive_reasons(const Verdict& v);

// The verdict's first line, with the route warning in front when routes differ.
std::string headline(const Verdict& v, const std::vector<std::string>& route_fields);

// A side whose runs mostly errored: the verdict that says so (exit cannot_run).
Verdict unmeasured_verdict(Verdict v, const report::Report& baseline, const report::Report& current);

// Status unmeasured, exit cannot_run, and the headline from v.reasons.
void could_not_measure(Verdict& v);

} // namespace gate::compare::detail

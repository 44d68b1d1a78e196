#pragma once

#include <cstddef>
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
  bool inputs_unchanged = false;
};

// Above this many non-zero differences the sign-flip test uses the normal
// limit of its own permutation distribution: 20,000 Monte-Carlo patterns over
// 100,000 tasks would cost seconds, and with thousands of bounded terms the
// limit is accurate far beyond the precision a gate decision needs.
inline constexpr std::size_t sign_flip_normal_above = 2000;

struct OneSided {
  double p_less = 1, p_greater = 1;
  std::string method; // "sign-flip exact", "sign-flip Monte Carlo (20000, seeded)", "sign-flip normal limit"
};

// The paired sign-flip test (stats.hpp), or its normal limit for large m:
// under "no change" S = Σ ±|d_i| has mean 0 and variance Σ d_i², so
// p_less = Φ(Σd / √Σd²).
OneSided sign_flip(const std::vector<double>& d);

// The six rows in a fixed order (success_rate, consistency_gap, pass_hat_k,
// tokens_per_task, p95_latency, error_rate), measured but not yet gated.
std::vector<MetricRow> metric_rows(const report::Report& baseline, const report::Report& current,
                                   const std::vector<Pair>& pairs, const Options& o);

// Sets threshold, gated, p_adjusted (Holm over the gated rows), crossed,
// significant and failed.
void gate_rows(std::vector<MetricRow>& rows, const config::Thresholds& t);

// "" when the suites match; the warning to show when they differ and
// `allow` is set; Error(bad_input) naming both values otherwise.
std::string check_suites(const report::SuiteInfo& baseline, const report::SuiteInfo& current, bool allow);

struct RouteDiff {
  std::vector<std::string> lines;  // "model: a → b", values redacted
  std::vector<std::string> fields; // the field names, sorted
};

// The configured routes compared, then the runs' own routes (each current
// run against its task's first baseline run) for fields the configured
// routes do not already show.
RouteDiff diff_routes(const report::Report& baseline, const report::Report& current,
                      const std::vector<Pair>& pairs);

// Adds a warning when `r` is incomplete.
void add_incomplete(const report::Report& r, const std::string& side, std::vector<std::string>& warnings);

std::string join(const std::vector<std::string>& parts, const std::string& separator);

// One line per failed rule: metrics in row order, regressed tasks, new failures.
std::vector<std::string> reasons(const Verdict& v);

// The verdict's first line, with the route warning in front when routes differ.
std::string headline(const Verdict& v, const std::vector<std::string>& route_fields);

} // namespace gate::compare::detail

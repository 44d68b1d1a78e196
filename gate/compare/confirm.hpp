#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gate/compare/compare.hpp>
#include <gate/report/report.hpp>

// Confirmation runs (METRICS.md "Confirmation"): when a first comparison
// leaves doubt, fresh runs of both sides of the few tasks that decide it.
// Pure: which tasks, and what their fresh runs say. Making the runs is the
// caller's (cli/confirm.cpp).
namespace gate::compare {

// Whether the verdict is in doubt in a way fresh runs can settle: it is
// inconclusive, a gated row crossed its threshold without significance, or
// tasks flipped. Never for a failed or unmeasured verdict: confirmation only
// adds evidence of a regression, and a verdict that could not measure has
// nothing to confirm.
bool needs_confirmation(const Verdict& v);

// A task chosen for confirmation: its first comparison, and the replica
// indexes its fresh runs take on each side (after the side's own runs, so
// they never replay a run that selected it).
struct ConfirmPick {
  std::string id;
  bool flipped = false;
  double difference = 0; // baseline − current success over the measured runs, in [0, 1]
  std::string baseline_fingerprint, current_fingerprint;
  int baseline_first_replica = 0, current_first_replica = 0;
  std::int64_t calls = 0; // fresh calls its runs may make, both sides
};

struct ConfirmPlan {
  std::vector<ConfirmPick> picks;
  // Tasks whose success fell but did not fit in max_calls, by id.
  std::vector<std::string> left_out;
  std::int64_t calls = 0; // planned, at most max_calls
};

// What the caller knows of a task that the reports do not say: whether its
// requests can be sent again from their recorded form (model calls can;
// agent runs cannot), and how many calls one run makes (1 + llm_judge checks).
struct Confirmable {
  bool resendable = false;
  int calls_per_run = 1;
};

// The one request every run of `t` sent (its fingerprint); "" when the runs
// carry none, or several.
std::string request_fingerprint(const results::Task& t);

// The candidates are paired tasks measured on both sides whose request
// changed (a request both sides share cannot have changed by the change
// under test) and whose success fell. The largest fall first (a 3/3 → 0/3
// task decides more than a 3/3 → 2/3 flip), flipped tasks first among equal
// falls, then by id; each is taken when its `runs` fresh runs per side fit
// in what is left of `max_calls`.
ConfirmPlan plan_confirmation(const report::Report& baseline, const report::Report& current, int runs,
                              std::int64_t max_calls,
                              const std::function<Confirmable(const std::string& id)>& about);

// The fresh runs of one picked task, errored runs left out.
struct ConfirmCounts {
  std::string id;
  std::int64_t baseline_passed = 0, baseline_runs = 0, current_passed = 0, current_runs = 0;
};

// One-sided exact test that the baseline side passes more often, stratified
// by task: within a task, under "no change" its fresh runs on both sides are
// exchangeable, so given the task's total passes the baseline's passes are
// hypergeometric; the statistic is their sum over tasks, whose law is the
// convolution of the tasks' laws. p = P(sum >= observed). A task with no
// runs on a side carries no evidence. 1 when no task has any.
double stratified_exact_p(const std::vector<ConfirmCounts>& tasks);

// The level the confirmation is decided at: alpha / (F + 1) for F gated
// rows (METRICS.md "Confirmation": one more member of the Holm family, at
// its strictest step, so the first comparison keeps its own level).
double confirmation_level(const Verdict& v);

// Folds fresh runs into the verdict: a p at or below the level fails it
// (a reason naming the tasks that were worse); otherwise the doubt is
// dismissed, and an inconclusive verdict passes unless candidates were left
// out of the budget. Sets v.confirmation, the status, the exit and the
// headline.
void apply_confirmation(Verdict& v, const ConfirmPlan& plan, std::vector<ConfirmCounts> fresh, int runs,
                        std::int64_t max_calls, std::int64_t calls_made, std::optional<std::int64_t> tokens);

// Replay-only: no fresh call is possible. The verdict keeps its status
// (inconclusive stays inconclusive) and lists the runs that would confirm
// it and the command that records them.
void confirmation_needs_calls(Verdict& v, const ConfirmPlan& plan, int runs, std::int64_t max_calls,
                              std::vector<std::string> missing, std::string command);

} // namespace gate::compare

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
// (`flips`: confirm.when flips, --confirm) tasks flipped. Never for a failed or unmeasured verdict:
// confirmation only adds evidence of a regression, and a verdict that could not measure has nothing to
// confirm.
bool needs_confirmation(const Verdict& v, bool flips);

// A task chosen for confirmation: its first comparison, and the replica
// indexes its fresh runs take on each side (after the side's own runs, so
// they never replay a run that selected it).
struct ConfirmPick {
  std::string id;
  bool flipped = false;
  double baseline_rate = 0, current_rate = 0; // success over the measured runs of the first comparison
  double difference = 0;                      // baseline_rate − current_rate, in (0, 1]
  int calls_per_run = 1;
  std::string baseline_fingerprint, current_fingerprint;
  int baseline_first_replica = 0, current_first_replica = 0;
  std::int64_t calls = 0; // fresh calls its runs may make, both sides
};

// What a confirmation is asked for: the fewest fresh runs per side per task
// (confirm.runs or --confirm), its budget, the level it decides at
// (confirmation_level), and the errored share above which it could not
// measure (thresholds.max_errored_runs_pct, as for the main run).
struct ConfirmAsk {
  int runs = 3;
  std::int64_t max_calls = 200;
  double level = 0.05;
  double max_errored_pct = 5;
};

// The most fresh runs per side per task a plan raises `runs` to.
inline constexpr int k_max_confirm_runs = 10;

struct ConfirmPlan {
  std::vector<ConfirmPick> picks;
  // Tasks whose success fell but did not fit in max_calls, by id.
  std::vector<std::string> left_out;
  std::int64_t calls = 0; // planned, at most max_calls
  int runs = 0;           // fresh runs per side per task, at least the ask's
  ConfirmAsk ask;
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
// falls, then by id; each is taken when its runs per side fit in what is
// left of the budget.
//
// Runs per side: the fewest r from ask.runs up to k_max_confirm_runs at
// which the fresh runs could decide — the test would still reject at the
// level if each picked task's fresh runs repeated its first comparison with
// one more baseline failure (decides_at). A single task going 3/3 → 0/3
// cannot reach a level of 0.025 at 3 runs a side (p ≥ 1/20), so it gets 5;
// five such tasks decide at 3. When no r decides within the budget (noise
// flips, a small fall), ask.runs: more runs would only spend more.
// r is chosen from the first comparison alone, before any fresh run is
// drawn, so the fresh runs' test keeps its exact level.
ConfirmPlan plan_confirmation(const report::Report& baseline, const report::Report& current,
                              const ConfirmAsk& ask,
                              const std::function<Confirmable(const std::string& id)>& about);

// Whether `picks` at `runs` fresh runs per side could decide at `level`:
// stratified_exact_p of each pick's first-comparison rates scaled to `runs`
// (rounded), one baseline pass fewer per task, is at most `level`.
bool decides_at(const std::vector<ConfirmPick>& picks, int runs, double level);

// The fresh runs of one picked task: the measured ones, and apart from them
// those that errored (no answer: not evidence either way).
struct ConfirmCounts {
  std::string id;
  std::int64_t baseline_passed = 0, baseline_runs = 0, current_passed = 0, current_runs = 0;
  std::int64_t errored = 0;
  std::string error; // the first errored run's error, "" when none
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

// Folds fresh runs into the verdict. Over the measured fresh runs, a p at
// or below the level fails it (a reason naming the tasks that were worse).
// Errored fresh runs are not evidence: above ask.max_errored_pct of them
// the confirmation could not measure (the verdict too: exit 3); any at all
// and the doubt stands (incomplete: the verdict keeps its status). Only
// fresh runs that all answered dismiss the doubt: an inconclusive verdict
// then passes, unless candidates were left out of the budget. Sets
// v.confirmation, the status, the exit and the headline.
void apply_confirmation(Verdict& v, const ConfirmPlan& plan, std::vector<ConfirmCounts> fresh,
                        std::int64_t calls_made, std::optional<std::int64_t> tokens);

// No fresh call is possible (replay-only, or no key for a default
// confirmation) and the runs are not recorded. The verdict keeps its status
// (inconclusive stays inconclusive) and lists the runs that would confirm
// it and the command that records them.
void confirmation_needs_calls(Verdict& v, const ConfirmPlan& plan, std::vector<std::string> missing,
                              std::string command);

} // namespace gate::compare

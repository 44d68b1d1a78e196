#include <gate/cli/common.hpp>
#include <gate/cli/confirm.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <tuple>

#include <gate/cli/progress.hpp>
#include <gate/cli/signals.hpp>
#include <gate/cli/trusted.hpp>
#include <gate/compare/confirm.hpp>
#include <gate/net/lazy_client.hpp>
#include <gate/replay/policy.hpp>
#include <gate/run/runner.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace {

// One side's fresh runs: the picks' cases, each from its own first replica
// (sides of tasks with unequal run counts start at different indexes).
struct SideRuns {
  std::vector<const suite::Case*> cases;
  std::vector<run::PreparedRequest> requests; // empty: the cases' own requests
  std::vector<int> first_replica;
};

struct Made {
  std::map<std::string, results::Task> tasks; // by id
  std::vector<run::Miss> misses;
  std::vector<run::Miss> tampered, untrusted; // with --trusted-cache
  std::int64_t calls = 0, tokens = 0;
  bool tokens_known = true; // every fresh call reported its usage
};

void execute_side(const SideRuns& side, const config::Config& cfg, cache::Store* store,
                  const cache::Store* trusted, net::LazyClient& client, bool quiet, Made& made) {
  // One execute() per first replica: the runner numbers one batch's runs alike.
  std::set<int> firsts(side.first_replica.begin(), side.first_replica.end());
  for (int first : firsts) {
    run::Inputs in;
    in.config = &cfg;
    in.env = &process_env();
    in.store = store;
    in.trusted = trusted;
    in.client = [&]() -> model::ModelClient& { return client.get(); };
    in.stop = &stop_requested();
    in.first_replica = first;
    for (std::size_t i = 0; i < side.cases.size(); ++i) {
      if (side.first_replica[i] != first) continue;
      in.cases.push_back(side.cases[i]);
      if (!side.requests.empty()) in.requests.push_back(side.requests[i]);
    }
    run::Outcome out;
    {
      ProgressPrinter progress(quiet);
      out = run::execute(in, progress.callbacks());
    }
    if (!out.fatal.empty()) throw Error(out.fatal_code, "confirmation runs stopped: " + out.fatal);
    if (int code = stop_exit_code(); code != 0)
      throw Error(static_cast<Exit>(code), "interrupted during the confirmation runs");
    made.misses.insert(made.misses.end(), out.misses.begin(), out.misses.end());
    made.tampered.insert(made.tampered.end(), out.tampered.begin(), out.tampered.end());
    made.untrusted.insert(made.untrusted.end(), out.untrusted.begin(), out.untrusted.end());
    for (results::Task& t : out.tasks) {
      for (const results::Run& r : t.runs) {
        if (r.error == replay::k_miss_error) continue;
        if (!r.cache_hit) {
          ++made.calls;
          made.tokens += r.prompt_tokens + r.completion_tokens;
          made.tokens_known = made.tokens_known && r.usage_known;
        }
        made.calls += r.judge_calls - r.judge_cache_hits;
      }
      made.tasks.emplace(t.id, std::move(t));
    }
  }
}

compare::ConfirmCounts counts_of(const std::string& id, const Made& base, const Made& cur) {
  compare::ConfirmCounts c;
  c.id = id;
  auto count = [&c](const Made& m, const std::string& task, std::int64_t& passed, std::int64_t& runs) {
    auto it = m.tasks.find(task);
    if (it == m.tasks.end()) return;
    for (const results::Run& r : it->second.runs) {
      if (r.errored()) { // neither a pass nor a fail: counted apart
        ++c.errored;
        if (c.error.empty()) c.error = r.error;
        continue;
      }
      ++runs;
      passed += r.passed ? 1 : 0;
    }
  };
  count(base, id, c.baseline_passed, c.baseline_runs);
  count(cur, id, c.current_passed, c.current_runs);
  return c;
}

std::string record_command(const RunResult& run, const ConfirmRequest& ask) {
  const config::Config& cfg = run.config;
  const std::string& var = cfg.model.api_key_env; // "" = a server that takes no key
  std::string cmd =
      (var.empty() ? "" : var + "=… ") + "gate check --config " + cfg.file.string() + " --mode replay";
  if (ask.from_flag) cmd += " --confirm " + std::to_string(ask.runs);
  return cmd;
}

// Why no fresh call can be made ("" when one can): replay-only, or no key.
std::string no_fresh_calls(const config::Config& cfg) {
  if (cfg.cache.mode == config::CacheMode::replay_only) return "replay-only";
  const std::string& var = cfg.model.api_key_env;
  if (!var.empty() && process_env().get(var).empty()) return "no key ($" + var + " is not set)";
  return "";
}

} // namespace

int confirm(compare::Verdict& v, const report::Report& baseline, const report::Report& current,
            const RunResult& run, const ConfirmRequest& ask, bool quiet) {
  if (ask.runs <= 0 || run.suite == nullptr || !compare::needs_confirmation(v, ask.flips)) return 0;
  const config::Config& cfg = run.config;
  std::map<std::string_view, const suite::Case*> cases;
  for (const suite::Case& c : run.suite->cases)
    cases.emplace(c.id, &c);

  // The baseline's requests, as the cache recorded them.
  std::optional<cache::Store> store;
  if (cfg.cache.mode != config::CacheMode::off) store.emplace(cfg.cache.dir);
  std::map<std::string, std::string> baseline_fp; // task id → fingerprint
  std::set<std::string> wanted;
  for (const results::Task& t : baseline.tasks)
    if (std::string fp = compare::request_fingerprint(t); !fp.empty()) {
      baseline_fp[t.id] = fp;
      wanted.insert(fp);
    }
  const std::map<std::string, cache::Entry> recorded =
      store ? store->by_fingerprint(wanted) : std::map<std::string, cache::Entry>{};

  std::vector<std::string> not_resendable;
  auto about = [&](const std::string& id) {
    compare::Confirmable c;
    auto it = cases.find(id);
    auto fp = baseline_fp.find(id);
    if (it == cases.end() || it->second->kind == suite::Kind::agent || fp == baseline_fp.end() ||
        recorded.count(fp->second) == 0) {
      not_resendable.push_back(id);
      return c;
    }
    c.resendable = true;
    c.calls_per_run = 1 + static_cast<int>(std::count_if(
                              it->second->checks.begin(), it->second->checks.end(),
                              [](const check::Check& k) { return k.type == check::Type::llm_judge; }));
    return c;
  };
  const compare::ConfirmPlan plan = compare::plan_confirmation(
      baseline, current, {ask.runs, ask.max_calls, compare::confirmation_level(v), v.max_errored_runs_pct},
      about);
  std::sort(not_resendable.begin(), not_resendable.end());
  if (!not_resendable.empty())
    v.warnings.push_back(
        std::to_string(not_resendable.size()) +
        " tasks whose success fell cannot be confirmed: an agent task, or a baseline request "
        "not in the cache (" +
        not_resendable.front() + (not_resendable.size() > 1 ? ", …" : "") + ")");
  if (plan.picks.empty()) {
    v.warnings.push_back("confirmation: no task whose success fell could be run again on both sides within " +
                         std::to_string(ask.max_calls) +
                         " calls; the verdict stands on the first comparison");
    return 0;
  }

  config::Config fresh = cfg;
  fresh.runs = plan.runs;
  // A default confirmation (no --confirm) never stops a check that cannot
  // call the model (CI replay-only, the hook, no key): it replays what is
  // recorded and otherwise leaves the verdict in doubt, naming the command
  // that records the runs. --confirm asked for the runs: then it is exit 4.
  const std::string cannot_call = no_fresh_calls(cfg);
  if (!cannot_call.empty() && !ask.from_flag) {
    if (!store) {
      v.warnings.push_back("confirmation not run: " + cannot_call +
                           " and cache.mode off; decide the doubt with: " + record_command(run, ask));
      return 0;
    }
    fresh.cache.mode = config::CacheMode::replay_only;
  }
  SideRuns base_side, cur_side;
  for (const compare::ConfirmPick& p : plan.picks) {
    const suite::Case* c = cases.at(p.id);
    base_side.cases.push_back(c);
    base_side.requests.push_back(run::resend(recorded.at(p.baseline_fingerprint), fresh));
    base_side.first_replica.push_back(p.baseline_first_replica);
    cur_side.cases.push_back(c);
    cur_side.first_replica.push_back(p.current_first_replica);
  }
  if (!quiet)
    std::cerr << "gate: confirming: " << plan.picks.size() << " tasks × " << plan.runs
              << " fresh runs per side (at most " << plan.calls << " calls)\n";
  net::LazyClient client(fresh.model, process_env());
  const std::optional<cache::Store> trusted = open_trusted(run.trusted_cache);
  const cache::Store* trusted_ptr = trusted ? &*trusted : nullptr;
  Made base_made, cur_made;
  execute_side(base_side, fresh, store ? &*store : nullptr, trusted_ptr, client, quiet, base_made);
  execute_side(cur_side, fresh, store ? &*store : nullptr, trusted_ptr, client, quiet, cur_made);
  // The suite's own runs were held to the trusted cache; the runs that
  // decide a verdict in doubt are held to it too.
  auto both = [](std::vector<run::Miss> a, const std::vector<run::Miss>& b) {
    a.insert(a.end(), b.begin(), b.end());
    std::sort(a.begin(), a.end(), [](const run::Miss& x, const run::Miss& y) {
      return std::tie(x.task_id, x.run, x.key) < std::tie(y.task_id, y.run, y.key);
    });
    return a;
  };
  if (const auto tampered = both(base_made.tampered, cur_made.tampered); !tampered.empty())
    refuse_tampered(tampered, *store, *trusted);
  if (const auto untrusted = both(base_made.untrusted, cur_made.untrusted); !untrusted.empty())
    v.warnings.push_back(recorded_outside_ci(untrusted, *trusted, " of the confirmation runs"));

  if (!base_made.misses.empty() || !cur_made.misses.empty()) {
    std::vector<std::string> missing;
    auto list = [&](const char* side, const std::vector<run::Miss>& misses) {
      for (const run::Miss& m : misses)
        missing.push_back("task \"" + m.task_id + "\" " + side + " run " + std::to_string(m.run));
    };
    list("baseline", base_made.misses);
    list("current", cur_made.misses);
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    compare::confirmation_needs_calls(v, plan, std::move(missing), record_command(run, ask));
    return ask.from_flag ? static_cast<int>(Exit::cache_miss) : 0;
  }
  std::vector<compare::ConfirmCounts> counts;
  for (const compare::ConfirmPick& p : plan.picks)
    counts.push_back(counts_of(p.id, base_made, cur_made));
  compare::apply_confirmation(v, plan, std::move(counts), base_made.calls + cur_made.calls,
                              base_made.tokens_known && cur_made.tokens_known
                                  ? std::optional<std::int64_t>(base_made.tokens + cur_made.tokens)
                                  : std::nullopt);
  return 0;
}

} // namespace gate::cli

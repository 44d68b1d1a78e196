#include <charconv>
#include <future>
#include <iostream>
#include <mutex>
#include <unordered_map>

#include <gate/cli/common.hpp>
#include <gate/cli/progress.hpp>
#include <gate/cli/remote_cache.hpp>
#include <gate/cli/run_steps.hpp>
#include <gate/cli/signals.hpp>
#include <gate/cli/trusted.hpp>
#include <gate/net/http_client.hpp>
#include <gate/net/lazy_client.hpp>
#include <gate/prompt/apply.hpp>
#include <gate/render/junit.hpp>
#include <gate/render/markdown.hpp>
#include <gate/report/measured.hpp>
#include <gate/report/report.hpp>
#include <gate/run/assemble.hpp>
#include <gate/run/runner.hpp>
#include <gate/run/select.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/format.hpp>
#include <gate/util/heap.hpp>
#include <gate/util/keep.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/terminal.hpp>
#include <gate/util/text.hpp>
#include <gate/util/time.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

void add_run_options(po::options_description& d) {
  d.add_options()("help,h",
                  "show this help")("config,c", po::value<std::string>()->default_value("gate.yaml"),
                                    "the gate.yaml to use")("runs,k", po::value<int>(), "runs per task (k)")(
      "mode,m", po::value<std::string>(), "cache mode: replay | replay-only | record | off")(
      "concurrency,j", po::value<int>(), "parallel workers")(
      "filter", po::value<std::vector<std::string>>()->composing(),
      "run only tasks whose id matches this glob (repeatable)")("sample", po::value<std::int64_t>(),
                                                                "run a seeded sample of N tasks")(
      "sample-seed", po::value<std::uint64_t>(), "seed for --sample (default 0)")(
      "shard", po::value<std::string>(), "run only slice i of n (i/n, 1-based; by a hash of task id)")(
      "out", po::value<std::string>(),
      "directory for report.json, report.md and report.xml")("quiet,q", "no progress output")(
      "keep-workdirs",
      "agent tasks: keep each run's work copy (under agent.workdir or $TMPDIR) and print where")(
      "trusted-cache", po::value<std::string>(),
      "the cache as the base branch has it: a replayed entry that differs from its copy there is exit 2; "
      "one it lacks is listed as recorded outside CI");
}

namespace {

// "i/n" with both parts plain decimal integers; ranges are checked by
// config::apply with the other overrides.
config::Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  auto number = [&](std::string_view part) {
    int v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size())
      throw Error(Exit::bad_input, "--shard: expected i/n such as 2/4, got \"" + text + "\"");
    return v;
  };
  if (slash == std::string::npos) number({});
  return {number(std::string_view(text).substr(0, slash)), number(std::string_view(text).substr(slash + 1))};
}

config::Overrides overrides_from(const po::variables_map& vm) {
  config::Overrides o;
  if (vm.count("runs")) o.runs = vm["runs"].as<int>();
  if (vm.count("mode")) o.mode = vm["mode"].as<std::string>();
  if (vm.count("concurrency")) o.concurrency = vm["concurrency"].as<int>();
  if (vm.count("filter")) o.filter = vm["filter"].as<std::vector<std::string>>();
  if (vm.count("sample")) o.sample = vm["sample"].as<std::int64_t>();
  if (vm.count("sample-seed")) o.sample_seed = vm["sample-seed"].as<std::uint64_t>();
  if (vm.count("shard")) o.shard = parse_shard(vm["shard"].as<std::string>());
  if (vm.count("out")) o.out_dir = fs::path(vm["out"].as<std::string>());
  return o;
}

// Exit 4 with every missing request and how to record it; the list is also
// written next to the reports for CI to upload.
int report_misses(const run::Outcome& outcome, const config::Config& cfg, const fs::path& config_file) {
  std::string list;
  for (const auto& m : outcome.misses)
    list += "task " + m.task_id + " run " + std::to_string(m.run) + " (key " + m.key.substr(0, 12) + ")\n";
  ensure_directory(cfg.outputs.dir);
  write_file_atomically(cfg.outputs.dir / "cache-misses.txt", redact(list));
  std::cerr << "gate: replay-only: " << outcome.misses.size()
            << " response(s) are not in the cache; no report was written:\n";
  std::size_t shown = 0;
  for (const auto& m : outcome.misses) {
    if (++shown > 20) {
      std::cerr << "  … and " << outcome.misses.size() - 20 << " more (see "
                << terminal_safe((cfg.outputs.dir / "cache-misses.txt").string()) << ")\n";
      break;
    }
    std::cerr << "  missing: task " << terminal_safe(m.task_id) << " run " << m.run << "\n";
  }
  // A server that takes no key (model.api_key_env: null) needs none to record.
  const std::string& var = cfg.model.api_key_env;
  std::cerr << "To record them, run" << (var.empty() ? ": " : " with a key: " + terminal_safe(var) + "=… ")
            << "gate run --config " << terminal_safe(config_file.string()) << " --mode replay\n";
  return static_cast<int>(Exit::cache_miss);
}

// What this run took over from an interrupted one: when the report
// it is about to replace is incomplete and of the same suite, the runs this
// run replayed from the cache that the earlier report lists as finished
// (same task and replica, no error) came from the interrupted run. An
// unreadable earlier report only costs the count, never the run.
std::optional<report::Resumed> resumed_from(const fs::path& json_path, const report::Report& now) {
  std::error_code ec;
  if (!fs::is_regular_file(json_path, ec) || report::complete_on_disk(json_path)) return std::nullopt;
  report::Report before;
  try {
    report::ReadOptions summary;
    summary.details = false;
    before = report::read(json_path, summary);
  } catch (const std::exception& e) {
    std::cerr << "gate: warning: the earlier report is unreadable; not counting resumed runs: "
              << terminal_safe(e.what()) << "\n";
    return std::nullopt;
  }
  if (before.complete || before.suite.name != now.suite.name || before.suite.version != now.suite.version ||
      before.suite.sha256 != now.suite.sha256)
    return std::nullopt;
  std::unordered_map<std::string_view, std::vector<bool>> finished;
  for (const auto& t : before.tasks) {
    std::vector<bool>& done = finished[t.id];
    for (const auto& run : t.runs) {
      if (run.errored() || run.index < 0) continue;
      if (static_cast<std::size_t>(run.index) >= done.size())
        done.resize(static_cast<std::size_t>(run.index) + 1);
      done[static_cast<std::size_t>(run.index)] = true;
    }
  }
  report::Resumed resumed{before.started_at, 0};
  for (const auto& t : now.tasks) {
    auto it = finished.find(t.id);
    if (it == finished.end()) continue;
    for (const auto& run : t.runs)
      if (run.cache_hit && run.index >= 0 && static_cast<std::size_t>(run.index) < it->second.size() &&
          it->second[static_cast<std::size_t>(run.index)])
        ++resumed.runs;
  }
  return resumed;
}

// The note of a run that tests an older version than the suite's latest
// ("" when it tests the latest, or follows it).
std::string pinned_not_latest(const config::Config& cfg, const suite::Suite& s) {
  if (cfg.suite_version.empty() || s.version == s.latest) return "";
  return cfg.file.string() + " pins suite.version " + s.version + ", but " + s.dir.string() +
         "'s latest version is " + s.latest + ": this run tests " + s.version + ". To test " + s.latest +
         ", set suite.version: " + s.latest +
         " (or remove the pin: no version means the latest), record it, and accept it with gate baseline "
         "update";
}

} // namespace

RunResult run_from_options(const po::variables_map& vm) {
  const fs::path config_file = vm["config"].as<std::string>();
  const bool quiet = vm.count("quiet") != 0;
  RunResult result;
  result.config = load_config(config_file, overrides_from(vm));
  const config::Config& cfg = result.config;
  // A replay makes no client, which is where the key is otherwise
  // registered; entries written by an older gate may still hold it.
  register_configured_key(cfg);

  const std::string started = utc_now_iso();
  pad_thread_heaps(); // the suite, the requests, the runs and report.json are built on several threads
  // Held until the process exits (keep_until_exit): freeing 20,000 cases
  // and their compiled regexes at the end of a run is pure waiting.
  // The prompt templates are read and rendered into the cases before any
  // request: a bad variable stops here (exit 2), not halfway through a run.
  const prompt::Prompts prompts = prompt::load(cfg);
  suite::Suite loaded = suite::load(cfg.suite, cfg.suite_version);
  prompt::apply(loaded, prompts);
  const suite::Suite& s = keep_until_exit(std::move(loaded));
  result.suite = &s;
  if (!cfg.suite_sha256.empty() && cfg.suite_sha256 != s.sha256)
    throw Error(Exit::bad_input, cfg.file.string() + ": suite.sha256 pins " + cfg.suite_sha256 + " but " +
                                     s.name + " " + s.version + " has " + s.sha256);
  result.suite_note = pinned_not_latest(cfg, s);
  // The first line: a run of an older version than the suite's latest is
  // easy to mistake for a run of the latest.
  if (!result.suite_note.empty()) std::cerr << "gate: warning: " << terminal_safe(result.suite_note) << "\n";
  std::vector<const suite::Case*> cases = run::select(s, cfg);
  if (cases.empty()) {
    // A shard of a small suite may hold no task: its partial report is
    // empty, not an error; only a filter that matches nothing at all is.
    config::Config whole = cfg;
    whole.shard.reset();
    if (!cfg.shard || run::select(s, whole).empty())
      throw Error(Exit::bad_input, "no task of suite " + s.name + " matches --filter");
  }

  std::optional<cache::Store> store;
  if (cfg.cache.mode != config::CacheMode::off) {
    store.emplace(cfg.cache.dir);
    store->set_remote(open_remote(cfg.cache, process_env()));
  }
  net::LazyClient client(cfg.model, process_env());
  run::Inputs in;
  in.suite = &s;
  in.cases = cases;
  in.config = &cfg;
  in.env = &process_env();
  in.store = store ? &*store : nullptr;
  if (vm.count("trusted-cache")) result.trusted_cache = vm["trusted-cache"].as<std::string>();
  const std::optional<cache::Store> trusted = open_trusted(result.trusted_cache);
  if (trusted) in.trusted = &*trusted;
  in.client = [&]() -> model::ModelClient& { return client.get(); };
  install_stop_handlers();
  in.stop = &stop_requested();
  in.keep_workdirs = vm.count("keep-workdirs") != 0;
  in.workdir_root = cfg.agent_workdir; // "" = the system temp directory

  run::Outcome outcome;
  {
    ProgressPrinter progress(quiet);
    outcome = run::execute(in, progress.callbacks());
  }
  for (const auto& w : outcome.warnings)
    std::cerr << "gate: warning: " << terminal_safe(w) << "\n";
  if (store && store->remote()) {
    result.remote_failure = remote_failure_text(store->remote()->failure());
    if (!result.remote_failure.empty())
      std::cerr << "gate: warning: " << terminal_safe(result.remote_failure) << "\n";
  }
  for (const auto& k : outcome.kept_workdirs)
    std::cerr << "gate: kept work copy of " << terminal_safe(k) << "\n";
  // Before the misses: a rewritten answer is the graver finding.
  if (!outcome.tampered.empty()) refuse_tampered(outcome.tampered, *store, *trusted);
  if (!outcome.misses.empty() && outcome.fatal.empty()) {
    result.code = report_misses(outcome, cfg, config_file);
    return result;
  }
  if (!outcome.untrusted.empty()) {
    result.recorded_outside_ci = recorded_outside_ci(outcome.untrusted, *trusted, "");
    std::cerr << "gate: warning: " << terminal_safe(result.recorded_outside_ci) << "\n";
  }

  const std::string fatal = outcome.fatal;
  const Exit fatal_code = outcome.fatal_code;
  result.report = run::assemble(std::move(outcome), s, cfg, started, utc_now_iso());
  result.report->prompts = prompts.used;
  ensure_directory(cfg.outputs.dir);
  const fs::path json_path = config::output_path(cfg.outputs, cfg.outputs.json);
  result.report->resumed = resumed_from(json_path, *result.report);
  const report::Report& r = *result.report;
  // The Markdown and JUnit forms are rendered from the finished report on
  // their own threads while the JSON is written: for a large suite the three
  // take the time of the largest, not the sum. Each is atomic on its own.
  std::future<void> md, xml;
  if (auto path = config::output_path(cfg.outputs, cfg.outputs.markdown); !path.empty())
    md = std::async(std::launch::async,
                    [path, &r] { write_file_atomically(path, render::report_markdown(r)); });
  if (auto path = config::output_path(cfg.outputs, cfg.outputs.junit); !path.empty())
    xml =
        std::async(std::launch::async, [path, &r] { write_file_atomically(path, render::report_junit(r)); });
  std::exception_ptr json_error;
  try {
    report::write(r, json_path);
  } catch (...) {
    json_error = std::current_exception();
  }
  // Joined before anything is rethrown: no thread outlives the report.
  std::exception_ptr form_error;
  for (std::future<void>* f : {&md, &xml}) {
    if (!f->valid()) continue;
    try {
      f->get();
    } catch (...) {
      if (!form_error) form_error = std::current_exception();
    }
  }
  if (json_error) std::rethrow_exception(json_error);
  if (form_error) std::rethrow_exception(form_error);

  const auto& st = r.stats;
  const report::Measured measured = report::measured(r);
  // Over the measured runs only: an aborted or rate-limited run says how
  // much of the suite it measured, and a rate over nothing is n/a.
  std::string over = std::to_string(r.tasks.size()) + " tasks x " + std::to_string(cfg.runs) + " runs";
  if (!r.complete || measured.errored > 0)
    over = std::to_string(measured.measured()) + " measured runs of " + std::to_string(st.overall.tasks) +
           " tasks";
  std::string success = report::success_text(r, measured);
  if (measured.measured() > 0) {
    char interval[64];
    std::snprintf(interval, sizeof interval, " [%.1f, %.1f]", st.overall.interval.low * 100,
                  st.overall.interval.high * 100);
    success += interval;
  }
  const std::string gap = report::gap_text(r);
  char line[512];
  std::snprintf(line, sizeof line,
                "%s %s: success %s over %s; consistency gap %s; %lld of %lld runs replayed; %lld errored",
                r.suite.name.c_str(), r.suite.version.c_str(), success.c_str(), over.c_str(), gap.c_str(),
                static_cast<long long>(st.cache_hits), static_cast<long long>(st.total_runs),
                static_cast<long long>(st.errored_runs));
  std::string summary = line;
  if (r.not_made > 0) summary += "; " + std::to_string(r.not_made) + " not made";
  if (std::int64_t absorbed = report::absorbed_rate_limits(r); absorbed > 0)
    summary += "; " + std::to_string(absorbed) + " rate-limit answers (429) absorbed by retries";
  if (r.resumed) {
    // The time comes from a file on disk; the summary is printed through
    // terminal_safe below like the rest.
    const std::string when = r.resumed->from_started_at.substr(0, 64);
    summary += "; " + std::to_string(r.resumed->runs) + " resumed from the interrupted run of " + when;
  }
  if (store && store->remote()) summary += "; " + cache::counts_text(store->remote()->counts());
  std::cout << terminal_safe(summary) << "\nreport: " << terminal_safe(json_path.string()) << "\n";
  // Runs that never reached the model (refused, unresolved, TLS, timed out)
  // are a setup problem more often than the model's: point at the command
  // that checks the setup.
  std::size_t unreached = 0;
  std::string first;
  for (const auto& t : r.tasks)
    for (const auto& run : t.runs)
      if (run.error == "connection" || run.error == "timeout")
        if (unreached++ == 0) first = run.error_message;
  if (unreached > 0)
    std::cerr << "gate: " << unreached << " run(s) could not reach the model (first: " << terminal_safe(first)
              << "); `gate doctor --config " << terminal_safe(shell_word(config_file.string()))
              << "` checks the URL, the key and the connection\n";

  if (!fatal.empty()) {
    std::cerr << "gate: error: " << terminal_safe(fatal) << " (partial report marked incomplete)\n";
    result.code = static_cast<int>(fatal_code);
  } else if (int code = stop_exit_code(); code != 0) {
    std::cerr << "gate: interrupted; partial report marked incomplete. Rerun to resume from the cache.\n";
    result.code = code;
  } else if (measured.runs > 0 && !report::can_judge(measured, cfg.thresholds.max_errored_runs_pct)) {
    // (An empty shard of a small suite ran nothing and is not an error.)
    std::cerr << "gate: error: could not measure: "
              << terminal_safe(report::over_limit_text(measured, "thresholds.max_errored_runs_pct",
                                                       cfg.thresholds.max_errored_runs_pct))
              << "; errored runs are neither passes nor failures, so nothing is judged\n";
    result.code = static_cast<int>(Exit::cannot_run);
    result.unmeasured = true;
  }
  return result;
}

int cmd_run(const Args& args) {
  po::options_description desc("gate run options");
  add_run_options(desc);
  po::variables_map vm;
  if (!parse_options(args, desc, vm, "gate run [--config gate.yaml] [options]")) return 0;
  RunResult run = run_from_options(vm);
  const int code = run.code;
  keep_until_exit(std::move(run)); // freeing 100,000 runs costs more than the exit
  return code;
}

} // namespace gate::cli

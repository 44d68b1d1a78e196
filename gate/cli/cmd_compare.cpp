#include <future>
#include <iostream>

#include <gate/cli/commands.hpp>
#include <gate/cli/run_steps.hpp>
#include <gate/cli/verdict_output.hpp>
#include <gate/compare/compare.hpp>
#include <gate/render/verdict_markdown.hpp>
#include <gate/report/measured.hpp>
#include <gate/report/report.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/heap.hpp>
#include <gate/util/keep.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

namespace {

std::optional<config::Config> optional_config(const po::variables_map& vm) {
  if (!vm.count("config")) return std::nullopt;
  return load_config(vm["config"].as<std::string>(), {});
}

} // namespace

namespace {

// The two reports are read at once, one per core: for large suites reading
// is nearly all of a comparison. A failure of the baseline is reported
// first whichever thread finishes first, so the message does not depend on
// timing.
std::pair<report::Report, report::Report> read_both(const fs::path& b_file, const fs::path& c_file,
                                                    const report::ReadOptions& o) {
  pad_thread_heaps(); // the baseline is read on a second thread
  auto baseline = std::async(std::launch::async, [&] { return read_report(b_file, "baseline", o); });
  report::Report cur;
  std::exception_ptr cur_error;
  try {
    cur = read_report(c_file, "current report", o);
  } catch (...) {
    cur_error = std::current_exception();
  }
  report::Report base = baseline.get();
  if (cur_error) std::rethrow_exception(cur_error);
  return {std::move(base), std::move(cur)};
}

} // namespace

int cmd_compare(const Args& args) {
  po::options_description desc("gate compare options");
  desc.add_options()("help,h", "show this help")("baseline,b", po::value<std::string>()->required(),
                                                 "the committed baseline report")(
      "current", po::value<std::string>()->required(),
      "the report to judge")("config,c", po::value<std::string>(), "take thresholds from this gate.yaml")(
      "elo",
      "add the current report's Elo against the baseline's (Bradley–Terry over tasks) to the Markdown");
  add_compare_options(desc);
  po::variables_map vm;
  if (!parse_options(args, desc, vm, "gate compare --baseline BASE.json --current report.json [options]"))
    return 0;
  auto cfg = optional_config(vm);
  const fs::path b_file = vm["baseline"].as<std::string>(), c_file = vm["current"].as<std::string>();
  const VerdictFiles files = verdict_files(vm, {});
  auto [base, cur] = read_both(b_file, c_file, read_options_for(files));
  compare::Verdict v = compare_files(base, cur, compare_options(vm, cfg ? &*cfg : nullptr), b_file, c_file);
  const int code = emit_verdict(v, base, cur, vm, files);
  keep_until_exit(std::move(base));
  keep_until_exit(std::move(cur));
  return code;
}

int cmd_baseline(const Args& args) {
  po::options_description desc("gate baseline options");
  desc.add_options()("help,h", "show this help")("action", po::value<std::string>(), "update")(
      "report,r", po::value<std::string>(),
      "the report to promote (default: report.json in gate.yaml's outputs.dir)")(
      "baseline,b", po::value<std::string>(), "the baseline file (default: `baseline` in gate.yaml)")(
      "config,c", po::value<std::string>(),
      "the gate.yaml naming the baseline and report (default: ./gate.yaml when it exists)")(
      "force", "replace the baseline even when the suite changed or the report's runs mostly errored");
  po::positional_options_description pos;
  pos.add("action", 1);
  po::variables_map vm;
  if (!parse_options(args, desc, vm,
                     "gate baseline update [--config gate.yaml] [--report FILE] [--baseline FILE] [--force]",
                     &pos))
    return 0;
  if (!vm.count("action") || vm["action"].as<std::string>() != "update")
    throw Error(Exit::bad_input,
                "usage: gate baseline update [--config gate.yaml] [--report FILE] [--baseline FILE]");
  // Like every other command, the configuration is ./gate.yaml unless named;
  // without one, --report and --baseline must both be given.
  auto cfg = optional_config(vm);
  if (!cfg && fs::exists("gate.yaml")) cfg = load_config("gate.yaml", {});
  fs::path b_file =
      vm.count("baseline") ? fs::path(vm["baseline"].as<std::string>()) : (cfg ? cfg->baseline : fs::path());
  if (b_file.empty()) throw Error(Exit::bad_input, "gate baseline update: pass --baseline FILE or --config");
  const fs::path r_file = vm.count("report") ? fs::path(vm["report"].as<std::string>())
                          : cfg              ? cfg->outputs.dir / "report.json"
                                             : fs::path();
  if (r_file.empty())
    throw Error(Exit::bad_input,
                "gate baseline update: pass --report FILE or --config (no ./gate.yaml here)");
  report::Report next = read_report(r_file, "report");
  if (!next.complete)
    throw Error(Exit::bad_input, r_file.string() + ": the report is incomplete (" + next.incomplete_reason +
                                     "); an interrupted run cannot become the baseline");
  const bool force = vm.count("force") != 0;
  const double max_errored =
      cfg ? cfg->thresholds.max_errored_runs_pct : config::Thresholds{}.max_errored_runs_pct;
  if (const report::Measured m = report::measured(next); !report::can_judge(m, max_errored)) {
    const std::string what =
        r_file.string() + ": " + report::over_limit_text(m, "thresholds.max_errored_runs_pct", max_errored);
    if (!force)
      throw Error(Exit::bad_input, what + "; a baseline of errors would make every later comparison "
                                          "meaningless (pass --force to promote it anyway)");
    std::cerr << "gate: warning: --force: promoting a report that could not measure the suite: "
              << terminal_safe(what) << "\n";
  }

  if (fs::exists(b_file)) {
    report::Report old = read_report(b_file, "baseline", report::ReadOptions{false});
    const bool suite_changed = old.suite.name != next.suite.name || old.suite.version != next.suite.version ||
                               old.suite.sha256 != next.suite.sha256;
    if (suite_changed && !force)
      throw Error(Exit::bad_input, "the suite changed (" + old.suite.name + " " + old.suite.version + " → " +
                                       next.suite.name + " " + next.suite.version +
                                       "); pass --force to replace the baseline anyway");
    compare::Options o = compare_options(vm, cfg ? &*cfg : nullptr);
    o.allow_suite_change = true;
    o.allow_partial = true; // the old baseline may predate the rule; the new one is checked above
    compare::Verdict v = compare::compare(old, next, o);
    std::cout << "What changes against the current baseline:\n\n"
              << terminal_safe(render::verdict_markdown(v, {65536, r_file.filename().string()}),
                               Newlines::keep)
              << "\n";
  }
  // The first baseline of a repository usually goes into a directory that
  // does not exist yet (baselines/).
  if (b_file.has_parent_path()) ensure_directory(b_file.parent_path());
  report::write(next, b_file);
  std::cout << "baseline " << terminal_safe(b_file.string()) << " updated from "
            << terminal_safe(r_file.string()) << " (" << next.tasks.size()
            << " tasks); commit it with the change it accepts\n";
  return 0;
}

} // namespace gate::cli

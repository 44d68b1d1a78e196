// gate check: run the suite, compare with the baseline, confirm a verdict
// in doubt when asked, and emit it.
#include <gate/cli/commands.hpp>
#include <gate/cli/confirm.hpp>

#include <optional>

#include <gate/cli/run_steps.hpp>
#include <gate/cli/verdict_output.hpp>
#include <gate/compare/compare.hpp>
#include <gate/report/report.hpp>
#include <gate/util/error.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

int cmd_check(const Args& args) {
  po::options_description desc("gate check options (run, then compare with the configured baseline)");
  add_run_options(desc);
  desc.add_options()("baseline,b", po::value<std::string>(),
                     "the baseline (default: `baseline` in gate.yaml)")(
      "confirm", po::value<int>(),
      "when the verdict is in doubt (inconclusive, a row crossed without significance, a flipped task), "
      "at least N fresh runs per side of the tasks that decide it (default: confirm.runs, for a verdict "
      "left undecided, not for flips alone; 0 = off)");
  add_compare_options(desc);
  po::variables_map vm;
  if (!parse_options(args, desc, vm, "gate check [--config gate.yaml] [options]")) return 0;
  // Bad options fail before the suite runs, not after minutes of calls.
  std::optional<int> confirm_runs;
  if (vm.count("confirm")) {
    confirm_runs = vm["confirm"].as<int>();
    if (*confirm_runs < 0 || *confirm_runs > 100)
      throw Error(Exit::bad_input,
                  "--confirm: expected runs in 0..100, got " + std::to_string(*confirm_runs));
  }
  // The baseline is read before the run: a missing or broken one fails in
  // a second, not after the whole suite ran.
  config::Config cfg = load_config(vm["config"].as<std::string>(), {});
  fs::path b_file = vm.count("baseline") ? fs::path(vm["baseline"].as<std::string>()) : cfg.baseline;
  if (b_file.empty())
    throw Error(Exit::bad_input,
                cfg.file.string() + ": no baseline configured (set `baseline:` or pass --baseline)");
  // The commands that make a missing baseline name this config, so that
  // they work as printed from here.
  if (!fs::exists(b_file))
    throw Error(Exit::bad_input,
                missing_baseline(b_file, vm["config"].defaulted() ? "" : vm["config"].as<std::string>()));
  report::Report base = read_report(b_file, "baseline", read_options_for(verdict_files(vm, cfg.outputs.dir)));

  RunResult run = run_from_options(vm);
  if (!run.report) return run.code;
  // An incomplete run is never judged; one with too many errored runs is
  // compared, so that its verdict says "could not measure" to every reader.
  if (run.code != 0 && !run.unmeasured) return run.code;
  const fs::path c_file = config::output_path(run.config.outputs, run.config.outputs.json);
  compare::Verdict v = compare_files(base, *run.report, compare_options(vm, &run.config), b_file, c_file);
  // In every verdict form (text, Markdown, JSON, JUnit), so a reviewer sees
  // which answers came from the branch itself.
  if (!run.recorded_outside_ci.empty()) v.warnings.push_back(run.recorded_outside_ci);
  if (!run.remote_failure.empty()) v.warnings.push_back(run.remote_failure);
  if (!run.suite_note.empty()) v.warnings.insert(v.warnings.begin(), run.suite_note);
  ConfirmRequest ask{confirm_runs.value_or(run.config.confirm.runs), run.config.confirm.max_calls,
                     confirm_runs.has_value(),
                     confirm_runs.has_value() || run.config.confirm.when == "flips"};
  const int confirm_code = confirm(v, base, *run.report, run, ask, vm.count("quiet") != 0);
  const int code = emit_verdict(v, base, *run.report, vm, verdict_files(vm, run.config.outputs.dir));
  return confirm_code != 0 ? confirm_code : code;
}

} // namespace gate::cli

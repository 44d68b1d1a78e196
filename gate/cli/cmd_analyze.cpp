#include <algorithm>
#include <cmath>
#include <glob.h>
#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/ingest/ingest.hpp>
#include <gate/render/markdown.hpp>
#include <gate/report/measured.hpp>
#include <gate/report/report.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/format.hpp>
#include <gate/util/input.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

namespace {

bool has_wildcard(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// Globs are expanded here, not by a shell, so that CI steps and Windows-
// style invocations behave alike; a pattern that matches nothing is an
// error rather than an empty report.
std::vector<std::string> expand(const std::vector<std::string>& patterns) {
  std::vector<std::string> files;
  for (const auto& p : patterns) {
    if (!has_wildcard(p)) {
      files.push_back(p);
      continue;
    }
    glob_t g{};
    int rc = ::glob(p.c_str(), GLOB_ERR, nullptr, &g);
    if (rc == 0)
      for (std::size_t i = 0; i < g.gl_pathc; ++i)
        files.emplace_back(g.gl_pathv[i]);
    ::globfree(&g);
    if (rc == GLOB_NOMATCH) throw Error(Exit::bad_input, "gate analyze: no file matches \"" + p + "\"");
    if (rc != 0) throw Error(Exit::bad_input, "gate analyze: cannot expand \"" + p + "\"");
  }
  return files;
}

// A file, or τ²-bench's directory format (Results.save(format="dir")): a
// directory holding results.json and simulations/, or that results.json,
// whose simulation files are read with it, sorted by name.
ingest::Input input_of(const std::string& arg) {
  fs::path meta = arg;
  if (fs::is_directory(meta)) meta /= "results.json";
  ingest::Input in{meta.string(), read_file(meta)};
  const fs::path sims =
      meta.parent_path().empty() ? fs::path("simulations") : meta.parent_path() / "simulations";
  if (meta.filename() != "results.json" || !fs::is_directory(sims)) return in;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(sims))
    if (e.path().extension() == ".json" && e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    in.simulations.push_back({f.string(), read_file(f)});
  return in;
}

} // namespace

int cmd_analyze(const Args& args) {
  po::options_description desc("gate analyze options");
  desc.add_options()("help,h", "show this help")("out,o",
                                                 po::value<std::string>()->default_value(".gate/out"),
                                                 "directory for report.json and report.md")(
      "format", po::value<std::string>()->default_value("auto"),
      "auto, jsonl, tau-bench, tau2, inspect or promptfoo: what the logs are (auto: by their shape)")(
      "map", po::value<std::vector<std::string>>()->composing(),
      "field=path: read a field from another (dotted) path; repeatable")(
      "pass-threshold", po::value<double>(), "a numeric reward at or above this passes (1 always passes)")(
      "scorer", po::value<std::string>(),
      "Inspect AI logs: the scorer whose score decides a sample (default: every scorer's must pass)")(
      "suite-name", po::value<std::string>()->default_value(report::k_unnamed_suite),
      "suite name in the report")("suite-version",
                                  po::value<std::string>()->default_value(report::k_unnamed_version),
                                  "suite version in the report")(
      "max-errored-runs-pct", po::value<double>()->default_value(config::Thresholds{}.max_errored_runs_pct),
      "above this % of errored runs the logs measured nothing: exit 3 after writing the report")(
      "token-band-pct", po::value<double>()->default_value(25.0),
      "token band around each task's median, in %")("include-polluted",
                                                    "count route-polluted tasks in the consistency gap")(
      "config,c", po::value<std::string>(),
      "redact the key in this gate.yaml's model.api_key_env (default: ./gate.yaml when there is one)")(
      "logs", po::value<std::vector<std::string>>()->multitoken(),
      "run logs: τ-bench, τ²-bench, Inspect AI (JSON) or promptfoo results, JSON arrays or JSONL; files or "
      "globs");
  po::positional_options_description pos;
  pos.add("logs", -1);
  po::variables_map vm;
  if (!parse_options(args, desc, vm,
                     "gate analyze LOG... [--format F] [--map field=path]... [--out DIR] [options]", &pos))
    return 0;
  if (!vm.count("logs"))
    throw Error(Exit::bad_input, "gate analyze: no run logs given (see gate analyze --help)");

  // Another harness's logs may hold the key the team's config names; it is
  // registered before any log is read, so no answer carries it into a file.
  if (vm.count("config"))
    register_configured_key(load_config(vm["config"].as<std::string>(), {}));
  else if (fs::is_regular_file("gate.yaml"))
    register_configured_key(load_config("gate.yaml", {}));

  ingest::Analysis a;
  a.suite.name = vm["suite-name"].as<std::string>();
  a.suite.version = vm["suite-version"].as<std::string>();
  a.options.format = ingest::parse_format(vm["format"].as<std::string>());
  if (vm.count("map")) a.options.map = ingest::parse_map(vm["map"].as<std::vector<std::string>>());
  if (vm.count("pass-threshold")) {
    double t = vm["pass-threshold"].as<double>();
    if (!std::isfinite(t)) throw Error(Exit::bad_input, "--pass-threshold: expected a finite number");
    a.options.pass_threshold = t;
  }
  if (vm.count("scorer")) {
    a.options.scorer = vm["scorer"].as<std::string>();
    if (a.options.scorer.empty()) throw Error(Exit::bad_input, "--scorer: expected a scorer's name");
  }
  a.metrics.token_band_pct = vm["token-band-pct"].as<double>();
  if (!(a.metrics.token_band_pct >= 0) || !std::isfinite(a.metrics.token_band_pct))
    throw Error(Exit::bad_input, "--token-band-pct: expected a number >= 0");
  a.metrics.include_polluted = vm.count("include-polluted") != 0;

  std::vector<ingest::Input> inputs;
  for (const auto& file : expand(vm["logs"].as<std::vector<std::string>>()))
    inputs.push_back(input_of(file));
  report::Report r = ingest::analyze(inputs, a);

  const fs::path dir = vm["out"].as<std::string>();
  ensure_directory(dir);
  report::write(r, dir / "report.json");
  write_file_atomically(dir / "report.md", render::report_markdown(r));
  const auto& s = r.stats;
  const report::Measured measured = report::measured(r);
  std::cout << terminal_safe(
                   r.suite.name + " " + r.suite.version + " (from " + std::to_string(inputs.size()) +
                   (inputs.size() == 1 ? " log" : " logs") + "): " + std::to_string(r.tasks.size()) +
                   " tasks, " + std::to_string(s.total_runs) + " runs, success " +
                   report::success_text(r, measured) + ", consistency gap " + report::gap_text(r) + ", " +
                   (s.polluted_tasks ? std::to_string(*s.polluted_tasks) : std::string("n/a")) +
                   " route-polluted tasks, " + std::to_string(s.errored_runs) + " errored")
            << "\nreport: " << terminal_safe((dir / "report.json").string()) << "\n";
  const double max_errored = vm["max-errored-runs-pct"].as<double>();
  if (!report::can_judge(measured, max_errored)) {
    std::cerr << "gate: error: could not measure: "
              << terminal_safe(report::over_limit_text(measured, "--max-errored-runs-pct", max_errored))
              << "\n";
    return static_cast<int>(Exit::cannot_run);
  }
  return 0;
}

} // namespace gate::cli

#include <gate/cli/common.hpp>
#include <gate/cli/verdict_output.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include <gate/rank/rank.hpp>
#include <gate/render/annotations.hpp>
#include <gate/render/html.hpp>
#include <gate/render/rank_output.hpp>
#include <gate/render/verdict_json.hpp>
#include <gate/render/verdict_junit.hpp>
#include <gate/render/verdict_markdown.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>
#include <gate/util/text.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t k_comment_limit = 65536;   // GitHub's PR comment body limit
constexpr std::size_t k_summary_limit = 1 << 20; // GitHub's step summary limit

struct ThresholdFlag {
  const char* flag;
  std::optional<double> config::Thresholds::*field;
};

const ThresholdFlag k_threshold_flags[] = {
    {"max-success-drop-pp", &config::Thresholds::max_success_drop_pp},
    {"max-consistency-gap-rise-pp", &config::Thresholds::max_consistency_gap_rise_pp},
    {"max-pass-k-drop-pp", &config::Thresholds::max_pass_k_drop_pp},
    {"max-token-rise-pct", &config::Thresholds::max_token_rise_pct},
    {"max-p95-latency-rise-pct", &config::Thresholds::max_p95_latency_rise_pct},
    {"max-error-rate-rise-pp", &config::Thresholds::max_error_rate_rise_pp},
};

std::optional<double> parse_threshold(const std::string& flag, const std::string& text) {
  if (text == "off" || text == "none") return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(v >= 0) || v > 1e6)
    throw Error(Exit::bad_input, "--" + flag + ": expected a number >= 0 or \"off\", got \"" + text + "\"");
  return v;
}

// `render` runs only when the file is wanted: the HTML of a 100,000-task
// comparison is hundreds of megabytes of work.
template <class Render> void write_if(const fs::path& path, Render render) {
  if (path.empty()) return;
  if (path.has_parent_path()) ensure_directory(path.parent_path());
  write_file_atomically(path, render());
}

void append_step_summary(const std::string& markdown) {
  const std::string path = process_env().get("GITHUB_STEP_SUMMARY");
  if (path.empty()) return;
  std::ofstream out(path, std::ios::app | std::ios::binary);
  if (!out) throw Error(Exit::cannot_run, std::string("cannot append to $GITHUB_STEP_SUMMARY ") + path);
  out << markdown << "\n";
}

// `gate compare --elo`: the current report's Elo against the baseline's
// (Bradley–Terry over the paired tasks), for the end of the Markdown.
std::string elo_section(const po::variables_map& vm, const report::Report& baseline,
                        const report::Report& current) {
  if (vm.count("elo") == 0) return "";
  rank::Options o;
  o.anchor = "baseline";
  o.order = rank::BudgetOrder::given;
  return "\n" + render::elo_section_markdown(
                    rank::rank({{"baseline", "baseline", &baseline}, {"current", "current", &current}}, o));
}

} // namespace

void add_compare_options(po::options_description& d) {
  d.add_options()("allow-suite-change", "compare reports of different suite versions (common tasks only)")(
      "allow-partial",
      "compare an interrupted, sharded or partly merged report (the verdict says what it covers)")(
      "include-polluted", "count route-polluted tasks in the consistency gap")(
      "alpha", po::value<double>(), "significance level for the whole gate (default 0.05)")(
      "max-new-failures", po::value<std::string>(),
      "strict rule: fail when more tasks flip than this (\"off\" unsets)")(
      "markdown", po::value<std::string>(), "write the Markdown verdict (PR comment form) here")(
      "json", po::value<std::string>(), "write the verdict as JSON (gate.verdict/1) here")(
      "junit", po::value<std::string>(), "write the verdict as JUnit XML here")(
      "html", po::value<std::string>(), "write a self-contained HTML report here")(
      "format", po::value<std::string>()->default_value("text"), "what to print: text | md | json");
  for (const auto& t : k_threshold_flags)
    d.add_options()(t.flag, po::value<std::string>(), "threshold (\"off\" unsets)");
}

compare::Options compare_options(const po::variables_map& vm, const config::Config* cfg) {
  compare::Options o;
  if (cfg != nullptr) {
    o.thresholds = cfg->thresholds;
    o.include_polluted = cfg->include_polluted;
  }
  for (const auto& t : k_threshold_flags)
    if (vm.count(t.flag)) o.thresholds.*t.field = parse_threshold(t.flag, vm[t.flag].as<std::string>());
  if (vm.count("alpha")) {
    double a = vm["alpha"].as<double>();
    if (!(a > 0 && a <= 0.5)) throw Error(Exit::bad_input, "--alpha: expected a number in (0, 0.5]");
    o.thresholds.alpha = a;
  }
  if (vm.count("max-new-failures")) {
    std::string text = vm["max-new-failures"].as<std::string>();
    if (text == "off" || text == "none") {
      o.thresholds.max_new_failures.reset();
    } else {
      char* end = nullptr;
      long long n = std::strtoll(text.c_str(), &end, 10);
      if (end == text.c_str() || *end != '\0' || n < 0)
        throw Error(Exit::bad_input, "--max-new-failures: expected a whole number >= 0 or \"off\"");
      o.thresholds.max_new_failures = n;
    }
  }
  o.allow_suite_change = vm.count("allow-suite-change") != 0;
  o.allow_partial = vm.count("allow-partial") != 0;
  o.include_polluted = o.include_polluted || vm.count("include-polluted") != 0;
  return o;
}

VerdictFiles verdict_files(const po::variables_map& vm, const fs::path& default_dir) {
  VerdictFiles f;
  auto pick = [&](const char* opt, const char* name) -> fs::path {
    if (vm.count(opt)) return vm[opt].as<std::string>();
    return default_dir.empty() ? fs::path() : default_dir / name;
  };
  f.markdown = pick("markdown", "verdict.md");
  f.json = pick("json", "verdict.json");
  f.junit = pick("junit", "verdict.xml");
  f.html = pick("html", "verdict.html");
  return f;
}

int emit_verdict(const compare::Verdict& v, const report::Report& baseline, const report::Report& current,
                 const po::variables_map& vm, const VerdictFiles& files) {
  const std::string hint = files.html.empty() ? "the verdict JSON" : files.html.filename().string();
  const std::string elo = elo_section(vm, baseline, current);
  render::VerdictMarkdownOptions comment{k_comment_limit - elo.size(), hint};
  const std::string markdown = render::verdict_markdown(v, comment) + elo;
  write_if(files.markdown, [&] { return markdown; });
  write_if(files.json, [&] { return render::verdict_json(v); });
  write_if(files.junit, [&] { return render::verdict_junit(v); });
  write_if(files.html, [&] { return render::verdict_html(v, baseline, current); });

  if (process_env().get("GITHUB_ACTIONS") == "true")
    std::cout << terminal_safe(render::github_annotations(v, render::random_stop_token()), Newlines::keep);
  if (process_env().has("GITHUB_STEP_SUMMARY"))
    append_step_summary(render::verdict_markdown(v, {k_summary_limit - elo.size(), hint}) + elo);

  const std::string format = vm.count("format") ? vm["format"].as<std::string>() : "text";
  if (format == "md") {
    std::cout << terminal_safe(markdown, Newlines::keep);
  } else if (format == "json") {
    std::cout << terminal_safe(render::verdict_json(v), Newlines::keep);
  } else if (format == "text") {
    // The headline and reasons are already written for people; the rest is
    // in the files.
    std::cout << terminal_safe(v.headline) << "\n";
    for (const auto& r : v.reasons)
      std::cout << "  - " << terminal_safe(r) << "\n";
    for (const auto& r : v.inconclusive)
      std::cout << "  ? " << terminal_safe(r) << "\n";
    for (const auto& w : v.warnings)
      std::cout << "  ! " << terminal_safe(w) << "\n";
    if (!files.markdown.empty()) std::cout << "verdict: " << terminal_safe(files.markdown.string()) << "\n";
  } else {
    throw Error(Exit::bad_input, "--format: expected text, md or json, got \"" + format + "\"");
  }
  return static_cast<int>(v.exit);
}

compare::Verdict compare_files(const report::Report& b, const report::Report& c, const compare::Options& o,
                               const fs::path& b_file, const fs::path& c_file) {
  try {
    return compare::compare(b, c, o);
  } catch (const Error& e) {
    throw Error(e.code(), std::string(e.what()) + " (baseline " + b_file.string() + ", current " +
                              c_file.string() + ")");
  }
}

std::string missing_baseline(const fs::path& file, const std::string& config) {
  const std::string with = config.empty() ? "" : " --config " + shell_word(config);
  return "no baseline at " + file.string() +
         " (a missing baseline is never read as \"all passed\"; create one with `gate run" + with +
         "`, then `gate baseline update" + with + "`)";
}

report::Report read_report(const fs::path& file, const char* role, const report::ReadOptions& o) {
  if (!fs::exists(file))
    throw Error(Exit::bad_input, std::string(role) == "baseline"
                                     ? missing_baseline(file, "")
                                     : std::string("no ") + role + " at " + file.string());
  return report::read(file, o);
}

} // namespace gate::cli

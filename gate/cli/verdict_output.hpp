#pragma once

#include <filesystem>
#include <string>

#include <gate/cli/common.hpp>
#include <gate/compare/compare.hpp>
#include <gate/report/report.hpp>

namespace gate::cli {

// Options shared by `gate compare`, `gate check` and `gate baseline update`:
// thresholds (overriding the config's), output forms.
void add_compare_options(po::options_description& d);

// Thresholds: the config's, then each --max-… flag ("off" unsets one).
compare::Options compare_options(const po::variables_map& vm, const config::Config* cfg);

struct VerdictFiles {
  std::filesystem::path markdown, json, junit, html;
};
VerdictFiles verdict_files(const po::variables_map& vm, const std::filesystem::path& default_dir);

// Writes the requested forms, prints the verdict (text, md or json per
// --format), GitHub annotations and step summary when running in Actions.
// Returns the verdict's exit code.
int emit_verdict(const compare::Verdict& v, const report::Report& baseline, const report::Report& current,
                 const po::variables_map& vm, const VerdictFiles& files);

// compare::compare, with the two files named in a suite-mismatch error
// (compare() does not know file names). gate compare and gate check.
compare::Verdict compare_files(const report::Report& baseline, const report::Report& current,
                               const compare::Options& o, const std::filesystem::path& baseline_file,
                               const std::filesystem::path& current_file);

// The error for a baseline that is not there, with the commands that make
// one; `config` is the --config they need ("" for ./gate.yaml).
std::string missing_baseline(const std::filesystem::path& file, const std::string& config);

// Reads a report or baseline, naming which one in errors.
report::Report read_report(const std::filesystem::path& file, const char* role,
                           const report::ReadOptions& o = {});

// What a verdict needs of the reports it compares: the HTML report shows
// every run; the other forms only the failing runs' checks and answers.
inline report::ReadOptions read_options_for(const VerdictFiles& f) {
  report::ReadOptions o;
  o.details = !f.html.empty();
  return o;
}

} // namespace gate::cli

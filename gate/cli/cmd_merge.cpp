#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/cli/verdict_output.hpp>
#include <gate/merge/merge.hpp>
#include <gate/report/measured.hpp>
#include <gate/report/report.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/format.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

int cmd_merge(const Args& args) {
  po::options_description desc("gate merge options");
  desc.add_options()("help,h", "show this help")("out,o", po::value<std::string>()->required(),
                                                 "where to write the merged report")(
      "allow-partial", "merge even when shards are missing (the result is marked incomplete)")(
      "reports", po::value<std::vector<std::string>>()->multitoken(),
      "partial reports (from gate run --shard i/n)");
  po::positional_options_description pos;
  pos.add("reports", -1);
  po::variables_map vm;
  if (!parse_options(args, desc, vm, "gate merge --out report.json PART.json... [--allow-partial]", &pos))
    return 0;
  if (!vm.count("reports")) throw Error(Exit::bad_input, "gate merge: no partial reports given");
  std::vector<merge::Part> parts;
  for (const auto& file : vm["reports"].as<std::vector<std::string>>())
    parts.push_back({file, read_report(file, "partial report")});
  merge::Options o;
  o.allow_partial = vm.count("allow-partial") != 0;
  const std::size_t given = parts.size();
  merge::Merged m = merge::merge(std::move(parts), o);

  const fs::path out = vm["out"].as<std::string>();
  if (out.has_parent_path()) ensure_directory(out.parent_path());
  report::write(m.report, out);
  const auto& r = m.report;
  std::cout << terminal_safe("merged " + std::to_string(given) + " of " + std::to_string(m.shard_count) +
                             " shards of " + r.suite.name + " " + r.suite.version + ": " +
                             std::to_string(r.tasks.size()) + " tasks, success " +
                             fixed(r.stats.overall.success_rate * 100) + "%, consistency gap " +
                             report::gap_text(r))
            << "\nreport: " << terminal_safe(out.string()) << "\n";
  if (!m.missing.empty())
    std::cerr << "gate: warning: " << terminal_safe(r.incomplete_reason)
              << "; the merged report is marked incomplete\n";
  return 0;
}

} // namespace gate::cli

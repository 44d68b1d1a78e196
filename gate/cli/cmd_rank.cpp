#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/rank/rank.hpp>
#include <gate/render/rank_output.hpp>
#include <gate/report/report.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t k_max_bootstrap = 1'000'000;

std::uint64_t parse_seed(const std::string& text) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text[0] == '-')
    throw Error(Exit::bad_input, "--seed: expected a whole number >= 0, got \"" + text + "\"");
  return v;
}

void write_form(const po::variables_map& vm, const char* option, const std::string& text) {
  if (!vm.count(option)) return;
  const fs::path path = vm[option].as<std::string>();
  if (path.has_parent_path()) ensure_directory(path.parent_path());
  write_file_atomically(path, text);
}

} // namespace

int cmd_rank(const Args& args) {
  po::options_description desc("gate rank options");
  desc.add_options()("help,h", "show this help")("anchor", po::value<std::string>()->required(),
                                                 "the baseline strategy's NAME (its Elo is 1000)")(
      "strategy", po::value<std::vector<std::string>>()->required(),
      "FILE:NAME, one per strategy (positional)")("markdown", po::value<std::string>(),
                                                  "also write the Markdown here")(
      "json", po::value<std::string>(), "write the ranking as JSON (gate.rank/1) here")(
      "csv", po::value<std::string>(), "write one CSV row per strategy here")(
      "svg", po::value<std::string>(), "write the chart (Elo against tokens per task) as SVG here")(
      "seed", po::value<std::string>()->default_value("1"), "bootstrap seed")(
      "bootstrap", po::value<std::int64_t>()->default_value(1000), "bootstrap resamples of the tasks")(
      "order", po::value<std::string>()->default_value("tokens"),
      "budget order: tokens (ascending tokens per task) or given (as listed)");
  po::positional_options_description pos;
  pos.add("strategy", -1);
  po::variables_map vm;
  if (!parse_options(args, desc, vm,
                     "gate rank --anchor NAME a.json:NAME b.json:NAME … [--markdown F] [--json F] [--csv F] "
                     "[--svg F] [--seed N] [--bootstrap N] [--order tokens|given]",
                     &pos))
    return 0;

  rank::Options o;
  o.anchor = vm["anchor"].as<std::string>();
  o.seed = parse_seed(vm["seed"].as<std::string>());
  o.bootstrap = vm["bootstrap"].as<std::int64_t>();
  if (o.bootstrap < 1 || o.bootstrap > k_max_bootstrap)
    throw Error(Exit::bad_input,
                "--bootstrap: expected a whole number from 1 to " + std::to_string(k_max_bootstrap));
  const std::string order = vm["order"].as<std::string>();
  if (order != "tokens" && order != "given")
    throw Error(Exit::bad_input, "--order: expected tokens or given, got \"" + order + "\"");
  o.order = order == "tokens" ? rank::BudgetOrder::tokens : rank::BudgetOrder::given;

  // Every argument is checked before any report is read: a typo fails at once.
  std::vector<rank::StrategySpec> specs;
  for (const auto& arg : vm["strategy"].as<std::vector<std::string>>())
    specs.push_back(rank::parse_strategy(arg));
  std::vector<report::Report> reports;
  reports.reserve(specs.size());
  for (const auto& s : specs) {
    if (!fs::exists(s.file))
      throw Error(Exit::bad_input, "no report at " + s.file.string() + " (strategy " + s.name + ")");
    reports.push_back(report::read(s.file));
  }
  std::vector<rank::Strategy> strategies;
  for (std::size_t i = 0; i < specs.size(); ++i)
    strategies.push_back({specs[i].name, specs[i].file.string(), &reports[i]});
  rank::check_same_suite(strategies);

  const rank::Ranking ranking = rank::rank(strategies, o);
  const std::string markdown = render::rank_markdown(ranking);
  write_form(vm, "markdown", markdown);
  write_form(vm, "json", render::rank_json(ranking));
  write_form(vm, "csv", render::rank_csv(ranking));
  write_form(vm, "svg", render::rank_svg(ranking));
  std::cout << terminal_safe(markdown, Newlines::keep);
  return 0;
}

} // namespace gate::cli

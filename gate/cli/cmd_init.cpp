#include <algorithm>
#include <filesystem>
#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/config/config.hpp>
#include <gate/init/init.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

int cmd_init(const Args& args) {
  std::string providers, models, without;
  for (const auto& p : config::providers()) {
    providers += (providers.empty() ? "" : "|") + p.name;
    // A provider without a default (azure: the model is your deployment's
    // name) is said so, not printed as an empty default.
    const std::string m = init::default_model(p.name);
    if (!m.empty())
      models += (models.empty() ? "" : ", ") + m + " for " + p.name;
    else
      without += (without.empty() ? "" : ", ") + p.name;
  }
  const std::string provider_help = "the API gate speaks: " + providers;
  const std::string model_help =
      "the model id (default: " + models +
      (without.empty() ? "" : "; none for " + without + ": pass your deployment's name") + ")";
  po::options_description desc("gate init options");
  desc.add_options()("help,h", "show this help")("dir", po::value<std::string>()->default_value("."),
                                                 "the directory to write into (must exist)")(
      "provider", po::value<std::string>()->default_value("openai"),
      provider_help.c_str())("model", po::value<std::string>(), model_help.c_str())(
      "base-url", po::value<std::string>(),
      "the API base URL, for an OpenAI-compatible server (default: the provider's)");
  po::positional_options_description pos;
  pos.add("dir", 1);
  po::variables_map vm;
  if (!parse_options(args, desc, vm, "gate init [DIR] [--provider NAME] [--model ID] [--base-url URL]", &pos))
    return 0;
  init::Options o;
  o.provider = vm["provider"].as<std::string>();
  if (vm.count("model")) o.model = vm["model"].as<std::string>();
  if (vm.count("base-url")) o.base_url = vm["base-url"].as<std::string>();
  const std::string dir = vm["dir"].as<std::string>();

  std::vector<init::File> files = init::starter_files(o);
  // A .gitignore already there is the repository's own: init never
  // overwrites, and one ignore file is not worth refusing the rest for.
  std::error_code ec;
  const bool own_gitignore =
      fs::symlink_status(fs::path(dir) / ".gitignore", ec).type() != fs::file_type::not_found;
  if (own_gitignore) std::erase_if(files, [](const init::File& f) { return f.path == ".gitignore"; });
  init::write_files(dir, files);
  std::cout << "gate init: wrote a starting point in " << terminal_safe(dir) << " (provider "
            << terminal_safe(o.provider) << ", model "
            << terminal_safe(o.model.value_or(init::default_model(o.provider))) << "):\n";
  std::size_t width = 0;
  for (const auto& f : files)
    width = std::max(width, f.path.string().size());
  for (const auto& f : files)
    std::cout << "  " << terminal_safe(f.path.string())
              << std::string(width + 2 - f.path.string().size(), ' ') << terminal_safe(f.what) << "\n";
  if (own_gitignore)
    std::cout
        << "  (.gitignore exists and is left as it is: add .gate/ to it to keep local reports out of git)\n";
  std::cout << "\nNext, in this order:\n";
  for (const auto& line : init::next_commands(dir, o))
    std::cout << "  " << terminal_safe(line) << "\n";
  return 0;
}

} // namespace gate::cli

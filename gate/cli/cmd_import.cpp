#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/importer/importer.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>
#include <gate/util/text.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

namespace {

// At most this many findings on stderr; import-report.txt has them all.
constexpr std::size_t k_shown = 20;

} // namespace

int cmd_import(const Args& args) {
  po::options_description desc("gate import options");
  desc.add_options()("help,h", "show this help")("format", po::value<std::string>(), "promptfoo")(
      "config", po::value<std::string>(), "the promptfoo config (promptfooconfig.yaml)")(
      "out", po::value<std::string>(), "the directory to write (created if absent; nothing is overwritten)")(
      "name", po::value<std::string>(), "the suite's name (default: the --out directory's name)")(
      "allow-outside", po::value<std::vector<std::string>>()->composing(),
      "a directory outside the config's own that its files may be read from (repeatable)");
  po::positional_options_description pos;
  pos.add("format", 1).add("config", 1);
  po::variables_map vm;
  const char* usage = "gate import promptfoo CONFIG --out DIR [--name NAME] [--allow-outside DIR]...";
  if (!parse_options(args, desc, vm, usage, &pos)) return 0;
  if (!vm.count("format") || !vm.count("config"))
    throw Error(Exit::bad_input, std::string("usage: ") + usage);
  if (!vm.count("out"))
    throw Error(Exit::bad_input,
                std::string("--out DIR is required: the directory to write the suite into; usage: ") + usage);
  if (vm["format"].as<std::string>() != "promptfoo")
    throw Error(Exit::bad_input, "gate import: unknown format " +
                                     quote_excerpt(vm["format"].as<std::string>()) + "; expected promptfoo");
  const fs::path out = vm["out"].as<std::string>();
  std::string name =
      vm.count("name") ? vm["name"].as<std::string>() : out.lexically_normal().filename().string();
  if (name.empty() || name == "." || name == "..") name = "imported";

  std::vector<fs::path> allow;
  if (vm.count("allow-outside"))
    for (const auto& d : vm["allow-outside"].as<std::vector<std::string>>())
      allow.emplace_back(d);
  const importer::Import im = importer::import_promptfoo(vm["config"].as<std::string>(), name, allow);
  // All or nothing: a directory made here goes again when the write fails.
  std::error_code ec;
  const bool made = !fs::exists(out, ec) && fs::create_directories(out, ec);
  try {
    init::write_files(out, im.files, "gate import");
  } catch (...) {
    if (made) fs::remove_all(out, ec);
    throw;
  }
  if (!im.failure.empty())
    throw Error(Exit::bad_input,
                im.failure + " (all of them in " + (out / "import-report.txt").string() + ")");
  std::cout << "gate import: wrote " << terminal_safe(out.string()) << ": " << im.cases << " cases with "
            << im.checks << " checks from " << im.tests << " promptfoo tests\n";
  for (const auto& f : im.files)
    std::cout << "  " << terminal_safe(f.path.string()) << "  " << terminal_safe(f.what) << "\n";
  std::cout << "Next: gate run --config " << terminal_safe(shell_word((out / "gate.yaml").string()))
            << " --mode replay (with the model's key set: it records what the cache misses), then commit the "
               "cache.\n";
  std::cerr << "gate import: " << im.unmapped.size() << " not carried over, " << im.notes.size()
            << " carried over with a difference (" << terminal_safe((out / "import-report.txt").string())
            << ")\n";
  for (std::size_t i = 0; i < im.unmapped.size() && i < k_shown; ++i)
    std::cerr << "  " << importer::finding_line(im.unmapped[i]) << "\n";
  if (im.unmapped.size() > k_shown) std::cerr << "  ... and " << im.unmapped.size() - k_shown << " more\n";
  return 0;
}

} // namespace gate::cli

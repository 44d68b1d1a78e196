#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/config/config.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>
#include <gate/util/text.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

namespace {

// What to do after `gate suite new-version`: a config that pins the suite
// keeps testing the old version until its line changes, and the baseline
// holds the old version until it is accepted again. Specific to ./gate.yaml
// when it tests this suite.
void print_next_steps(const fs::path& dir, const std::string& version) {
  bool follows = false;
  std::string config = "gate.yaml",
              where = "in your gate.yaml, under suite:", report = "<that run's report.json>";
  if (fs::exists("gate.yaml")) {
    try {
      const config::Config cfg = config::load("gate.yaml");
      std::error_code a, b;
      if (fs::weakly_canonical(cfg.suite, a) == fs::weakly_canonical(dir, b) && !a && !b) {
        // The loader keeps where each key was set ("gate.yaml:3").
        const auto pin = cfg.origin.find("suite.version");
        const bool pinned = pin != cfg.origin.end() && !pin->second.starts_with("default");
        follows = !pinned;
        where = pinned ? pin->second + ":" : "";
        report = config::output_path(cfg.outputs, cfg.outputs.json).string();
      }
    } catch (const Error& e) {
      std::cerr << "gate: note: ./gate.yaml not read for the next steps: " << terminal_safe(e.what()) << "\n";
    }
  }
  std::cout << "next, to test " << version << ":\n";
  if (follows)
    std::cout << "  1. gate.yaml sets no suite.version: it tests the latest, " << version << ", already\n";
  else
    std::cout << "  1. " << terminal_safe(where) << " suite.version: " << version
              << " (or no version: the latest)\n";
  std::cout << "  2. gate run --config " << config << " --mode replay   # with the key exported: records "
            << version << "\n"
            << "  3. gate baseline update --report " << terminal_safe(shell_word(report)) << " --config "
            << config << "   # the baseline on " << version << ", committed with the config\n";
}

} // namespace

int cmd_suite(const Args& args) {
  po::options_description desc("gate suite options");
  desc.add_options()("help,h", "show this help")("action", po::value<std::string>(),
                                                 "verify | new-version | create")(
      "dir", po::value<std::string>(), "the suite directory")("from", po::value<std::string>(),
                                                              "new-version/create: the edited cases.jsonl")(
      "name", po::value<std::string>(), "create: the suite's name");
  po::positional_options_description pos;
  pos.add("action", 1).add("dir", 1);
  po::variables_map vm;
  const char* usage =
      "gate suite verify DIR\n       gate suite new-version DIR --from FILE\n       gate suite create DIR "
      "--name NAME --from FILE";
  if (!parse_options(args, desc, vm, usage, &pos)) return 0;
  if (!vm.count("action") || !vm.count("dir")) throw Error(Exit::bad_input, std::string("usage: ") + usage);
  const std::string action = vm["action"].as<std::string>();
  const fs::path dir = vm["dir"].as<std::string>();
  auto need = [&](const char* opt) {
    if (!vm.count(opt)) throw Error(Exit::bad_input, "gate suite " + action + ": --" + opt + " is required");
    return vm[opt].as<std::string>();
  };
  if (action == "verify") {
    for (const auto& line : suite::verify(dir))
      std::cout << terminal_safe(line) << "\n";
    return 0;
  }
  if (action == "new-version") {
    std::string v = suite::new_version(dir, need("from"));
    std::cout << "added " << v << " to " << terminal_safe(dir.string())
              << " (now latest; older versions unchanged)\n";
    print_next_steps(dir, v);
    return 0;
  }
  if (action == "create") {
    suite::create(dir, need("name"), need("from"));
    std::cout << "created suite " << terminal_safe(dir.string()) << " at v1\n";
    return 0;
  }
  throw Error(Exit::bad_input,
              "gate suite: unknown action \"" + action + "\"; expected verify, new-version or create");
}

} // namespace gate::cli

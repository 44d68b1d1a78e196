#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

namespace fs = std::filesystem;

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

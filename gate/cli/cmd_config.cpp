#include <iostream>

#include <gate/cli/common.hpp>
#include <gate/util/error.hpp>
#include <gate/util/terminal.hpp>

namespace gate::cli {

int cmd_config(const Args& args) {
  po::options_description desc("gate config options");
  desc.add_options()("help,h", "show this help")("action", po::value<std::string>(), "show")(
      "config,c", po::value<std::string>()->default_value("gate.yaml"), "the gate.yaml to read");
  po::positional_options_description pos;
  pos.add("action", 1);
  po::variables_map vm;
  if (!parse_options(args, desc, vm, "gate config show [--config gate.yaml]", &pos)) return 0;
  if (!vm.count("action") || vm["action"].as<std::string>() != "show")
    throw Error(Exit::bad_input, "usage: gate config show [--config gate.yaml]");
  std::cout << terminal_safe(config::show(load_config(vm["config"].as<std::string>(), {})), Newlines::keep);
  return 0;
}

} // namespace gate::cli

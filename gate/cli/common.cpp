#include <gate/cli/common.hpp>

#include <cstdlib>
#include <iostream>
#include <unistd.h>

#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>

namespace gate::cli {

bool parse_options(const Args& args, const po::options_description& desc, po::variables_map& vm,
                   const char* usage_line, const po::positional_options_description* positional) {
  auto parser = po::command_line_parser(args).options(desc);
  if (positional != nullptr) parser.positional(*positional);
  po::store(parser.run(), vm);
  if (vm.count("help") != 0) {
    std::cout << "usage: " << usage_line << "\n\n" << desc << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

config::Config load_config(const std::filesystem::path& file, const config::Overrides& o) {
  if (!std::filesystem::exists(file))
    throw Error(
        Exit::bad_input,
        "no config file " + file.string() +
            " (pass --config FILE, or write a starting point with `gate init`; fixtures/demo/gate.yaml is a "
            "complete example)");
  config::Config cfg = config::load(file);
  config::apply(cfg, o);
  config::resolve_defaults(cfg, process_env());
  return cfg;
}

const Environment& process_env() {
  static const Environment env = environment_from(::environ);
  return env;
}

void register_configured_key(const config::Config& cfg) {
  if (!cfg.model.api_key_env.empty()) register_secret(process_env().get(cfg.model.api_key_env));
}

} // namespace gate::cli

#pragma once

#include <boost/program_options.hpp>
#include <filesystem>
#include <string>

#include <gate/cli/commands.hpp>
#include <gate/config/config.hpp>
#include <gate/util/environment.hpp>

namespace gate::cli {

namespace po = boost::program_options;

// Parses a command's options; unknown options and stray words are usage
// errors (exit 2). Returns false when --help was asked and printed.
bool parse_options(const Args& args, const po::options_description& desc, po::variables_map& vm,
                   const char* usage_line, const po::positional_options_description* positional = nullptr);

// Loads the config named by --config (default gate.yaml) and applies the
// overrides; a missing default file gets a hint on how to start.
config::Config load_config(const std::filesystem::path& file, const config::Overrides& o);

// gate's environment, read from the process once, when cli::main starts
// (before any thread), and passed down from here: nothing below cli/ reads
// the process environment, and nothing in gate changes it.
const Environment& process_env();

// Registers the key in the config's model.api_key_env, when it is set, for
// redaction: a command that never calls the model (analyze, a replay) still
// reads text that may hold it.
void register_configured_key(const config::Config& cfg);

} // namespace gate::cli

#pragma once

#include <string>
#include <vector>

namespace gate::cli {

// A command's arguments after the command name.
using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args& args);
};

// The command table; `gate help` is generated from it.
const std::vector<Command>& commands();

int cmd_run(const Args& args);
int cmd_suite(const Args& args);
int cmd_cache(const Args& args);
int cmd_config(const Args& args);
int cmd_compare(const Args& args);
int cmd_check(const Args& args);
int cmd_baseline(const Args& args);
int cmd_merge(const Args& args);
int cmd_hook(const Args& args);
int cmd_comment(const Args& args);
int cmd_rank(const Args& args);
int cmd_doctor(const Args& args);
int cmd_analyze(const Args& args);
int cmd_proxy(const Args& args);
int cmd_init(const Args& args);
int cmd_import(const Args& args);

} // namespace gate::cli

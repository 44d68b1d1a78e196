#include <algorithm>
#include <iostream>
#include <unistd.h>

#include <gate/cli/common.hpp>
#include <gate/cli/hook.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/terminal.hpp>
#include <gate/util/text.hpp>

namespace gate::cli {

namespace fs = std::filesystem;
using hook::find_repo;
using hook::Repo;

namespace {

// Written into every hook gate installs: uninstall removes a hook only when
// it carries this line, so a hook someone else wrote is never deleted.
constexpr std::string_view k_marker = "# gate-hook: pre-push v1";
constexpr const char* k_chained_name = "pre-push.gate-chained";

// Filesystem failures are "could not run" (exit 3), never an internal error.
void move_file(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec)
    throw Error(Exit::cannot_run,
                "cannot move " + from.string() + " to " + to.string() + ": " + ec.message());
}

bool written_by_gate(const fs::path& hook) {
  return fs::exists(hook) && read_file(hook).find(k_marker) != std::string::npos;
}

std::string hook_script(const fs::path& gate_binary, const std::string& config,
                        const std::vector<std::string>& check_args, bool chained) {
  std::string s = "#!/bin/sh\n";
  s += std::string(k_marker) + "\n";
  s += "# Installed by `gate hook install`; `gate hook uninstall` removes it.\n"
       "# Runs the gate replay-only (fast, offline) on every commit pushed, each in\n"
       "# a temporary work tree, and blocks the push when one fails.\n"
       "# Skip it once with: git push --no-verify\n";
  s += "gate_bin=" + shell_quote(gate_binary.string()) + "\n";
  // The arguments chosen at install time, kept here so every push uses them.
  std::string run = "\"$gate_bin\" hook run --config " + shell_quote(config);
  if (!check_args.empty()) {
    run += " --";
    for (const auto& a : check_args)
      run += " " + shell_quote(a);
  }
  // clang-format off
  s += R"sh(cd "$(git rev-parse --show-toplevel)" || exit 1
if [ ! -x "$gate_bin" ]; then
  gate_bin=$(command -v gate) || {
    echo "gate pre-push hook: the gate binary is gone; reinstall the hook, or push once with git push --no-verify" >&2
    exit 1
  }
fi
)sh";
  // clang-format on
  if (!chained) return s + "exec " + run + "\n";
  // The hook that was here before runs first, with git's arguments and the
  // list of refs git writes to our stdin; gate reads the same list.
  s += "refs=$(mktemp) || exit 1\n"
       "cat >\"$refs\"\n"
       "\"$(dirname \"$0\")/" +
       std::string(k_chained_name) +
       "\" \"$@\" <\"$refs\"\n"
       "code=$?\n"
       "if [ \"$code\" -eq 0 ]; then\n"
       "  " +
       run +
       " <\"$refs\"\n"
       "  code=$?\n"
       "fi\n"
       "rm -f \"$refs\"\n"
       "exit \"$code\"\n";
  return s;
}

int install(const po::variables_map& vm, const std::vector<std::string>& check_args) {
  const Repo repo = find_repo();
  const fs::path config = fs::absolute(vm["config"].as<std::string>()).lexically_normal();
  if (!fs::exists(config))
    throw Error(Exit::bad_input,
                "gate hook install: no config file " + config.string() + " (pass --config FILE)");
  // Relative to the work tree when inside it, so the hook survives a move
  // of the clone.
  const fs::path rel = config.lexically_relative(repo.top);
  const std::string config_text = !rel.empty() && *rel.begin() != ".." ? rel.string() : config.string();

  const fs::path hook = repo.hooks / "pre-push";
  const fs::path chained = repo.hooks / k_chained_name;
  if (fs::exists(hook) && !written_by_gate(hook)) {
    if (vm.count("chain") == 0)
      throw Error(
          Exit::bad_input,
          hook.string() +
              " exists and was not written by gate; left untouched. Pass --chain to keep it and run it "
              "before gate's check, or remove it yourself");
    if (fs::exists(chained))
      throw Error(Exit::bad_input, chained.string() + " already exists; left untouched (remove it first)");
    move_file(hook, chained);
    std::cout << "kept your pre-push hook as " << terminal_safe(chained.string())
              << "; it runs before gate's check\n";
  }
  ensure_directory(repo.hooks);
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  const fs::path gate_binary =
      n > 0 ? fs::path(std::string(self, static_cast<std::size_t>(n))) : fs::path("gate");
  write_file_atomically(hook, hook_script(gate_binary, config_text, check_args, fs::exists(chained)));
  std::error_code ec;
  fs::permissions(hook,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  if (ec) throw Error(Exit::cannot_run, "cannot make " + hook.string() + " executable: " + ec.message());
  std::string extra;
  for (const auto& a : check_args)
    extra += " " + a;
  std::cout
      << "installed " << terminal_safe(hook.string()) << ": every push runs `gate check --config "
      << terminal_safe(config_text) << " --mode replay-only" << terminal_safe(extra)
      << "` on each pushed commit, in a temporary work tree; skip it once with `git push --no-verify`\n";
  return 0;
}

int uninstall() {
  const Repo repo = find_repo();
  const fs::path hook = repo.hooks / "pre-push";
  const fs::path chained = repo.hooks / k_chained_name;
  if (!fs::exists(hook)) {
    std::cout << "no pre-push hook in " << terminal_safe(repo.hooks.string()) << "; nothing to remove\n";
    return 0;
  }
  if (!written_by_gate(hook))
    throw Error(Exit::bad_input, hook.string() + " was not written by gate; left untouched");
  std::error_code ec;
  if (!fs::remove(hook, ec) || ec)
    throw Error(Exit::cannot_run, "cannot remove " + hook.string() + ": " + ec.message());
  std::cout << "removed " << terminal_safe(hook.string()) << "\n";
  if (fs::exists(chained)) {
    move_file(chained, hook);
    std::cout << "restored your earlier hook to " << terminal_safe(hook.string()) << "\n";
  }
  return 0;
}

} // namespace

int cmd_hook(const Args& all_args) {
  // Everything after "--" is for `gate check`: kept in the hook at install,
  // passed on by run.
  const auto dashes = std::find(all_args.begin(), all_args.end(), "--");
  const Args args(all_args.begin(), dashes);
  const std::vector<std::string> check_args(dashes == all_args.end() ? dashes : dashes + 1, all_args.end());
  constexpr const char* usage =
      "gate hook install|uninstall|run [--config gate.yaml] [--chain] [-- CHECK_OPTIONS...]";
  po::options_description desc("gate hook options");
  desc.add_options()("help,h", "show this help")("action", po::value<std::string>(),
                                                 "install | uninstall | run (what the installed hook calls)")(
      "config,c", po::value<std::string>()->default_value("gate.yaml"),
      "the gate.yaml the hook checks")("chain", "keep an existing pre-push hook and run it first");
  po::positional_options_description pos;
  pos.add("action", 1);
  po::variables_map vm;
  if (!parse_options(args, desc, vm, usage, &pos)) return 0;
  const std::string action = vm.count("action") ? vm["action"].as<std::string>() : "";
  if (action == "install") return install(vm, check_args);
  if (action == "run") return hook::run(vm["config"].as<std::string>(), check_args);
  if (!check_args.empty()) throw Error(Exit::bad_input, std::string("usage: ") + usage);
  if (action == "uninstall") return uninstall();
  throw Error(Exit::bad_input, std::string("usage: ") + usage);
}

} // namespace gate::cli

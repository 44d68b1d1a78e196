#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gate::cli::hook {

// The first line a fixed git command prints; nullopt when git fails (not a
// repository, git missing).
std::optional<std::string> git_line(const char* command);

struct Repo {
  std::filesystem::path top;   // the work tree's root, where git runs hooks
  std::filesystem::path hooks; // .git/hooks, or core.hooksPath
};

// The repository around the current directory; Error(bad_input) outside one.
Repo find_repo();

// What the installed pre-push hook runs: reads git's pre-push lines
// ("<local ref> <local sha> <remote ref> <remote sha>") from stdin and, for
// each commit pushed, runs `gate check --config <config> --mode
// replay-only <check_args>` in a temporary work tree of that commit (never
// the working tree, which may hold uncommitted changes). Prints to stderr
// which commit was checked and, when blocked, the headline, the first
// regressed tasks and where the full verdict is. Returns the hook's exit
// status: 0 lets the push through.
int run(const std::string& config, const std::vector<std::string>& check_args);

} // namespace gate::cli::hook

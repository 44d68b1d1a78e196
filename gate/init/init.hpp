#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// `gate init`: a working starting point in a repository (a pinned suite with
// a few cases, the prompt under test, gate.yaml and the pull-request
// workflow), and the commands that take it from there to a gated push.
namespace gate::init {

struct Options {
  std::string provider = "openai";     // one of config::providers()
  std::optional<std::string> model;    // none = the provider's default_model()
  std::optional<std::string> base_url; // none = the provider's default base URL
};

// One file of the starting point; `path` is relative to the target directory.
struct File {
  std::filesystem::path path;
  std::string text;
  std::string what; // one line for the listing gate init prints
};

// The model gate init suggests for a provider ("" for one it does not know).
std::string default_model(const std::string& provider);

// The files, in the order they are written. Throws Error(bad_input) for a
// provider gate does not speak (naming the ones it does), an empty model or
// a base URL that is not http(s)://.
std::vector<File> starter_files(const Options& options);

// Writes `files` below `dir` through AtomicFile, or nothing at all: first
// every target is checked, and when any exists (a file, a directory or a
// symlink, dangling or not) or a parent of one is not a directory, throws
// Error(bad_input) naming each, before anything is written. `dir` must be
// an existing directory. A write that fails (Error(cannot_run)) removes the
// files written before it. A file created by someone else between the check
// and the write is replaced: the check is for people, not for races.
// `command` names the writer in messages ("gate import").
void write_files(const std::filesystem::path& dir, const std::vector<File>& files,
                 const std::string& command = "gate init");

// A value as a YAML scalar: plain when it is plainly a name or a URL, else a
// JSON string (YAML reads it as a double-quoted scalar with the same
// escapes), so no value can add a key or end the line early.
std::string yaml_scalar(std::string_view s);

// What to run next, one shell command per line, with "# " comment lines
// before each step; `dir` is the target as the user gave it (a `cd` comes
// first unless it is "."). Lines may be copied into a POSIX shell as they
// are; the e2e test runs them.
std::vector<std::string> next_commands(const std::string& dir, const Options& options);

} // namespace gate::init

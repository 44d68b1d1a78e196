#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <gate/init/init.hpp>

// `gate import promptfoo`: a promptfoo config (its prompts, providers,
// tests and assertions) as a gate suite, prompt files and a gate.yaml, and
// a report of everything that was not carried over (docs/import.md).
namespace gate::importer {

// One line of the import report: where in the promptfoo files, what, why.
struct Finding {
  std::string where; // "file:line", the file relative to the config's directory
  std::string what;  // "assert \"javascript\"", "provider \"ollama:chat:llama3\"", "key \"scenarios\""
  std::string reason;
  bool operator==(const Finding&) const = default;
};

struct Import {
  std::vector<init::File> files;       // relative to the output directory, written all or none
  std::vector<Finding> unmapped;       // not carried over: gate does not run it
  std::vector<Finding> notes;          // carried over with a difference worth knowing
  std::vector<std::string> files_read; // every file read, the config first, as the report names them
  std::size_t tests = 0;               // promptfoo tests read (list-valued vars expanded)
  std::size_t cases = 0;               // cases written
  std::size_t checks = 0;              // checks written
  std::size_t assertions = 0;          // assertions read, defaultTest's counted per test
  // Set when no case could be written: `files` is then only the report,
  // and the caller writes it and fails with this message (exit 2).
  std::string failure;
};

// Reads `config` (and the files it names, relative to its directory) and
// returns what to write; `suite_name` names the suite in metadata.json.
// Bad input (YAML, CSV or JSON that does not parse; a config that is not
// promptfoo's shape) is Error(bad_input) with file:line:col; a config with
// no test gate can run returns only the report, with `failure` set.
// A file the config names outside its own directory (../, an absolute
// path, a symlink leaving it) is Error(bad_input) unless it lies inside one
// of `allow_outside` (--allow-outside).
Import import_promptfoo(const std::filesystem::path& config, const std::string& suite_name,
                        const std::vector<std::filesystem::path>& allow_outside = {});

// The import report (import-report.txt): counts, then the unmapped list and
// the notes, one finding a line, every text from the config escaped.
std::string report_text(const Import& import, const std::string& config_name);

// One finding as a report line: "file:line: what: reason".
std::string finding_line(const Finding& f);

} // namespace gate::importer

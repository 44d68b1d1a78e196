#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gate/check/check.hpp>

namespace gate::suite {

// Limits of one cases.jsonl line (docs/suite-format.md).
inline constexpr std::size_t k_max_line_bytes = std::size_t{1} << 20;
inline constexpr std::size_t k_max_depth = 64;

struct Message {
  std::string role; // system | user | assistant
  std::string content;
};

struct Case {
  std::string id;
  std::string scenario;
  std::string difficulty;
  std::string group;          // "" = none
  std::vector<Message> input; // a string input becomes one user message
  std::string system;         // "" = none
  std::optional<std::string> expected;
  std::vector<check::Check> checks;
  std::vector<std::string> tags;
  std::size_t line = 0; // 1-based line in cases.jsonl
};

struct VersionInfo {
  std::string version;
  std::string sha256;
  std::size_t cases = 0;
};

// metadata.json: {"name", "latest", "versions": [{"version","sha256","cases"}]}
struct Metadata {
  std::string name;
  std::string latest;
  std::vector<VersionInfo> versions;
};

struct Suite {
  std::filesystem::path dir;
  std::string name;
  std::string version;
  std::string sha256; // of the cases.jsonl bytes actually parsed
  std::vector<Case> cases;
};

// Reads and validates <dir>/metadata.json: every field, version names that
// are plain directory names, 64-hex-digit hashes, positive counts, no
// duplicate versions, and a `latest` that is listed.
Metadata read_metadata(const std::filesystem::path &dir);

// metadata.json text: fixed key order, one version per line, final newline,
// so that a diff of two versions of the file shows one added line.
std::string format_metadata(const Metadata &m);

// Loads `version` ("" = latest): reads versions/<v>/cases.jsonl once, checks
// its sha256 against metadata before parsing anything else (mismatch →
// Error(bad_input) naming both hashes), then parses every line. JSONL rules:
// a UTF-8 BOM at the start is skipped; CRLF is accepted; blank lines are
// skipped; a missing final newline is fine; invalid UTF-8, NUL bytes, a line
// over 1 MiB, nesting over 64 levels, duplicate ids are errors naming the
// 1-based line. The whole format: docs/suite-format.md.
Suite load(const std::filesystem::path &dir, const std::string &version);

// Parses cases from JSONL text (the rules above); `where` names the file.
std::vector<Case> parse_cases(std::string_view text, const std::string &where);

// Adds the next version ("v<N+1>" after the highest "v<N>") from an edited
// cases file: validates it, copies it to versions/<v>/cases.jsonl, records
// hash and count, makes it latest. Existing versions are never modified.
// Refuses a file byte-identical to the latest version ("no change") and a
// file that is itself one of the suite's versions. Returns the new name.
std::string new_version(const std::filesystem::path &dir, const std::filesystem::path &from);

// Creates a suite directory with a first version "v1" from a cases file;
// refuses when <dir>/metadata.json exists.
void create(const std::filesystem::path &dir, const std::string &name, const std::filesystem::path &from);

// Verifies every version's hash and count; returns one line per version
// ("v1  40 cases  sha256 ok"); throws Error(bad_input) on the first mismatch.
std::vector<std::string> verify(const std::filesystem::path &dir);

} // namespace gate::suite

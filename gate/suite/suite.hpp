#pragma once

#include <filesystem>
#include <map>
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

// How an agent case runs (docs/suite-format.md "Agent tasks"): the case's
// "agent" object over the suite's default (metadata.json "agent"), key by key.
struct AgentSpec {
  std::vector<std::string> command;  // argv, no shell; non-empty
  std::string fixture;               // as written, relative to the suite directory
  std::filesystem::path fixture_dir; // resolved; an existing directory inside the suite directory
  double timeout_s = 0;              // > 0
  std::string input_file;            // "" = the input goes to stdin; else "file:NAME"'s NAME
};

// Where agent cases are resolved: the suite directory and its default
// "agent" block (null when metadata.json has none).
struct AgentContext {
  std::filesystem::path dir;
  const boost::json::object* defaults = nullptr;
  std::string defaults_where; // "<dir>/metadata.json" for messages
};

// A case's "kind": a prompt answered by the model, or a command run
// against a fixture (docs/suite-format.md "Agent tasks").
enum class Kind { plain, agent };

struct Case {
  std::string id;
  Kind kind = Kind::plain;
  std::optional<AgentSpec> agent; // kind agent only
  std::string scenario;
  std::string difficulty;
  std::string group;          // "" = none
  std::vector<Message> input; // a string input becomes one user message; empty: from prompt.user
  std::string system;         // "" = none
  // Values for the prompt templates of gate.yaml (docs/config.md "Prompts");
  // rendered into `system` and `input` before any request is made.
  std::map<std::string, std::string> vars;
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
  // Default "agent" block for agent cases; kept as written so that
  // format_metadata writes it back unchanged. Like the fixture directories
  // it is not covered by the cases file's sha256.
  std::optional<boost::json::object> agent = {};
};

struct Suite {
  std::filesystem::path dir;
  std::string name;
  std::string version;
  std::string latest; // metadata.json's latest version: newer than `version` when a config pins an older one
  std::string sha256; // of the cases.jsonl bytes actually parsed
  std::vector<Case> cases;
};

// Reads and validates <dir>/metadata.json: every field, version names that
// are plain directory names, 64-hex-digit hashes, positive counts, no
// duplicate versions, and a `latest` that is listed.
Metadata read_metadata(const std::filesystem::path& dir);

// metadata.json text: fixed key order, one version per line, final newline,
// so that a diff of two versions of the file shows one added line.
std::string format_metadata(const Metadata& m);

// Loads `version` ("" = latest): reads versions/<v>/cases.jsonl once, checks
// its sha256 against metadata before parsing anything else (mismatch →
// Error(bad_input) naming both hashes), then parses every line. JSONL rules:
// a UTF-8 BOM at the start is skipped; CRLF is accepted; blank lines are
// skipped; a missing final newline is fine; invalid UTF-8, NUL bytes, a line
// over 1 MiB, nesting over 64 levels, duplicate ids are errors naming the
// 1-based line. The whole format: docs/suite-format.md.
Suite load(const std::filesystem::path& dir, const std::string& version);

// Parses cases from JSONL text (the rules above); `where` names the file.
// Agent cases resolve their fixture against `agent.dir` and take the
// defaults from `agent.defaults`.
std::vector<Case> parse_cases(std::string_view text, const std::string& where,
                              const AgentContext& agent = {});

// Validates a partial agent block (defaults or a case's own) and merges
// `own` over `defaults`; the result must be complete. `at` names the case
// line. Throws Error(bad_input) naming where each bad value came from.
AgentSpec parse_agent(const boost::json::object* own, const std::string& at, const AgentContext& ctx);

// Checks a default block's keys and value types (metadata.json "agent").
void check_agent_defaults(const boost::json::object& defaults, const std::string& where);

// Adds the next version ("v<N+1>" after the highest "v<N>") from an edited
// cases file: validates it, copies it to versions/<v>/cases.jsonl, records
// hash and count, makes it latest. Existing versions are never modified.
// Refuses a file byte-identical to the latest version ("no change") and a
// file that is itself one of the suite's versions. Returns the new name.
std::string new_version(const std::filesystem::path& dir, const std::filesystem::path& from);

// Creates a suite directory with a first version "v1" from a cases file;
// refuses when <dir>/metadata.json exists.
void create(const std::filesystem::path& dir, const std::string& name, const std::filesystem::path& from);

// Verifies every version's hash and count; returns one line per version
// ("v1  40 cases  sha256 ok"); throws Error(bad_input) on the first mismatch.
std::vector<std::string> verify(const std::filesystem::path& dir);

} // namespace gate::suite

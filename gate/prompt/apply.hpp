#pragma once

#include <optional>
#include <string>
#include <vector>

#include <gate/config/config.hpp>
#include <gate/prompt/template.hpp>
#include <gate/results/results.hpp>
#include <gate/suite/suite.hpp>

namespace gate::prompt {

// A template file is read whole; a prompt this large is a mistake.
inline constexpr std::size_t k_max_template_bytes = std::size_t{1} << 20;

// The templates of gate.yaml's `prompt:` and what the report records of them.
struct Prompts {
  std::optional<Template> system, user;
  std::vector<results::Prompt> used; // system first; empty when none is configured
};

// Reads and parses the configured templates. A role given both inline and
// as a file, an unreadable file, invalid UTF-8 or a bad "{{" is
// Error(bad_input) naming the file (and line).
Prompts load(const config::Config& cfg);

// Renders the templates into every plain case of `s`, before any request:
// the system template becomes the system prompt of each case that has none
// of its own, the user template the one user message of each case without
// an "input". A variable a template uses that the case does not define, a
// case var no applied template uses, and a case with neither "input" nor a
// user template are Error(bad_input) naming the template's file and line
// (or the cases file's line) and the case. Agent cases are left as they are.
void apply(suite::Suite& s, const Prompts& p);

// The conversation of a case as the report keeps it: one "role: content"
// block per message, system first, separated by a blank line.
std::string conversation_text(const suite::Case& c);

} // namespace gate::prompt

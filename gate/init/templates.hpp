#pragma once

#include <string_view>

// Internal to gate_init: the text of the files `gate init` writes, in one
// place so that they read as the files they become. @PROVIDER@, @BASE_URL@,
// @KEY_ENV@, @MODEL@ and @SEED@ (a whole line, or nothing) are filled in by
// init.cpp; nothing else in them is a placeholder.
namespace gate::init::templates {

extern const std::string_view k_prompt;    // prompts/support.md
extern const std::string_view k_cases;     // evals/support/versions/v1/cases.jsonl
extern const std::string_view k_gate_yaml; // gate.yaml
extern const std::string_view k_workflow;  // .github/workflows/gate.yml
extern const std::string_view k_gitignore; // .gitignore

} // namespace gate::init::templates

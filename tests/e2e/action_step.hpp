#pragma once

// The GitHub Action's steps as action.yml runs them: `bash action/run.sh
// <step>` in a fake GitHub environment, for the e2e tests of the action.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace gate::e2e {

// What one step did.
struct Step {
  int exit_code = -1;
  std::string out, err;
  std::map<std::string, std::string> outputs; // parsed $GITHUB_OUTPUT
  std::string summary;                        // $GITHUB_STEP_SUMMARY
};

// `bash action/run.sh <step>` in `dir`, with GITHUB_OUTPUT and
// GITHUB_STEP_SUMMARY files and `inputs` (the INPUT_* values) in the
// environment; the model keys of the host are not passed.
Step run_step(const std::filesystem::path& dir, const std::string& step,
              const std::map<std::string, std::string>& inputs);

// A shell word: gate's own quoting (util/text.hpp).
std::string quoted(const std::string& s);

std::vector<std::string> lines(const std::string& text);
bool has(const std::string& text, const std::string& part);

// The demo's committed baseline.
std::string demo_baseline();

} // namespace gate::e2e

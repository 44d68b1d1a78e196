#include "action_step.hpp"

#include <cstdlib>
#include <sstream>
#include <sys/wait.h>

#include <gate/util/text.hpp>

#include "harness.hpp"

namespace fs = std::filesystem;

namespace gate::e2e {

namespace {

// name=value lines and name<<DELIM … DELIM blocks.
std::map<std::string, std::string> parse_outputs(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (auto heredoc = line.find("<<"); heredoc != std::string::npos && line.find('=') > heredoc) {
      const std::string name = line.substr(0, heredoc), delim = line.substr(heredoc + 2);
      std::string value, body;
      while (std::getline(in, body) && body != delim)
        value += (value.empty() ? "" : "\n") + body;
      out[name] = value;
    } else if (auto eq = line.find('='); eq != std::string::npos) {
      out[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return out;
}

} // namespace

std::string quoted(const std::string& s) { return gate::shell_quote(s); }

Step run_step(const fs::path& dir, const std::string& step,
              const std::map<std::string, std::string>& inputs) {
  std::map<std::string, std::string> env{
      {"GATE_BIN", GATE_BINARY},
      {"GITHUB_ACTIONS", "true"},
      {"CI", "true"},
      {"GITHUB_EVENT_NAME", "pull_request"},
      {"GITHUB_EVENT_PATH", (source_dir() / "fixtures" / "github" / "pull_request.json").string()},
      {"GITHUB_REPOSITORY", "octo/gate-demo"},
      {"GITHUB_WORKSPACE", dir.string()},
      {"GITHUB_OUTPUT", (dir / "github_output").string()},
      {"GITHUB_STEP_SUMMARY", (dir / "step_summary.md").string()},
  };
  for (const auto& [k, v] : inputs)
    env[k] = v;
  fs::remove(dir / "github_output");
  fs::remove(dir / "step_summary.md");
  std::string command = "cd " + quoted(dir.string()) + " && env -u GATE_DEMO_API_KEY -u GITHUB_TOKEN";
  for (const auto& [k, v] : env)
    command += " " + k + "=" + quoted(v);
  command +=
      " bash " + quoted((source_dir() / "action" / "run.sh").string()) + " " + step + " >step.out 2>step.err";
  const int status = std::system(command.c_str());
  Step s;
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  s.out = slurp(dir / "step.out");
  s.err = slurp(dir / "step.err");
  if (fs::exists(dir / "github_output")) s.outputs = parse_outputs(slurp(dir / "github_output"));
  if (fs::exists(dir / "step_summary.md")) s.summary = slurp(dir / "step_summary.md");
  return s;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string demo_baseline() { return (source_dir() / "baselines" / "demo.json").string(); }

} // namespace gate::e2e

#pragma once

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include <gate/agent/process.hpp>
#include <gate/agent/workcopy.hpp>
#include <gate/check/check.hpp>
#include <gate/results/results.hpp>

namespace gate::agent {

// What the agent checks look at once the command has ended.
struct CheckContext {
  std::filesystem::path work;                            // the work copy (command checks run there)
  const Tree* fixture = nullptr;                         // the fixture as copied
  const Tree* final = nullptr;                           // the work copy after the command
  const ProcessResult* process = nullptr;                // the agent's exit and output
  const std::vector<results::ToolCall>* tools = nullptr; // the run's tool calls, in order
  std::vector<std::string> env;                          // the environment for `command` checks
  const std::atomic<bool>* stop = nullptr;
};

// Evaluates one check of an agent case: the agent types here (docs/suite-
// format.md "Agent checks"), any text check on the agent's stdout. Never
// throws; a check that cannot be evaluated comes back errored.
check::Result evaluate(const check::Check& c, const CheckContext& ctx);

// Lines that differ between two texts: lines only in `a` plus lines only in
// `b` under a longest common subsequence (for very large files, lines
// compared as multisets).
std::size_t changed_lines(std::string_view a, std::string_view b);

// Paths created, changed or deleted between two trees, in byte order.
std::vector<std::string> changed_paths(const Tree& before, const Tree& after);

} // namespace gate::agent

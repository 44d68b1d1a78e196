#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include <gate/check/check.hpp>
#include <gate/config/config.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/environment.hpp>

namespace gate::run {

// Where the script checks of one execute() run: from the suite directory,
// with an environment made from gate's by agent::child_env (no real key).
struct ScriptSetup {
  const suite::Suite* suite = nullptr;
  const config::Config* config = nullptr;
  const Environment* env = nullptr; // null: script checks cannot start
  const std::atomic<bool>* stop = nullptr;
};

// The longest GATE_CASE value a program can be given: Linux refuses one
// environment string of 32 pages (128 KiB) or more.
inline constexpr std::size_t k_max_case_json = 128 * 1024 - sizeof("GATE_CASE=");

// GATE_CASE: the case as gate read it, canonical JSON: id, scenario,
// difficulty, group, input (the messages, prompt templates rendered),
// system, vars, expected, tags; a key whose value is absent or empty is left out.
std::string case_json(const suite::Case& c);

// Runs a script check's argv (agent::run_process: its own process group,
// killed with its tree at the timeout, output capped) in the suite
// directory, with `answer` on stdin and GATE_CASE, GATE_TASK_ID and
// GATE_RUN set. Never throws: what went wrong comes back as not started.
check::ScriptRun run_script(const check::Check& chk, std::string_view answer, const suite::Case& c, int run,
                            const ScriptSetup& setup);

} // namespace gate::run

#include <gate/cli/cli.hpp>

#include <algorithm>
#include <boost/program_options/errors.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sys/prctl.h>

#include <gate/cli/commands.hpp>
#include <gate/cli/common.hpp>
#include <gate/util/error.hpp>
#include <gate/util/format.hpp>
#include <gate/util/terminal.hpp>
#include <gate/util/version.hpp>

namespace gate::cli {

namespace {

int cmd_version(const Args&) {
  std::cout << "gate " << k_version << " (commit " << k_commit << ")\n";
  return 0;
}

int cmd_help(const Args& args);

void usage(std::ostream& out) {
  out << "gate " << k_version << " — a regression gate for LLM and agent evaluations\n\n"
      << "usage: gate <command> [options]\n\ncommands:\n";
  for (const auto& c : commands()) {
    std::string name = c.name;
    name.resize(10, ' ');
    out << "  " << name << c.summary << "\n";
  }
  out << "\n`gate <command> --help` shows a command's options.\n"
      << "exit codes: 0 pass (or inconclusive, unless thresholds.on_inconclusive: fail),\n"
      << "            1 threshold crossed, 2 bad input or usage (also: a replayed cache entry that\n"
      << "            differs from --trusted-cache), 3 could not run or could not measure (more than\n"
      << "            thresholds.max_errored_runs_pct of the runs errored), 4 replay-only cache miss,\n"
      << "            130/143 interrupted\n";
}

int cmd_help(const Args& args) {
  if (!args.empty()) {
    for (const auto& c : commands())
      if (args[0] == c.name) return c.run({"--help"});
  }
  usage(std::cout);
  return 0;
}

} // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"init", "write a starting point: a suite, a prompt, gate.yaml and the CI workflow", cmd_init},
      {"run", "run a suite k times (replay, record or fresh) and write the report", cmd_run},
      {"check", "run, then compare with the baseline: the gate (exit 1 on a regression)", cmd_check},
      {"compare", "compare a report with a baseline; Markdown, JSON, JUnit, HTML verdicts", cmd_compare},
      {"baseline", "promote a report to the baseline, showing what changes", cmd_baseline},
      {"suite", "verify a suite, or add a new pinned version of it", cmd_suite},
      {"cache", "show, verify or prune the response cache", cmd_cache},
      {"config", "show the effective configuration and where each value came from", cmd_config},
      {"merge", "combine partial reports from `gate run --shard i/n` into one report", cmd_merge},
      {"import", "turn a promptfoo config into a gate suite, prompt files and gate.yaml", cmd_import},
      {"analyze", "read another harness's run logs (JSON/JSONL) and write the same report as `gate run`",
       cmd_analyze},
      {"proxy", "serve a loopback record/replay endpoint for agents' OpenAI/Anthropic SDKs", cmd_proxy},
      {"hook", "install or remove a git pre-push hook that runs the gate", cmd_hook},
      {"comment", "post or update gate's verdict comment on the current GitHub pull request", cmd_comment},
      {"rank", "rank strategies of one suite by Bradley–Terry Elo per token", cmd_rank},
      {"doctor", "check key, proxy, DNS, TCP, TLS and one completion against the model", cmd_doctor},
      {"version", "print gate's version", cmd_version},
      {"help", "show this help, or a command's", cmd_help},
  };
  return table;
}

namespace {

int run(const Args& args) {
  try {
    if (args.empty()) {
      usage(std::cerr);
      return static_cast<int>(Exit::bad_input);
    }
    if (args[0] == "--help" || args[0] == "-h") return cmd_help({});
    if (args[0] == "--version") return cmd_version({});
    for (const auto& c : commands())
      if (args[0] == c.name) return c.run(Args(args.begin() + 1, args.end()));
    std::vector<std::string> near;
    for (const auto& c : commands())
      if (edit_distance(args[0], c.name) <= 2) near.push_back("\"" + std::string(c.name) + "\"");
    std::string message = "unknown command \"" + args[0] + "\"";
    for (std::size_t i = 0; i < near.size(); ++i)
      message += (i == 0 ? "; did you mean " : i + 1 == near.size() ? " or " : ", ") + near[i];
    throw Error(Exit::bad_input, message + (near.empty() ? "" : "?") + " (see `gate help`)");
  } catch (const Error& e) {
    std::cerr << "gate: error: " << terminal_safe(e.what()) << "\n";
    return static_cast<int>(e.code());
  } catch (const boost::program_options::error& e) {
    // An option error belongs to the command it was given to.
    std::cerr << "gate: error: " << terminal_safe(e.what()) << " (see `gate " << terminal_safe(args[0])
              << " --help`)\n";
    return static_cast<int>(Exit::bad_input);
  } catch (const std::bad_alloc&) {
    std::cerr << "gate: error: out of memory\n";
    return static_cast<int>(Exit::cannot_run);
  } catch (const std::exception& e) {
    // An exception that is not a gate::Error is a bug in gate, not bad input.
    std::cerr << "gate: internal error: " << terminal_safe(e.what()) << "\n";
    return 70;
  }
}

// Output that never arrived is a failure to run whatever the command found:
// `gate compare --format json > /dev/full` must not pass with the verdict
// lost. Checked once here for every command; an error the command already
// reported (2, 3, 4, 130, 143) is the more precise one and is kept.
int checked_stdout(int rc) {
  std::cout.flush();
  errno = 0;
  std::string why;
  if (std::fflush(stdout) != 0)
    why = std::string(": ") + std::strerror(errno);
  else if (std::ferror(stdout) || !std::cout.good())
    why = ": a write failed earlier; the output is incomplete"; // its errno is long gone
  // A stdout closed from the start (`>&-`) that nothing was written to is fine.
  else if (std::fclose(stdout) != 0 && errno != EBADF)
    why = std::string(": ") + std::strerror(errno);
  if (why.empty()) return rc;
  std::cerr << "gate: error: cannot write to stdout" << why << "\n";
  return rc <= static_cast<int>(Exit::threshold) ? static_cast<int>(Exit::cannot_run) : rc;
}

} // namespace

int main(int argc, char** argv) {
  // Process-wide, so set here: orphans of the commands gate runs for agents
  // become gate's children instead of init's, to be killed and reaped with
  // the command (agent/tree.hpp). Without it they are still followed
  // through /proc while their command runs.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // A write to a pipe or socket whose reader left (an agent that closed its
  // stdin, a client of the proxy that hung up) must be an EPIPE the writer
  // handles, not the end of gate. Children get default dispositions back
  // (agent/process.cpp).
  std::signal(SIGPIPE, SIG_IGN);
  process_env();
  return checked_stdout(run(Args(argv + 1, argv + argc)));
}

} // namespace gate::cli

// agent/process and agent_env: the command in its own process group, its
// timeout, output caps, and an environment that never holds the real key.
#include <doctest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gate/agent/agent.hpp>
#include <gate/agent/process.hpp>
#include <tests/support/process_wait.hpp>

namespace fs = std::filesystem;
using namespace gate::agent;

namespace {

std::vector<std::string> base_env() { return {"PATH=/usr/local/bin:/usr/bin:/bin"}; }

ProcessSpec spec_of(std::vector<std::string> argv, double timeout = 30) {
  ProcessSpec s;
  s.argv = std::move(argv);
  s.cwd = fs::temp_directory_path();
  s.env = base_env();
  s.timeout_s = timeout;
  return s;
}

} // namespace

TEST_CASE("exit code, stdout, stderr and stdin of a command") {
  ProcessSpec s = spec_of({"sh", "-c", "cat; echo err >&2; exit 3"});
  s.stdin_text = "the task\n";
  ProcessResult r = run_process(s);
  CHECK(r.started);
  CHECK(r.exit_code == 3);
  CHECK(r.out == "the task\n");
  CHECK(r.err == "err\n");
  CHECK_FALSE(r.timed_out);
}

TEST_CASE("the command runs in cwd with exactly the given environment") {
  ProcessSpec s = spec_of({"sh", "-c", "pwd; echo \"$ONLY\"; echo \"${HOME:-nohome}\""});
  s.cwd = "/";
  s.env.push_back("ONLY=yes");
  ProcessResult r = run_process(s);
  CHECK(r.out == "/\nyes\nnohome\n");
}

TEST_CASE("a command that cannot be started says why") {
  ProcessResult r = run_process(spec_of({"gate-no-such-program-xyz"}));
  CHECK_FALSE(r.started);
  CHECK(r.start_error.find("cannot start gate-no-such-program-xyz") != std::string::npos);
}

TEST_CASE("output beyond the cap is dropped and marked") {
  ProcessResult r = run_process(spec_of({"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' a"}));
  CHECK(r.out_truncated);
  CHECK(r.out.size() == k_output_cap + k_truncated_marker.size());
  CHECK(r.out.ends_with(k_truncated_marker));
  CHECK(r.exit_code == 0);
}

TEST_CASE("rel-39: at the timeout the whole group is killed, a grandchild that ignores SIGTERM included") {
  const fs::path pidfile = fs::temp_directory_path() / ("gate-gc-" + std::to_string(::getpid()) + ".pid");
  ProcessSpec s =
      spec_of({"sh", "-c",
               "sh -c 'trap \"\" TERM; sleep 1000' & echo $! > \"$PIDFILE\"; trap '' TERM; sleep 1000; wait"},
              0.5);
  s.env.push_back("PIDFILE=" + pidfile.string());
  s.kill_grace_s = 0.3;
  ProcessResult r = run_process(s);
  CHECK(r.started);
  CHECK(r.timed_out);
  CHECK(r.exit_code == -1);
  CHECK(r.signal == SIGKILL);
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  in >> grandchild;
  REQUIRE(grandchild > 0);
  CHECK(gate::test::wait_until_stopped(grandchild));
  fs::remove(pidfile);
}

TEST_CASE("what a command leaves running in its group ends with it") {
  const fs::path pidfile = fs::temp_directory_path() / ("gate-bg-" + std::to_string(::getpid()) + ".pid");
  ProcessSpec s = spec_of({"sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $! > \"$PIDFILE\"; exit 0"});
  s.env.push_back("PIDFILE=" + pidfile.string());
  ProcessResult r = run_process(s);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(r.timed_out);
  std::ifstream in(pidfile);
  pid_t bg = 0;
  in >> bg;
  REQUIRE(bg > 0);
  CHECK(gate::test::wait_until_stopped(bg));
  fs::remove(pidfile);
}

pid_t read_pid(const fs::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

TEST_CASE("rel-39: a child that left the group with setsid is killed at the timeout too") {
  const fs::path pidfile = fs::temp_directory_path() / ("gate-sid-" + std::to_string(::getpid()) + ".pid");
  fs::remove(pidfile);
  // setsid(1) execs in place here (the background child leads no group).
  ProcessSpec s = spec_of({"sh", "-c",
                           "setsid sh -c 'echo $$ > \"$PIDFILE\"; trap \"\" TERM; exec sleep 1000' & "
                           "trap '' TERM; sleep 1000"},
                          1.0);
  s.env.push_back("PIDFILE=" + pidfile.string());
  s.kill_grace_s = 0.3;
  ProcessResult r = run_process(s);
  CHECK(r.timed_out);
  const pid_t escaped = read_pid(pidfile);
  REQUIRE(escaped > 0);
  const bool stopped = gate::test::wait_until_stopped(escaped);
  CHECK(stopped);
  if (!stopped) ::kill(escaped, SIGKILL);
  fs::remove(pidfile);
}

TEST_CASE("with gate a subreaper, a daemon whose parent is gone ends with the command and is reaped") {
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  const fs::path pidfile = fs::temp_directory_path() / ("gate-dmn-" + std::to_string(::getpid()) + ".pid");
  fs::remove(pidfile);
  // The subshell exits at once: the daemon is an orphan before anyone looks.
  ProcessSpec s =
      spec_of({"sh", "-c", "(setsid sh -c 'echo $$ > \"$PIDFILE\"; exec sleep 1000' &); sleep 0.3; exit 0"});
  s.env.push_back("PIDFILE=" + pidfile.string());
  ProcessResult r = run_process(s);
  CHECK(r.exit_code == 0);
  const pid_t daemon = read_pid(pidfile);
  REQUIRE(daemon > 0);
  // Gone, not a zombie left for gate (its parent now) to reap.
  CHECK(::kill(daemon, 0) != 0);
  if (::kill(daemon, 0) == 0) {
    ::kill(daemon, SIGKILL);
    ::waitpid(daemon, nullptr, 0);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  fs::remove(pidfile);
}

TEST_CASE("rel-06: the agent's environment has the dummy key and the loopback URL, never the real key") {
  const std::string canary = "sk-agent-canary-7d3f9e21";
  gate::config::Config cfg;
  cfg.model.api_key_env = "GATE_TEST_AGENT_KEY";
  cfg.model.seed = 7;
  const std::string copy = "COPY=Bearer " + canary;
  const std::string real = "GATE_TEST_AGENT_KEY=" + canary;
  const std::string openai = "OPENAI_API_KEY=" + canary;
  const char* parent[] = {"PATH=/bin",
                          real.c_str(),
                          copy.c_str(),
                          openai.c_str(),
                          "OPENAI_BASE_URL=https://api.openai.com/v1",
                          "ANTHROPIC_API_KEY=sk-ant-other",
                          "GATE_RUN=9",
                          "Z=last",
                          nullptr};
  auto env = agent_env(gate::environment_from(parent), cfg, "http://127.0.0.1:5555/t/a%20b/r/1", "a b", 1,
                       run_seed(cfg, 1));
  const std::vector<std::string> want = {
      "ANTHROPIC_API_KEY=gate-dummy-key",
      "ANTHROPIC_BASE_URL=http://127.0.0.1:5555/t/a%20b/r/1",
      "GATE_RUN=1",
      "GATE_SEED=8",
      "GATE_TASK_ID=a b",
      "OPENAI_API_KEY=gate-dummy-key",
      "OPENAI_BASE_URL=http://127.0.0.1:5555/t/a%20b/r/1",
      "PATH=/bin",
      "Z=last",
  };
  CHECK(env == want);
  for (const auto& e : env)
    CHECK(e.find(canary) == std::string::npos);
}

TEST_CASE("issue 31: the shared cache's token never reaches an agent or a script check") {
  const std::string canary = "cache-token-canary-5b1e";
  gate::config::Config cfg;
  cfg.model.api_key_env = "GATE_TEST_AGENT_KEY";
  cfg.cache.remote_auth_env = "GATE_TEST_CACHE_TOKEN";
  const std::string token = "GATE_TEST_CACHE_TOKEN=" + canary;
  const std::string copy = "AUTH_HEADER=Bearer " + canary;
  const char* parent[] = {"PATH=/bin", token.c_str(), copy.c_str(), "Z=last", nullptr};
  const auto parent_env = gate::environment_from(parent);
  for (const auto& env : {agent_env(parent_env, cfg, "http://127.0.0.1:1/", "t", 0, "0"),
                          child_env(parent_env, cfg, {"GATE_CHECK=1"})}) {
    for (const auto& e : env)
      CHECK(e.find(canary) == std::string::npos);
    CHECK(std::find(env.begin(), env.end(), "Z=last") != env.end());
  }
  CHECK(secret_env_names(cfg) == std::vector<std::string>{"GATE_TEST_AGENT_KEY", "GATE_TEST_CACHE_TOKEN"});
}

TEST_CASE("a stop request ends the group as a timeout would, but is not a timeout") {
  std::atomic<bool> stop{true};
  ProcessSpec s = spec_of({"sleep", "1000"});
  s.stop = &stop;
  ProcessResult r = run_process(s);
  CHECK(r.started);
  CHECK(r.stopped);
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == SIGTERM);
}

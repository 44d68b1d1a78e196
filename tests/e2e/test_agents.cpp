// Agent-command tasks end to end: the bundled fixtures/agents suite in
// replay-only mode, an agent killed at its timeout, a fixture symlink that
// tries to escape, and the real key kept away from the agent (RELIABILITY
// 6 and 39).
#include <doctest.h>

#include <boost/json.hpp>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

#include "harness.hpp"
#include <tests/support/fake_upstream.hpp>
#include <tests/support/process_wait.hpp>

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

constexpr const char* k_canary = "sk-agent-e2e-canary-3c9b1f08";

fs::path build_dir() { return fs::path(gate_binary()).parent_path(); }

std::string path_with_build() {
  const char* p = std::getenv("PATH");
  return build_dir().string() + ":" + (p != nullptr ? p : "/usr/bin:/bin");
}

// A one-version suite in <dir>/suite with the given cases lines and a
// gate.yaml next to it (replay mode by default: these agents call no model).
fs::path make_suite(const fs::path& dir, const std::string& cases,
                    const std::string& base_url = "http://127.0.0.1:9/v1",
                    const std::string& mode = "replay") {
  // gate itself pins the sha256: the suite is created from the file.
  fs::create_directories(dir / "suite");
  spit(dir / "cases.jsonl", cases);
  Result created = run_gate({"suite", "create", (dir / "suite").string(), "--name", "agents-e2e", "--from",
                             (dir / "cases.jsonl").string()},
                            dir);
  REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  const fs::path cfg = dir / "gate.yaml";
  spit(cfg, "suite:\n  path: suite\nmodel:\n  provider: openai\n  base_url: " + base_url +
                "\n  api_key_env: GATE_AGENT_E2E_KEY\n  name: m\nruns: 1\nconcurrency: 2\ncache:\n  dir: "
                "cache\n  mode: " +
                mode + "\noutputs:\n  dir: out\n");
  return cfg;
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// string_view, as in json::as_object: g++ 13+ -Wdangling-reference.
const boost::json::object& run_of(const boost::json::value& report, std::string_view task,
                                  std::size_t run = 0) {
  for (const auto& t : report.at("tasks").as_array())
    if (t.at("id").as_string() == task) return t.at("runs").as_array().at(run).as_object();
  FAIL("no task " << task);
  throw std::logic_error("unreachable");
}

} // namespace

TEST_CASE("fixtures/agents replays offline: 20 of 22 runs pass, work copies removed, results as recorded") {
  TempDir tmp;
  fs::create_directories(tmp.path() / "tmpdir");
  // No PATH change: gate-example-agent is found next to the gate binary.
  const std::map<std::string, std::string> env{{"TMPDIR", (tmp.path() / "tmpdir").string()}};
  Result r = run_gate({"run", "--config", (source_dir() / "fixtures/agents/gate.yaml").string(), "--mode",
                       "replay-only", "--out", (tmp.path() / "out").string(), "--quiet"},
                      tmp.path(), env);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("11 tasks x 2 runs") != std::string::npos);
  CHECK(r.out.find("22 of 22 runs replayed; 0 errored") != std::string::npos);
  CHECK(entries(tmp.path() / "tmpdir") == 0);

  const boost::json::value report = read_json(tmp.path() / "out/report.json");
  std::size_t passed = 0, runs = 0;
  for (const auto& t : report.at("tasks").as_array())
    for (const auto& run : t.at("runs").as_array()) {
      ++runs;
      passed += run.at("passed").as_bool() ? 1 : 0;
      CHECK(run.at("error").as_string() == "");
      CHECK(run.at("agent_exit_code").as_int64() == 0);
      CHECK(run.at("agent_timed_out").as_bool() == false);
      CHECK(run.at("final_state_hash").as_string().size() == 64);
      CHECK(run.at("final_state_hash") == run.at("answer_sha256"));
    }
  CHECK(runs == 22);
  CHECK(passed == 20);
  // The one task that fails by design: the file is missing, the agent gives up.
  const auto& missing = run_of(report, "missing-file");
  CHECK_FALSE(missing.at("passed").as_bool());
  CHECK(missing.at("agent_stdout").as_string() == "cannot complete: error: no such file: report.txt\n");
  // report.md shows what the agent said, not an empty answer.
  CHECK(slurp(tmp.path() / "out/report.md")
            .find("| exit 0; stdout: cannot complete: error: no such file: report.txt") != std::string::npos);
  const auto& notes = run_of(report, "notes-first-line", 1);
  const auto& calls = notes.at("tool_calls").as_array();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0].at("name").as_string() == "read_file");
  CHECK(calls[1].at("name").as_string() == "write_answer");
  CHECK(notes.at("agent_stdout").as_string() == "done: Buy milk\n");
  // The same work-copy state in both runs of a task: answers are consistent.
  CHECK(run_of(report, "numbers-sum", 0).at("final_state_hash") ==
        run_of(report, "numbers-sum", 1).at("final_state_hash"));
  CHECK(run_of(report, "numbers-sum", 0).at("final_state_hash") !=
        run_of(report, "words-count", 0).at("final_state_hash"));
}

TEST_CASE("rel-39: an agent that runs forever is killed with its group at the timeout; error agent") {
  TempDir tmp;
  fs::create_directories(tmp.path() / "suite/fx");
  fs::create_directories(tmp.path() / "tmpdir");
  spit(tmp.path() / "suite/fx/a.txt", "a");
  const fs::path pidfile = tmp.path() / "grandchild.pid";
  const std::string cases =
      R"({"id":"forever","kind":"agent","input":"x","agent":{"command":["sh","-c","sleep 1000 & echo $! > \"$GATE_E2E_PIDFILE\"; trap '' TERM; while :; do sleep 1; done"],"fixture":"fx","timeout":1},"checks":[{"type":"exit_code"}]})"
      "\n";
  const fs::path cfg = make_suite(tmp.path(), cases);
  Result r = run_gate({"run", "--config", cfg.string(), "--quiet"}, tmp.path(),
                      {{"GATE_E2E_PIDFILE", pidfile.string()}, {"TMPDIR", (tmp.path() / "tmpdir").string()}});
  // Its only run errored: the report is written, and nothing was measured.
  REQUIRE_MESSAGE(r.exit_code == 3, r.err);
  CHECK(r.err.find("could not measure: 1 of 1 runs errored (agent 1)") != std::string::npos);
  CHECK(r.out.find("1 errored") != std::string::npos);
  const auto report = read_json(tmp.path() / "out/report.json");
  const auto& run = run_of(report, "forever");
  CHECK(run.at("error").as_string() == "agent");
  CHECK(run.at("error_message").as_string().find("timed out after 1") != std::string::npos);
  CHECK(run.at("agent_timed_out").as_bool());
  CHECK(run.at("agent_exit_code").as_int64() == -1);
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  in >> grandchild;
  REQUIRE(grandchild > 0);
  CHECK(gate::test::wait_until_stopped(grandchild));
  CHECK(entries(tmp.path() / "tmpdir") == 0);
}

TEST_CASE("rel-39: what an agent started outside its group (setsid, or a daemon) is gone when gate returns") {
  TempDir tmp;
  fs::create_directories(tmp.path() / "suite/fx");
  spit(tmp.path() / "suite/fx/a.txt", "a");
  // One agent times out with a setsid child; one exits at once, leaving a
  // daemon whose parent is gone. Each child would write `late` a while later.
  const std::string sid = tmp.path() / "sid.pid", daemon = tmp.path() / "daemon.pid";
  const std::string cases =
      R"({"id":"setsid","kind":"agent","input":"x","agent":{"command":["sh","-c","setsid sh -c 'echo $$ > \"$SID_PID\"; sleep 3; echo late > \"$SID_PID.late\"; exec sleep 1000' & sleep 1000"],"fixture":"fx","timeout":1},"checks":[{"type":"exit_code"}]})"
      "\n"
      R"({"id":"daemon","kind":"agent","input":"x","agent":{"command":["sh","-c","(setsid sh -c 'echo $$ > \"$DAEMON_PID\"; sleep 3; echo late > \"$DAEMON_PID.late\"; exec sleep 1000' &); sleep 0.5"],"fixture":"fx","timeout":10},"checks":[{"type":"exit_code"}]})"
      "\n";
  const fs::path cfg = make_suite(tmp.path(), cases);
  Result r = run_gate({"run", "--config", cfg.string(), "--quiet"}, tmp.path(),
                      {{"SID_PID", sid}, {"DAEMON_PID", daemon}});
  // The timed-out run errored (1 of 2): the report is written, nothing judged.
  REQUIRE_MESSAGE(r.exit_code == 3, r.err);
  CHECK(run_of(read_json(tmp.path() / "out/report.json"), "setsid").at("agent_timed_out").as_bool());
  for (const std::string& file : {sid, daemon}) {
    CAPTURE(file);
    std::ifstream in(file);
    pid_t pid = 0;
    in >> pid;
    REQUIRE(pid > 0);
    // Gone already: gate killed it before returning (a survivor would now be
    // init's, and alive).
    const bool gone = gate::test::process_stopped(pid);
    CHECK(gone);
    if (!gone) ::kill(pid, SIGKILL);
  }
  ::sleep(3);
  CHECK_FALSE(fs::exists(sid + ".late"));
  CHECK_FALSE(fs::exists(daemon + ".late"));
}

TEST_CASE(
    "rel-39: a fixture symlink pointing outside cannot be written through; the outside file is untouched") {
  TempDir tmp;
  spit(tmp.path() / "outside.txt", "precious\n");
  fs::create_directories(tmp.path() / "suite/abs");
  fs::create_directories(tmp.path() / "suite/rel");
  fs::create_directories(tmp.path() / "tmpdir");
  fs::create_symlink(tmp.path() / "outside.txt", tmp.path() / "suite/abs/answer.txt");
  fs::create_symlink("../../outside.txt", tmp.path() / "suite/rel/answer.txt");
  const std::string agent =
      R"("command":["sh","-c","echo pwned > answer.txt; echo pwned > task.txt"],"timeout":10)";
  const std::string cases =
      R"({"id":"absolute","kind":"agent","input":"x","agent":{)" + agent +
      R"(,"fixture":"abs"},"checks":[{"type":"exit_code"}]})" + "\n" +
      R"({"id":"relative","kind":"agent","input":"x","agent":{)" + agent +
      R"(,"fixture":"rel","input":"file:answer.txt"},"checks":[{"type":"exit_code"}]})" + "\n";
  const fs::path cfg = make_suite(tmp.path(), cases);
  Result r = run_gate({"run", "--config", cfg.string(), "--quiet"}, tmp.path(),
                      {{"TMPDIR", (tmp.path() / "tmpdir").string()}});
  REQUIRE_MESSAGE(r.exit_code == 3, r.err); // every run refused: nothing measured
  const auto report = read_json(tmp.path() / "out/report.json");
  for (const char* id : {"absolute", "relative"}) {
    const auto& run = run_of(report, id);
    CHECK(run.at("error").as_string() == "agent");
    CHECK(run.at("error_message").as_string().find("points outside the work copy") != std::string::npos);
  }
  CHECK(slurp(tmp.path() / "outside.txt") == "precious\n");
  CHECK(entries(tmp.path() / "tmpdir") == 0);
}

TEST_CASE(
    "rel-39: a fixture link that escapes through another link is refused; the file outside is untouched") {
  TempDir tmp;
  const fs::path tmpdir = tmp.path() / "tmpdir";
  fs::create_directories(tmp.path() / "suite/fx/sub/sub2");
  fs::create_directories(tmpdir);
  // The work copy is tmpdir/gate-agent-XXXXXX: answer.txt resolves to
  // tmpdir/victim.txt, although its target's text stays inside.
  spit(tmpdir / "victim.txt", "precious\n");
  fs::create_symlink("..", tmp.path() / "suite/fx/sub/sub2/a");
  fs::create_symlink("sub/sub2/a/../../victim.txt", tmp.path() / "suite/fx/answer.txt");
  const std::string cases =
      R"({"id":"chain","kind":"agent","input":"x","agent":{"command":["sh","-c","echo pwned > answer.txt"],"timeout":10,"fixture":"fx"},"checks":[{"type":"exit_code"}]})"
      "\n";
  const fs::path cfg = make_suite(tmp.path(), cases);
  Result r =
      run_gate({"run", "--config", cfg.string(), "--quiet"}, tmp.path(), {{"TMPDIR", tmpdir.string()}});
  REQUIRE_MESSAGE(r.exit_code == 3, r.err); // its only run was refused: nothing measured
  const auto report = read_json(tmp.path() / "out/report.json");
  const auto& run = run_of(report, "chain");
  CHECK(run.at("error").as_string() == "agent");
  CHECK(
      run.at("error_message").as_string().find("answer.txt -> sub/sub2/a/../../victim.txt points outside") !=
      std::string::npos);
  CHECK(slurp(tmpdir / "victim.txt") == "precious\n");
  CHECK(entries(tmpdir) == 1);
}

TEST_CASE(
    "rel-06: recording through the proxy, the agent sees only the dummy key; the canary is written nowhere") {
  gate::testing::clear_network_env();
  gate::testing::FakeUpstream upstream(gate::testing::Script{});
  upstream.start();
  TempDir tmp;
  fs::create_directories(tmp.path() / "suite/fx");
  fs::create_directories(tmp.path() / "tmpdir");
  spit(tmp.path() / "suite/fx/notes.txt", "n\n");
  const std::string cases =
      R"({"id":"env-dump","kind":"agent","input":"say hi","agent":{"command":["sh","-c","env > env.txt; exec gate-example-agent"],"fixture":"fx","timeout":20},)"
      R"("checks":[{"type":"file_contains","path":"env.txt","value":"OPENAI_API_KEY=gate-dummy-key"},{"type":"stdout","check":{"type":"contains","value":"echo: say hi"}},)"
      R"({"type":"tool_sequence","equals":[]},{"type":"command","argv":["sh","-c","! grep -q '^GATE_AGENT_E2E_KEY=' env.txt"]}]})"
      "\n";
  const fs::path cfg = make_suite(tmp.path(), cases, upstream.base_url(), "record");
  Result r = run_gate({"run", "--config", cfg.string(), "--keep-workdirs", "--quiet"}, tmp.path(),
                      {{"GATE_AGENT_E2E_KEY", k_canary},
                       {"PATH", path_with_build()},
                       {"TMPDIR", (tmp.path() / "tmpdir").string()}});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("kept work copy of task env-dump run 0: ") != std::string::npos);
  const auto report = read_json(tmp.path() / "out/report.json");
  const auto& run = run_of(report, "env-dump");
  for (const auto& c : run.at("checks").as_array())
    CHECK_MESSAGE(c.at("passed").as_bool(), c.at("label").as_string() << ": " << c.at("detail").as_string());
  CHECK(run.at("passed").as_bool());
  // The proxy added the real key upstream; the agent sent only the dummy.
  const auto log = upstream.log();
  REQUIRE(log.size() == 1);
  CHECK(log[0].headers.at("authorization") == std::string("Bearer ") + k_canary);
  // Kept work copy (env.txt included), cache, report, outputs: no canary.
  REQUIRE(entries(tmp.path() / "tmpdir") == 1);
  CHECK(no_canary_in(tmp.path(), r.out + r.err, k_canary));

  // Replay-only with the upstream stopped: the same result offline.
  upstream.stop();
  fs::remove_all(tmp.path() / "tmpdir");
  fs::create_directories(tmp.path() / "tmpdir");
  Result replay = run_gate({"run", "--config", cfg.string(), "--mode", "replay-only", "--quiet"}, tmp.path(),
                           {{"PATH", path_with_build()}, {"TMPDIR", (tmp.path() / "tmpdir").string()}});
  REQUIRE_MESSAGE(replay.exit_code == 0, replay.err);
  CHECK(run_of(read_json(tmp.path() / "out/report.json"), "env-dump").at("passed").as_bool());
}

TEST_CASE("replay-only: a response the agent needs that is not recorded exits 4 naming task and run") {
  TempDir tmp;
  fs::create_directories(tmp.path() / "suite/fx");
  spit(tmp.path() / "suite/fx/a.txt", "a");
  const std::string cases =
      R"({"id":"needs-model","kind":"agent","input":"say hi","agent":{"command":["gate-example-agent"],"fixture":"fx","timeout":20},"checks":[{"type":"exit_code"}]})"
      "\n";
  const fs::path cfg = make_suite(tmp.path(), cases, "http://127.0.0.1:9/v1", "replay-only");
  Result r =
      run_gate({"run", "--config", cfg.string(), "--quiet"}, tmp.path(), {{"PATH", path_with_build()}});
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("missing: task needs-model run 0") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path() / "out/report.json"));
}

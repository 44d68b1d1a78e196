// The script check: what check/ makes of a script's run (hand-made runs,
// no process), and run/script's real process: stdin, GATE_CASE, the
// environment without the key, the directory, the timeout.
#include <doctest.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include <gate/check/check.hpp>
#include <gate/run/script.hpp>
#include <gate/util/error.hpp>
#include <tests/support/temp_dir.hpp>

namespace fs = std::filesystem;
using gate::check::Check;
using gate::check::evaluate;
using gate::check::Reply;
using gate::check::Result;
using gate::check::ScriptRun;

namespace {

Check mk(std::string_view spec) {
  return gate::check::parse(boost::json::parse(spec), std::nullopt, "c.jsonl:2");
}

const Check k_grade = mk(R"({"type": "script", "argv": ["python3", "grade.py"], "timeout": 5})");

// Evaluates `c` on `answer` with a runner that returns `run` and keeps what
// it was given.
Result with_run(const Check& c, std::string_view answer, const ScriptRun& run, std::string* seen = nullptr) {
  const gate::check::ScriptRunner runner = [&](const Check&, std::string_view a) {
    if (seen != nullptr) *seen = std::string(a);
    return run;
  };
  Reply r;
  r.text = answer;
  r.script = &runner;
  return evaluate(c, r);
}

ScriptRun exited(int code, std::string out) {
  ScriptRun r;
  r.started = true;
  r.exit_code = code;
  r.out = std::move(out);
  return r;
}

} // namespace

TEST_CASE("script: exit 0 passes with its first line as the reason; another status fails") {
  std::string seen;
  const Result pass = with_run(k_grade, "the answer", exited(0, "all 3 items ok\nmore\n"), &seen);
  CHECK(seen == "the answer");
  CHECK(pass.passed);
  CHECK_FALSE(pass.errored);
  CHECK(pass.detail == "");
  CHECK(pass.reason == "all 3 items ok");

  const Result fail = with_run(k_grade, "x", exited(1, "qty must be at least 1\r\n"));
  CHECK_FALSE(fail.passed);
  CHECK_FALSE(fail.errored);
  CHECK(fail.reason == "qty must be at least 1");
  CHECK(fail.detail ==
        "expected [\"python3\", \"grade.py\"] to exit 0; it exited with 1: qty must be at least 1");
  CHECK(with_run(k_grade, "x", exited(2, "")).detail ==
        "expected [\"python3\", \"grade.py\"] to exit 0; it exited with 2");
}

TEST_CASE("script: the reason is escaped, redacted and cut") {
  // An escape sequence cannot reach a terminal or forge a line.
  CHECK(with_run(k_grade, "x", exited(0, "\x1b[31mred\tok")).reason == "\\x1b[31mred\\x09ok");
  const Result long_line = with_run(k_grade, "x", exited(0, std::string(500, 'a')));
  CHECK(long_line.reason == std::string(gate::check::k_script_reason_limit, 'a') + "...");
  CHECK(with_run(k_grade, "x", exited(0, "bad \xff byte")).reason == "bad \xEF\xBF\xBD byte");
}

TEST_CASE("script: could not start, timed out or killed is errored, not failed") {
  ScriptRun missing;
  missing.start_error = "cannot start python3: No such file or directory";
  const Result e = with_run(k_grade, "x", missing);
  CHECK(e.errored);
  CHECK_FALSE(e.passed);
  CHECK(e.detail == "cannot start python3: No such file or directory");

  ScriptRun slow = exited(-1, "partial");
  slow.timed_out = true;
  slow.signal = 15;
  const Result t = with_run(k_grade, "x", slow);
  CHECK(t.errored);
  CHECK(t.detail == "[\"python3\", \"grade.py\"] timed out after 5 s; its process group was killed");

  ScriptRun killed = exited(-1, "");
  killed.signal = 9;
  const Result k = with_run(k_grade, "x", killed);
  CHECK(k.errored);
  CHECK(k.detail == "[\"python3\", \"grade.py\"] was killed by signal 9");

  // A program that ends itself by a signal says why on its first line.
  ScriptRun said = exited(-1, "context.provider: not available\nmore");
  said.signal = 9;
  const Result w = with_run(k_grade, "x", said);
  CHECK(w.errored);
  CHECK(w.detail == "[\"python3\", \"grade.py\"] was killed by signal 9: context.provider: not available");

  // Without a runner (an agent's stdout, a test's bare text): errored.
  const Result none = evaluate(k_grade, "x");
  CHECK(none.errored);
  CHECK(none.detail == "a script check runs in a model case only, not on the answer");
}

TEST_CASE("script inside groups: evaluated through the same runner; an errored script errors the group") {
  const Check g = mk(R"({"type": "all_of", "checks": [{"type": "contains", "value": "x"},
    {"type": "script", "argv": ["./g"]}]})");
  CHECK(with_run(g, "x", exited(0, "")).passed);
  CHECK(with_run(g, "x", exited(1, "no")).detail ==
        "1 of 2 checks failed: script: expected [\"./g\"] to exit 0; it exited with 1: no");
  ScriptRun missing;
  missing.start_error = "cannot start ./g: No such file or directory";
  const Result e = with_run(g, "x", missing);
  CHECK(e.errored);
  CHECK(e.detail == "script: cannot start ./g: No such file or directory");
  const Check n = mk(R"({"not": {"type": "script", "argv": ["./g"]}})");
  CHECK(with_run(n, "x", exited(1, "")).passed);
}

TEST_CASE("script: bad input is refused at load") {
  CHECK_THROWS_WITH_AS(
      mk(R"({"type": "script"})"),
      "c.jsonl:2: check \"script\": missing \"argv\" (a non-empty array of strings; no shell)", gate::Error);
  CHECK_THROWS_WITH_AS(
      mk(R"({"type": "script", "argv": []})"),
      "c.jsonl:2: check \"script\": \"argv\" must be a non-empty array of strings, got an array",
      gate::Error);
  CHECK_THROWS_WITH_AS(
      mk(R"({"type": "script", "argv": ["a"], "timeout": 0})"),
      "c.jsonl:2: check \"script\": \"timeout\" must be a number of seconds > 0 (at most 86400)",
      gate::Error);
  CHECK_THROWS_WITH_AS(
      mk(R"({"type": "script", "argv": "grade.py"})"),
      "c.jsonl:2: check \"script\": \"argv\" must be a non-empty array of strings, got a string",
      gate::Error);
  CHECK(mk(R"({"type": "script", "argv": ["a"]})").timeout_s == 10);
}

namespace {

struct ScriptFixture {
  gate::testing::TempDir dir;
  gate::suite::Suite suite;
  gate::config::Config cfg;
  gate::Environment env;
  gate::suite::Case task;
  ScriptFixture() {
    suite.dir = dir.path();
    cfg.model.api_key_env = "MY_KEY";
    env = gate::environment_of({{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                {"MY_KEY", "sk-canary-7f3a9b1c2d4e5f60"},
                                {"COPY", "has sk-canary-7f3a9b1c2d4e5f60 inside"},
                                {"KEEP", "kept"}});
    task.id = "t1";
    task.scenario = "default";
    task.input = {{"user", "Add 2 and 2."}};
    task.expected = "4";
  }
  void script(const std::string& name, const std::string& body) {
    const fs::path p = dir.path() / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
  }
  ScriptRun run(const std::string& spec, std::string_view answer) {
    const gate::run::ScriptSetup setup{.suite = &suite, .config = &cfg, .env = &env, .stop = nullptr};
    return gate::run::run_script(mk(spec), answer, task, 2, setup);
  }
};

} // namespace

TEST_CASE("run_script: from the suite directory, the answer on stdin, the case in GATE_CASE, no key") {
  ScriptFixture f;
  f.script("grade.sh",
           "read a; echo \"got $a in $(pwd)\"; echo \"$GATE_CASE\"; echo \"$GATE_TASK_ID $GATE_RUN "
           "$KEEP $OPENAI_API_KEY [$MY_KEY] [$COPY]\"; exit 3\n");
  const ScriptRun r = f.run(R"({"type": "script", "argv": ["./grade.sh"]})", "4\n");
  REQUIRE(r.started);
  CHECK(r.exit_code == 3);
  CHECK(
      r.out ==
      "got 4 in " + fs::canonical(f.dir.path()).string() + "\n" +
          R"({"expected":"4","id":"t1","input":[{"content":"Add 2 and 2.","role":"user"}],"scenario":"default"})"
          "\n"
          "t1 2 kept gate-dummy-key [] []\n");
}

TEST_CASE("run_script: not found is not started; a timeout kills it") {
  ScriptFixture f;
  const ScriptRun missing = f.run(R"({"type": "script", "argv": ["./nope.sh"]})", "");
  CHECK_FALSE(missing.started);
  CHECK(missing.start_error.find("nope.sh") != std::string::npos);
  f.script("slow.sh", "sleep 30\n");
  const ScriptRun slow = f.run(R"({"type": "script", "argv": ["./slow.sh"], "timeout": 0.2})", "");
  CHECK(slow.started);
  CHECK(slow.timed_out);
  // A case too large for one environment string is refused before the spawn.
  f.task.input = {{"user", std::string(gate::run::k_max_case_json, 'x')}};
  const ScriptRun big = f.run(R"({"type": "script", "argv": ["./slow.sh"]})", "");
  CHECK_FALSE(big.started);
  CHECK(big.start_error.find("more than GATE_CASE can hold (131061)") != std::string::npos);
}

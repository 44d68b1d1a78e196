// agent/checks: every agent check passing and failing on hand-made trees.
#include <doctest.h>

#include <boost/json.hpp>
#include <string>

#include <gate/agent/checks.hpp>
#include <gate/check/check.hpp>
#include <gate/util/sha256.hpp>

using namespace gate::agent;

namespace {

gate::check::Check chk(const std::string& json) {
  return gate::check::parse(boost::json::parse(json), std::nullopt, "t:1");
}

struct Fixture {
  Tree before{{"a.txt", {false, "one\ntwo\nthree\n"}}, {"keep.txt", {false, "k"}}};
  Tree after{{"a.txt", {false, "one\nTWO\nthree\n"}},
             {"keep.txt", {false, "k"}},
             {"answer.txt", {false, "{\"n\": 3, \"name\": \"x\"}"}},
             {"link", {true, "a.txt"}}};
  ProcessResult process;
  std::vector<gate::results::ToolCall> tools{
      {"read_file", "h1"}, {"read_file", "h2"}, {"write_answer", "h3"}};
  CheckContext ctx;
  Fixture() {
    process.started = true;
    process.exit_code = 0;
    process.out = "done: 3\n";
    ctx.work = std::filesystem::temp_directory_path();
    ctx.fixture = &before;
    ctx.final = &after;
    ctx.process = &process;
    ctx.tools = &tools;
    ctx.env = {"PATH=/usr/bin:/bin"};
  }
  bool passes(const std::string& json) {
    gate::check::Result r = evaluate(chk(json), ctx);
    CHECK_FALSE(r.errored);
    if (!r.passed) MESSAGE(json << " → " << r.detail);
    return r.passed;
  }
  std::string detail(const std::string& json) { return evaluate(chk(json), ctx).detail; }
};

} // namespace

TEST_CASE("exit_code") {
  Fixture f;
  CHECK(f.passes(R"({"type":"exit_code"})"));
  CHECK_FALSE(f.passes(R"({"type":"exit_code","value":2})"));
  CHECK(f.detail(R"({"type":"exit_code","value":2})") == "expected exit code 2; the command exited with 0");
  f.process.exit_code = -1;
  f.process.signal = 9;
  CHECK(f.detail(R"({"type":"exit_code"})") == "expected exit code 0; the command was killed by signal 9");
}

TEST_CASE("stdout applies a text check; a plain text check on an agent case applies to stdout too") {
  Fixture f;
  CHECK(f.passes(R"({"type":"stdout","check":{"type":"contains","value":"done"}})"));
  CHECK(f.passes(R"({"type":"stdout","check":{"type":"regex","pattern":"^done: [0-9]+$"}})"));
  CHECK_FALSE(f.passes(R"({"type":"stdout","check":{"type":"contains","value":"fail"}})"));
  CHECK(f.passes(R"({"type":"number","value":3})"));
  CHECK_FALSE(f.passes(R"({"type":"contains","value":"nope"})"));
}

TEST_CASE("file_exists, file_contains, file_json, final_state") {
  Fixture f;
  CHECK(f.passes(R"({"type":"file_exists","path":"answer.txt"})"));
  CHECK_FALSE(f.passes(R"({"type":"file_exists","path":"b.txt"})"));
  CHECK(f.passes(R"({"type":"file_contains","path":"a.txt","value":"TWO"})"));
  CHECK(f.detail(R"({"type":"file_contains","path":"a.txt","value":"four"})") ==
        "expected \"a.txt\" to contain \"four\"; the file is \"one\\nTWO\\nthree\\n\"");
  // A symlink is not followed, even to a file inside.
  CHECK(f.detail(R"({"type":"file_contains","path":"link","value":"one"})") ==
        "expected \"link\" to contain \"one\"; it is a symlink (checks do not follow symlinks)");
  CHECK(f.detail(R"({"type":"final_state","path":"gone.txt","sha256":")" + std::string(64, 'a') + "\"}") ==
        "expected \"gone.txt\" to have sha256 " + std::string(64, 'a') + "; it does not exist");
  CHECK(f.passes(
      R"({"type":"file_json","path":"answer.txt","paths":[{"path":"/n","equals":3},{"path":"/name","one_of":["x","y"]}]})"));
  CHECK(f.detail(R"({"type":"file_json","path":"answer.txt","paths":[{"path":"/n","equals":4}]})") ==
        "\"answer.txt\": expected \"/n\" to equal 4; it is 3");
  CHECK(f.detail(R"({"type":"file_json","path":"a.txt","paths":[]})")
            .starts_with("expected \"a.txt\" to be JSON; it is not"));
  CHECK(f.passes(R"({"type":"final_state","path":"keep.txt","sha256":")" + gate::sha256_hex("k") + "\"}"));
  CHECK_FALSE(
      f.passes(R"({"type":"final_state","path":"keep.txt","sha256":")" + gate::sha256_hex("j") + "\"}"));
}

TEST_CASE("command runs in the work copy and passes on exit 0") {
  Fixture f;
  CHECK(f.passes(R"({"type":"command","argv":["true"]})"));
  CHECK(f.detail(R"({"type":"command","argv":["sh","-c","echo broken >&2; exit 1"]})") ==
        "expected [sh, -c, echo broken >&2; exit 1] to exit 0; it exited with 1: \"broken\\n\"");
  gate::check::Result r = evaluate(chk(R"({"type":"command","argv":["gate-no-such-program-xyz"]})"), f.ctx);
  CHECK(r.errored);
}

TEST_CASE("diff_size counts changed lines against the fixture") {
  Fixture f;
  // a.txt: one line changed = 1 removed + 1 added; answer.txt: 1 new line; link: 1.
  CHECK(changed_lines("one\ntwo\nthree\n", "one\nTWO\nthree\n") == 2);
  CHECK(changed_lines("", "x\ny") == 2);
  CHECK(changed_lines("a\nb\nc", "a\nc") == 1);
  CHECK(f.passes(R"({"type":"diff_size","max":4})"));
  CHECK(f.detail(R"({"type":"diff_size","max":3})") == "expected at most 3 changed lines; 4 changed");
}

TEST_CASE("file_scope lists what changed outside the allowed globs") {
  Fixture f;
  CHECK(changed_paths(f.before, f.after) == std::vector<std::string>{"a.txt", "answer.txt", "link"});
  CHECK(f.passes(R"({"type":"file_scope","allow":["a.txt","answer.txt","li*"]})"));
  CHECK(f.detail(R"({"type":"file_scope","allow":["answer.txt"]})") ==
        "expected changes only in [answer.txt]; 2 path(s) changed outside: \"a.txt\", \"link\"");
  // A deleted file is a change too.
  f.after.erase("keep.txt");
  CHECK_FALSE(f.passes(R"({"type":"file_scope","allow":["a.txt","answer.txt","link"]})"));
}

TEST_CASE("tool_sequence equals, starts_with, contains (in order)") {
  Fixture f;
  CHECK(f.passes(R"({"type":"tool_sequence","equals":["read_file","read_file","write_answer"]})"));
  CHECK_FALSE(f.passes(R"({"type":"tool_sequence","equals":["read_file","write_answer"]})"));
  CHECK(f.passes(R"({"type":"tool_sequence","starts_with":["read_file","read_file"]})"));
  CHECK_FALSE(f.passes(R"({"type":"tool_sequence","starts_with":["write_answer"]})"));
  CHECK(f.passes(R"({"type":"tool_sequence","contains":["read_file","write_answer"]})"));
  CHECK_FALSE(f.passes(R"({"type":"tool_sequence","contains":["write_answer","read_file"]})"));
  CHECK(f.detail(R"({"type":"tool_sequence","equals":[]})") ==
        "expected tool calls to equal []; they were [read_file, read_file, write_answer]");
}

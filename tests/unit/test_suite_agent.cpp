// suite: agent cases, their defaults from metadata.json, and the errors
// that name file:line and what was expected.
#include <doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <unistd.h>

#include <gate/suite/suite.hpp>
#include <gate/util/error.hpp>

#include "test_suite_support.hpp"
#include <gate/util/sha256.hpp>
#include <tests/support/temp_dir.hpp>

namespace fs = std::filesystem;
using namespace gate::suite;

using namespace gate::suite::test;

namespace {

// A temp directory with a fixture directory and a file in it.
struct SuiteDir : gate::testing::TempDir {
  SuiteDir() {
    fs::create_directories(path() / "fx");
    std::ofstream(path() / "fx/a.txt") << "a";
    std::ofstream(path() / "file.txt") << "f";
  }
};

std::string agent_line(const std::string& agent, const std::string& checks = R"([{"type":"exit_code"}])") {
  return R"({"id":"t","kind":"agent","input":"do it","agent":)" + agent + R"(,"checks":)" + checks + "}";
}

} // namespace

TEST_CASE("an agent case resolves its command, fixture, timeout and input") {
  SuiteDir s;
  auto cases = parse_cases(
      agent_line(R"({"command":["my-agent","--x"],"fixture":"fx","timeout":5,"input":"file:in/task.txt"})"),
      "c.jsonl", AgentContext{s.path(), nullptr, ""});
  REQUIRE(cases.size() == 1);
  const Case& c = cases[0];
  CHECK(c.kind == gate::suite::Kind::agent);
  REQUIRE(c.agent);
  CHECK(c.agent->command == std::vector<std::string>{"my-agent", "--x"});
  CHECK(c.agent->fixture == "fx");
  CHECK(c.agent->fixture_dir == fs::canonical(s.path() / "fx"));
  CHECK(c.agent->timeout_s == 5);
  CHECK(c.agent->input_file == "in/task.txt");
  auto plain =
      parse_cases(R"({"id":"p","input":"hi","checks":[{"type":"contains","value":"x"}]})", "c.jsonl");
  CHECK(plain[0].kind == gate::suite::Kind::plain);
  CHECK_FALSE(plain[0].agent);
}

TEST_CASE("a case overrides the suite's default agent block key by key") {
  SuiteDir s;
  boost::json::object defaults{
      {"command", boost::json::array{"default-agent"}}, {"timeout", 30}, {"fixture", "fx"}};
  AgentContext ctx{s.path(), &defaults, "m/metadata.json"};
  auto cases = parse_cases(agent_line(R"({"timeout":2})"), "c.jsonl", ctx);
  CHECK(cases[0].agent->command == std::vector<std::string>{"default-agent"});
  CHECK(cases[0].agent->timeout_s == 2);
  CHECK(cases[0].agent->input_file.empty());
  // A bad default names metadata.json and the case that used it.
  boost::json::object bad{{"command", boost::json::array{}}, {"fixture", "fx"}, {"timeout", 1}};
  AgentContext bad_ctx{s.path(), &bad, "m/metadata.json"};
  std::string e = error_of([&] { parse_cases(agent_line("{}"), "c.jsonl", bad_ctx); });
  CHECK(has(e, "m/metadata.json: \"agent\" (the suite's default, used by c.jsonl:1)"));
  CHECK(has(e, "\"command\" must be a non-empty array of strings (argv; no shell), got an empty array"));
}

TEST_CASE("agent validation errors name file:line and what was expected") {
  SuiteDir s;
  AgentContext ctx{s.path(), nullptr, ""};
  auto err = [&](const std::string& line) { return error_of([&] { parse_cases(line, "c.jsonl", ctx); }); };
  const std::string ok_rest = R"("fixture":"fx","timeout":5)";
  CHECK(has(err(agent_line(R"({"command":"my-agent --x",)" + ok_rest + "}")),
            "c.jsonl:1: \"command\" must be a non-empty array of strings (argv; no shell), got a string"));
  CHECK(has(err(agent_line(R"({"command":["a",3],)" + ok_rest + "}")),
            "c.jsonl:1: \"command[1]\" must be a string"));
  CHECK(has(err(agent_line(R"({"command":[""],)" + ok_rest + "}")),
            "\"command[0]\" must be a non-empty string"));
  CHECK(has(err(agent_line(R"({"command":["a"],"fixture":"nope","timeout":5})")),
            "c.jsonl:1: \"fixture\" \"nope\" is not a directory below"));
  CHECK(has(err(agent_line(R"({"command":["a"],"fixture":"file.txt","timeout":5})")),
            "is not a directory below"));
  CHECK(has(err(agent_line(R"({"command":["a"],"fixture":"../x","timeout":5})")),
            "\"fixture\" must be a directory relative to the suite directory (no \"..\", not absolute)"));
  CHECK(has(err(agent_line(R"({"command":["a"],"fixture":"/tmp","timeout":5})")), "not absolute"));
  CHECK(has(err(agent_line(R"({"command":["a"],"fixture":"fx","timeout":0})")),
            "c.jsonl:1: \"timeout\" must be a number of seconds > 0"));
  CHECK(has(err(agent_line(R"({"command":["a"],"fixture":"fx","timeout":5,"input":"file:../x"})")),
            "\"input\" must be \"stdin\" or \"file:NAME\""));
  CHECK(has(err(agent_line(R"({"command":["a"],"fixture":"fx"})")),
            "c.jsonl:1: agent case without \"timeout\" (seconds > 0)"));
  CHECK(has(err(agent_line(R"({"command":["a"],"fixture":"fx","timeout":5,"shell":true})")),
            "unknown key \"shell\" in \"agent\""));
  CHECK(has(err(R"({"id":"t","kind":"robot","input":"x","checks":[{"type":"exit_code"}]})"),
            "\"kind\" must be \"plain\" or \"agent\""));
  CHECK(has(err(R"({"id":"t","input":"x","checks":[{"type":"exit_code"}]})"),
            "c.jsonl:1: check \"exit_code\" needs an agent case (\"kind\": \"agent\")"));
  CHECK(has(err(R"({"id":"t","input":"x","agent":{},"checks":[{"type":"contains","value":"x"}]})"),
            "\"agent\" is given but \"kind\" is not \"agent\""));
  CHECK(has(err(agent_line(R"({"command":["a"],)" + ok_rest + "}", R"([{"type":"llm_judge","rubric":"r"}])")),
            "check \"llm_judge\" is not available for agent cases"));
  // A script check grades a model's answer, also inside a group.
  CHECK(has(err(agent_line(R"({"command":["a"],)" + ok_rest + "}",
                           R"([{"not":{"type":"script","argv":["./g"]}}])")),
            "c.jsonl:1: check \"script\" is not available for agent cases (use \"command\")"));
  CHECK(has(err(agent_line(R"({"command":["a"],)" + ok_rest + "}",
                           R"([{"type":"stdout","check":{"type":"script","argv":["./g"]}}])")),
            "c.jsonl:1: check \"script\" is not available for agent cases (use \"command\")"));
}

TEST_CASE("agent check paths must stay inside the work copy") {
  SuiteDir s;
  AgentContext ctx{s.path(), nullptr, ""};
  auto err = [&](const std::string& checks) {
    return error_of([&] {
      parse_cases(agent_line(R"({"command":["a"],"fixture":"fx","timeout":5})", checks), "c.jsonl", ctx);
    });
  };
  CHECK(has(err(R"([{"type":"file_exists","path":"../etc/passwd"}])"),
            "must be a relative path inside the work copy"));
  CHECK(has(err(R"([{"type":"file_contains","path":"/etc/passwd","value":"root"}])"),
            "must be a relative path inside the work copy"));
  CHECK(has(err(R"([{"type":"final_state","path":"a.txt","sha256":"abc"}])"), "64 lowercase hex digits"));
  CHECK(has(err(R"([{"type":"command","argv":[]}])"), "\"argv\" must be a non-empty array of strings"));
  CHECK(
      has(err(R"([{"type":"tool_sequence"}])"), "expected one of \"equals\", \"contains\", \"starts_with\""));
  CHECK(has(err(R"([{"type":"stdout","check":{"type":"exit_code"}}])"), "\"check\" must be a text check"));
  CHECK(has(err(R"([{"type":"diff_size","max":-1}])"), "\"max\" must be a whole number"));
}

TEST_CASE("metadata.json's default agent block is read, checked and written back") {
  SuiteDir s;
  const std::string cases = agent_line(R"({"timeout":3})") + "\n";
  fs::create_directories(s.path() / "versions/v1");
  std::ofstream(s.path() / "versions/v1/cases.jsonl") << cases;
  const std::string meta =
      "{\"name\":\"s\",\"latest\":\"v1\",\"versions\":[{\"version\":\"v1\",\"sha256\":\"" +
      gate::sha256_hex(cases) +
      "\",\"cases\":1}],\"agent\":{\"command\":[\"ag\"],\"fixture\":\"fx\",\"timeout\":9}}";
  std::ofstream(s.path() / "metadata.json") << meta;
  Metadata m = read_metadata(s.path());
  REQUIRE(m.agent);
  CHECK(format_metadata(m).find(R"("agent": {"command":["ag"],"fixture":"fx","timeout":9})") !=
        std::string::npos);
  Suite loaded = load(s.path(), "");
  CHECK(loaded.cases[0].agent->command == std::vector<std::string>{"ag"});
  CHECK(loaded.cases[0].agent->timeout_s == 3);
  std::ofstream(s.path() / "metadata.json")
      << "{\"name\":\"s\",\"latest\":\"v1\",\"versions\":[{\"version\":\"v1\",\"sha256\":\"" +
             gate::sha256_hex(cases) + "\",\"cases\":1}],\"agent\":{\"timeout\":-1}}";
  CHECK(has(error_of([&] { read_metadata(s.path()); }),
            "metadata.json: \"agent\": \"timeout\" must be a number of seconds > 0"));
}

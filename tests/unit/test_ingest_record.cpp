// Reading one record of an external harness's log (gate analyze).
#include <doctest.h>

#include <boost/json.hpp>

#include <gate/ingest/ingest.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/sha256.hpp>

using namespace gate;
using namespace gate::ingest;

namespace {

Record read(const std::string& json, const Options& o = {}) {
  return read_record({json::parse_strict(json, "t"), "log.jsonl:4"}, o);
}

std::string error_of(const std::string& json, const Options& o = {}) {
  try {
    read(json, o);
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    return e.what();
  }
  return "(no error)";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("JSONL records are located by line, array records by index") {
  auto recs = split_records("{\"task_id\":\"a\"}\n\n  \r\n{\"task_id\":\"b\"}\r\n", "runs.jsonl");
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].where == "runs.jsonl:1");
  CHECK(recs[1].where == "runs.jsonl:4");
  auto arr = split_records(" [ {\"task_id\":\"a\"}, {\"task_id\":\"b\"} ]", "runs.json");
  REQUIRE(arr.size() == 2);
  CHECK(arr[1].where == "runs.json: record [1]");
  CHECK(split_records(" \n \n", "empty.jsonl").empty());
  try {
    split_records("{\"task_id\":\"a\"}\n{\"task_id\": }\n", "bad.jsonl");
    FAIL("a malformed line must be an error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    CHECK(has(e.what(), "bad.jsonl:2:"));
  }
}

TEST_CASE("BOM, CRLF and no final newline are accepted; invalid UTF-8, NUL and deep nesting are not") {
  auto recs = split_records("\xEF\xBB\xBF{\"task_id\":\"a\"}\r\n{\"task_id\":\"b\"}", "bom.jsonl");
  REQUIRE(recs.size() == 2);
  CHECK(recs[1].where == "bom.jsonl:2");
  CHECK(split_records("\xEF\xBB\xBF[{\"task_id\":\"a\"}]", "bom.json").size() == 1);
  auto rejected = [](const std::string& text, const std::string& where) {
    try {
      split_records(text, "x.jsonl");
    } catch (const Error& e) {
      CHECK(e.code() == Exit::bad_input);
      return has(e.what(), where);
    }
    return false;
  };
  CHECK(rejected("{}\n{\"task_id\":\"\xFF\"}\n", "x.jsonl:2:"));
  CHECK(rejected(std::string("{}\n{\"task_id\":1}\0\n", 18), "x.jsonl:2:"));
  CHECK(rejected("{}\n{}\n" + std::string(100, '[') + std::string(100, ']') + "\n", "x.jsonl:3:"));
}

TEST_CASE("a numeric reward passes at 1 within 1e-6 or at the threshold") {
  CHECK(read(R"({"task_id":"t","reward":1.0})").run.passed);
  CHECK(read(R"({"task_id":"t","reward":0.9999995})").run.passed);      // |0.9999995 − 1| = 5e-7 ≤ 1e-6
  CHECK_FALSE(read(R"({"task_id":"t","reward":0.999998})").run.passed); // 2e-6 > 1e-6
  CHECK_FALSE(read(R"({"task_id":"t","reward":0.8})").run.passed);
  Options o;
  o.pass_threshold = 0.8;
  CHECK(read(R"({"task_id":"t","reward":0.8})", o).run.passed);
  CHECK_FALSE(read(R"({"task_id":"t","reward":0.7})", o).run.passed);
  auto r = read(R"({"task_id":"t","reward":0.7})", o);
  REQUIRE(r.run.checks.size() == 1);
  CHECK(r.run.checks[0].label == "reward");
  CHECK(r.run.checks[0].detail == "0.7 (needed 1 or >= 0.8)");
  CHECK(read(R"({"task_id":"t","passed":true,"reward":0})").run.passed); // passed wins
}

TEST_CASE("bad records name the place, the field and what was expected") {
  CHECK(has(error_of(R"({"run_id":1,"passed":true})"), "log.jsonl:4: field \"task_id\": expected a task id"));
  CHECK(has(error_of(R"({"task_id":"t","passed":"yes"})"),
            "field \"passed\": expected true or false, got a string"));
  CHECK(has(error_of(R"({"task_id":"t"})"), "expected \"passed\" (true or false) or \"reward\""));
  CHECK(has(error_of(R"({"task_id":"t","passed":true,"latency":-1})"),
            "field \"latency\": expected a number >= 0"));
  CHECK(has(error_of(R"({"task_id":"t","passed":true,"token_usage":{"prompt_tokens":1.5}})"),
            "field \"token_usage\": expected a whole number >= 0"));
  CHECK(has(error_of(R"({"task_id":"t","passed":true,"tool_calls":{}})"), "expected an array of tool calls"));
  CHECK(has(error_of(R"([1,2])"), "log.jsonl:4: expected a record (a JSON object), got an array"));
  Options o;
  o.map = parse_map({"passed=result.ok"});
  CHECK(has(error_of(R"({"task_id":"t","result":{"ok":1}})", o),
            "field \"result.ok\": expected true or false"));
}

TEST_CASE("--map reads fields from dotted paths, array indexes included") {
  Options o;
  o.map = parse_map({"task_id=meta.id", "model=agent.config.model", "passed=results.0.ok"});
  auto r = read(R"({"meta":{"id":"x-1"},"agent":{"config":{"model":"m-7"}},"results":[{"ok":true}]})", o);
  CHECK(r.task_id == "x-1");
  CHECK(r.run.passed);
  CHECK(r.run.route.at("model") == "m-7");
  CHECK_THROWS_AS(parse_map({"modle=x"}), Error);
  CHECK_THROWS_AS(parse_map({"model"}), Error);
  CHECK_THROWS_AS(parse_map({"model=a..b"}), Error);
  CHECK_THROWS_AS(parse_map({"model=a", "model=b"}), Error);
}

TEST_CASE("tool calls read from messages equal the same calls given directly") {
  auto direct = read(R"({"task_id":"t","passed":true,"tool_calls":[
      {"name":"get_user","arguments":{"id":1,"b":[2]}}, "finish"]})");
  auto chat = read(R"({"task_id":"t","passed":true,"messages":[
      {"role":"user","content":"hi"},
      {"role":"assistant","content":null,"tool_calls":[
        {"id":"c1","type":"function","function":{"name":"get_user","arguments":"{\"b\": [2], \"id\": 1}"}}]},
      {"role":"tool","tool_call_id":"c1","content":"{}"},
      {"role":"assistant","content":[{"type":"tool_use","id":"u","name":"finish","input":{}}]}]})");
  REQUIRE(direct.run.tool_calls.size() == 2);
  REQUIRE(chat.run.tool_calls.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(direct.run.tool_calls[i].name == chat.run.tool_calls[i].name);
    CHECK(direct.run.tool_calls[i].arguments_sha256 == chat.run.tool_calls[i].arguments_sha256);
  }
  // Canonical arguments: keys sorted, no whitespace.
  CHECK(direct.run.tool_calls[0].arguments_sha256 == sha256_hex("{\"b\":[2],\"id\":1}"));
  CHECK(direct.run.tool_calls[1].arguments_sha256 == sha256_hex("{}"));
}

TEST_CASE("tokens, latency, retries and errors") {
  auto r = read(R"({"task_id":"t","passed":false,"token_usage":{"input_tokens":120,"output_tokens":30},
                    "latency":1.5,"attempts":3})");
  CHECK(r.run.prompt_tokens == 120);
  CHECK(r.run.completion_tokens == 30);
  CHECK(r.run.usage_known);
  CHECK(r.run.latency_ms == doctest::Approx(1500.0)); // 1.5 s
  CHECK(r.retries == 2);                              // 3 attempts = 2 retries
  CHECK(r.run.attempts == 3);
  CHECK(r.run.route.at("retries") == "2");
  CHECK(read(R"({"task_id":"t","passed":true,"token_usage":{"total_tokens":77}})").run.prompt_tokens == 77);
  CHECK_FALSE(read(R"({"task_id":"t","passed":true})").run.usage_known);
  CHECK(read(R"({"task_id":"t","passed":true,"latency_ms":250})").run.latency_ms == doctest::Approx(250.0));

  auto errored = read(R"({"task_id":"t","error_type":"Rate Limit"})");
  CHECK(errored.run.error == "rate_limit");
  CHECK_FALSE(errored.run.passed);
  CHECK(errored.run.checks.empty());
  // Rate-limited, then it succeeded: a retried run, not an errored one.
  auto retried = read(R"({"task_id":"t","error_type":"rate_limit","passed":true})");
  CHECK_FALSE(retried.run.errored());
  CHECK(retried.run.passed);
  CHECK(retried.run.route.at("retries") == "1");
  // An error that no retry clears stays an error whatever the outcome says.
  CHECK(read(R"({"task_id":"t","error_type":"agent","passed":true})").run.error == "agent");
}

TEST_CASE("cost and user_cost: USD the harness recorded, kept apart; absent is n/a; negative is bad input") {
  auto r = read(R"({"task_id":"t","passed":true,"cost":0.0125,"user_cost":0.002})");
  CHECK(gate::results::recorded_cost(r.run).value() == doctest::Approx(0.0125));
  CHECK(gate::results::recorded_user_cost(r.run).value() == doctest::Approx(0.002));
  auto none = read(R"({"task_id":"t","passed":true})");
  CHECK_FALSE(gate::results::recorded_cost(none.run).has_value());
  CHECK_FALSE(gate::results::recorded_user_cost(none.run).has_value());
  CHECK(error_of(R"({"task_id":"t","passed":true,"cost":-1})") ==
        "log.jsonl:4: field \"cost\": expected a number >= 0, got a number");
  CHECK(error_of(R"({"task_id":"t","passed":true,"user_cost":"0.1"})") ==
        "log.jsonl:4: field \"user_cost\": expected a number >= 0, got a string");
}

TEST_CASE("answers: final_state_hash, else a hash of final_state, else of answer") {
  CHECK(read(R"({"task_id":"t","passed":true,"final_state_hash":"abc"})").run.answer_sha256 == "abc");
  CHECK(read(R"({"task_id":"t","passed":true,"final_state":{"b":1,"a":2}})").run.answer_sha256 ==
        sha256_hex("{\"a\":2,\"b\":1}"));
  auto a = read(R"({"task_id":"t","passed":true,"answer":"Paris"})");
  CHECK(a.run.answer == "Paris");
  CHECK(a.run.answer_sha256 == sha256_hex("Paris"));
}

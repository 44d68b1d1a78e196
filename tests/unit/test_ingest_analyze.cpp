// Grouping ingested records into tasks, routes and the whole analyze pipeline.
#include <doctest.h>

#include <gate/ingest/ingest.hpp>
#include <gate/ingest/route.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

using namespace gate;
using namespace gate::ingest;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<Record> records(const std::string& jsonl, const Options& o = {}) {
  std::vector<Record> out;
  for (const auto& l : split_records(jsonl, "log.jsonl"))
    out.push_back(read_record(l, o));
  return out;
}

report::Report run_analyze(const std::string& jsonl) {
  Analysis a;
  a.suite = {"external", "unversioned", ""};
  return analyze({{"log.jsonl", jsonl}}, a);
}

} // namespace

TEST_CASE("looks_like_secret: key prefixes and long mixed tokens, not chosen names") {
  CHECK(looks_like_secret("sk-proj-abcdefghijklmnop"));
  CHECK(looks_like_secret("sk-ant-api03-xyzxyzxyzxyz"));
  CHECK(looks_like_secret("AIzaSyA1234567890abcdef"));
  CHECK(looks_like_secret("key-3f9a8b7c6d5e4f3a2b1c0d9e")); // a run of 24 letters and digits
  CHECK_FALSE(looks_like_secret("team-eval"));
  CHECK_FALSE(looks_like_secret("prod-team-key-2024-primary"));
  CHECK_FALSE(looks_like_secret("sk-"));                        // a prefix alone is a placeholder
  CHECK_FALSE(looks_like_secret("abcdefghijklmnopqrstuvwxyz")); // letters only: a word, not a token
}

TEST_CASE("a route keeps host:port and path; user info, query and key-like parts never") {
  RouteFields f;
  f.base_url =
      "https://user:sk-live-0123456789abcdef@gw.example.com/v1/key0123456789abcdef0123/openai?api_key=s3cr3t";
  f.key_alias = "sk-proj-abcdefghijklmnop0123";
  f.model = "gpt-x";
  f.temperature = "0.2";
  auto r = route_of_record(f);
  CHECK(r.at("base_url_host") == "gw.example.com:443");
  CHECK(r.at("base_url_path") == "/v1/[REDACTED]/openai");
  CHECK(r.at("key_alias") == "[REDACTED]");
  CHECK(r.at("model") == "gpt-x");
  CHECK(r.at("temperature") == "0.2");
  CHECK(r.at("retries") == "0");
  CHECK(r.count("seed") == 0); // absent stays absent
  for (const auto& [k, v] : r) {
    CHECK_FALSE(has(v, "s3cr3t"));
    CHECK_FALSE(has(v, "sk-"));
  }
  RouteFields plain;
  plain.base_url = "http://127.0.0.1:8080/";
  auto p = route_of_record(plain);
  CHECK(p.at("base_url_host") == "127.0.0.1:8080");
  CHECK(p.at("base_url_path") == "");
  plain.base_url = "http://localhost/v1/";
  CHECK(route_of_record(plain).at("base_url_host") == "localhost:80");
  CHECK(route_of_record(plain).at("base_url_path") == "/v1");
}

TEST_CASE("runs order by numeric run_id; records without one keep their order, last") {
  auto tasks = group_records(records(R"({"task_id":"b","run_id":10,"passed":true}
{"task_id":"a","run_id":"2","passed":false}
{"task_id":"b","run_id":2,"passed":false}
{"task_id":"b","passed":true,"latency_ms":7}
{"task_id":"a","run_id":"1","passed":true}
)"));
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[0].id == "a");
  CHECK(tasks[0].runs[0].passed);
  CHECK_FALSE(tasks[0].runs[1].passed);
  REQUIRE(tasks[1].runs.size() == 3);
  CHECK_FALSE(tasks[1].runs[0].passed); // run_id 2 before 10, numerically
  CHECK(tasks[1].runs[1].passed);
  CHECK(tasks[1].runs[2].latency_ms == doctest::Approx(7.0));
  for (int i = 0; i < 3; ++i)
    CHECK(tasks[1].runs[static_cast<std::size_t>(i)].index == i);
}

TEST_CASE("an errored record followed by one of the same run is one retried run") {
  auto tasks = group_records(records(
      R"({"task_id":"t","run_id":0,"error_type":"rate_limit","token_usage":{"prompt_tokens":100,"completion_tokens":0},"latency":0.5}
{"task_id":"t","run_id":0,"error_type":"timeout","token_usage":{"prompt_tokens":100,"completion_tokens":0},"latency":1}
{"task_id":"t","run_id":0,"passed":true,"token_usage":{"prompt_tokens":100,"completion_tokens":40},"latency":2}
)"));
  REQUIRE(tasks.size() == 1);
  REQUIRE(tasks[0].runs.size() == 1);
  const auto& run = tasks[0].runs[0];
  CHECK(run.passed);
  CHECK_FALSE(run.errored());
  CHECK(run.prompt_tokens == 300);                  // 100 + 100 + 100: the whole chain
  CHECK(run.completion_tokens == 40);               // 0 + 0 + 40
  CHECK(run.latency_ms == doctest::Approx(3500.0)); // 0.5 + 1 + 2 s
  CHECK(run.attempts == 3);
  CHECK(run.route.at("retries") == "2");

  try {
    group_records(records("{\"task_id\":\"t\",\"run_id\":0,\"passed\":true}\n{\"task_id\":\"t\",\"run_id\":0,"
                          "\"passed\":false}\n"));
    FAIL("a second record of a run that did not error must be an error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    CHECK(has(e.what(), "log.jsonl:2: run_id \"0\" of task \"t\""));
    CHECK(has(e.what(), "(log.jsonl:1)"));
  }
}

TEST_CASE("a retried run cost what every attempt cost; one attempt without a cost makes it n/a") {
  auto tasks = group_records(records(
      R"({"task_id":"t","run_id":0,"error_type":"timeout","cost":0.25,"user_cost":0.5}
{"task_id":"t","run_id":0,"passed":true,"cost":0.5,"user_cost":0.25}
{"task_id":"t","run_id":1,"error_type":"timeout"}
{"task_id":"t","run_id":1,"passed":true,"cost":0.5}
)"));
  REQUIRE(tasks.at(0).runs.size() == 2);
  CHECK(gate::results::recorded_cost(tasks[0].runs[0]).value() == doctest::Approx(0.75));
  CHECK(gate::results::recorded_user_cost(tasks[0].runs[0]).value() == doctest::Approx(0.75));
  CHECK_FALSE(gate::results::recorded_cost(tasks[0].runs[1]).has_value());
  CHECK_FALSE(gate::results::recorded_user_cost(tasks[0].runs[1]).has_value());
}

TEST_CASE("analyze: polluted tasks and their differing fields") {
  auto r = run_analyze(
      R"({"task_id":"same","run_id":0,"passed":true,"model":"m","base_url":"https://a.example/v1","key_alias":"k"}
{"task_id":"same","run_id":1,"passed":false,"model":"m","base_url":"https://a.example:443/v1/","key_alias":"k"}
{"task_id":"url","run_id":0,"passed":true,"model":"m","base_url":"https://a.example/v1","key_alias":"k"}
{"task_id":"url","run_id":1,"passed":true,"model":"m","base_url":"https://b.example/v1","key_alias":"k"}
{"task_id":"alias","run_id":0,"passed":true,"model":"m","base_url":"https://a.example/v1","key_alias":"k"}
{"task_id":"alias","run_id":1,"passed":true,"model":"m","base_url":"https://a.example/v1","key_alias":"k2"}
{"task_id":"retry","run_id":0,"passed":true,"model":"m","base_url":"https://a.example/v1","key_alias":"k"}
{"task_id":"retry","run_id":1,"passed":true,"model":"m","base_url":"https://a.example/v1","key_alias":"k","retries":1}
)");
  REQUIRE(r.tasks.size() == 4);
  std::map<std::string, std::vector<std::string>> polluted;
  for (std::size_t i = 0; i < r.tasks.size(); ++i)
    if (r.task_stats[i].route_polluted) polluted[r.tasks[i].id] = r.task_stats[i].route_diff;
  CHECK(polluted.size() == 3);
  CHECK(polluted["url"] == std::vector<std::string>{"base_url_host"});
  CHECK(polluted["alias"] == std::vector<std::string>{"key_alias"});
  CHECK(polluted["retry"] == std::vector<std::string>{"retries"});
  CHECK(r.stats.polluted_tasks == 3);
  // Only "same" is in the gap, and it is mixed: 1 of 1 task = 100 pp.
  CHECK(r.stats.consistency_gap_pp == doctest::Approx(100.0));
  CHECK(r.route.at("base_url_host") == "a.example:443"); // the route most runs used
  CHECK(r.suite.name == "external");
  CHECK(r.config.as_object().at("source").as_string() == "gate analyze");
}

TEST_CASE("analyze: no inputs, or a file without records, is bad input") {
  Analysis a;
  CHECK_THROWS_AS(analyze({}, a), Error);
  try {
    analyze({{"empty.jsonl", "\n\n"}}, a);
    FAIL("an empty log must be an error");
  } catch (const Error& e) {
    CHECK(has(e.what(), "empty.jsonl: no records"));
  }
}

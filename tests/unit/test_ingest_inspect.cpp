// Reading Inspect AI JSON eval logs (gate/ingest/inspect.cpp): a sample id
// is a task and its epochs the runs; scores become pass/fail by Inspect's
// own value_to_float; tokens and cost from the sample's model_usage; an
// error, a limit hit and bad input.
#include <doctest.h>

#include <gate/ingest/ingest.hpp>
#include <gate/util/error.hpp>

using namespace gate;
using namespace gate::ingest;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<Record> read_all(const FileRecords& f, const Options& o = {}) {
  std::vector<Record> out;
  for (const auto& l : f.records)
    out.push_back(read_record(l, o));
  return out;
}

std::string error_of(const std::string& text, const Options& o = {}) {
  try {
    records_of({"log.json", text}, o);
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    return e.what();
  }
  return "";
}

// `samples` is spliced into a log with the EvalLog header Inspect writes.
std::string log_with(const std::string& samples) {
  return R"({
  "version": 2,
  "status": "success",
  "eval": {"task": "capitals", "model": "anthropic/claude-3-5-haiku-latest",
           "model_generate_config": {"temperature": 0.5, "seed": 7},
           "config": {"epochs": 2}, "dataset": {"samples": 1}},
  "plan": {"name": "plan", "steps": []},
  "results": {"total_samples": 2, "completed_samples": 2, "scores": []},
  "stats": {"model_usage": {}},
  "samples": [)" +
         samples + "]\n}\n";
}

// Sample 1, epoch 2: two scorers, a tool call in Inspect's form (the
// function's name as a string), two models' usage and their costs.
const std::string k_sample = R"({
  "id": "q1", "epoch": 2, "input": "?", "target": "Paris",
  "messages": [
    {"role": "user", "content": "?"},
    {"role": "assistant", "content": "", "tool_calls": [
      {"id": "c1", "function": "search", "arguments": {"q": "France"}, "type": "function"}]},
    {"role": "tool", "content": "Paris", "tool_call_id": "c1", "function": "search"},
    {"role": "assistant", "content": "Paris"}],
  "output": {"model": "claude-3-5-haiku", "choices": [], "completion": "Paris"},
  "scores": {"match": {"value": "C", "answer": "Paris"},
             "judge": {"value": "P", "explanation": "partly"}},
  "model_usage": {
    "anthropic/claude-3-5-haiku-latest": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 140,
                                          "input_tokens_cache_read": 25, "input_tokens_cache_write": 5,
                                          "total_cost": 0.002},
    "openai/gpt-4o": {"input_tokens": 50, "output_tokens": 5, "total_tokens": 55, "total_cost": 0.0005}},
  "total_time": 3.5, "working_time": 3.0,
  "error_retries": [{"message": "rate limited", "traceback": "", "traceback_ansi": ""}]
})";

} // namespace

TEST_CASE("parse_format: inspect and promptfoo are names too") {
  CHECK(parse_format("inspect") == Format::inspect);
  CHECK(parse_format("promptfoo") == Format::promptfoo);
  CHECK(std::string(format_name(Format::inspect)) == "inspect");
  CHECK_THROWS_WITH_AS(parse_format("inspect-ai"),
                       "--format \"inspect-ai\": expected auto, jsonl, tau-bench, tau2, inspect or promptfoo",
                       Error);
}

TEST_CASE("an Inspect sample: the id is the task, the epoch the run; tokens and cost over every model") {
  auto f = records_of({"log.json", log_with(k_sample)}, {});
  CHECK(f.format == Format::inspect);
  auto recs = read_all(f);
  REQUIRE(recs.size() == 1);
  const auto& run = recs[0].run;
  CHECK(recs[0].task_id == "q1");
  CHECK(recs[0].run_id == "2");
  CHECK(recs[0].where == "log.json: samples[0]");
  // Every scorer must pass; "P" is 0.5 (value_to_float), not a pass.
  CHECK_FALSE(run.passed);
  CHECK(run.checks.at(0).label == "passed");
  CHECK(f.records[0].note == "match C; judge P");
  // input 100 + cache read 25 + cache write 5 + the grader's 50.
  CHECK(run.usage_known);
  CHECK(run.prompt_tokens == 180);
  CHECK(run.completion_tokens == 15);
  REQUIRE(gate::results::recorded_cost(run).has_value());
  CHECK(*gate::results::recorded_cost(run) == doctest::Approx(0.0025));
  CHECK_FALSE(gate::results::recorded_user_cost(run).has_value());
  REQUIRE(run.tool_calls.size() == 1);
  CHECK(run.tool_calls[0].name == "search");
  CHECK(run.answer == "Paris");
  CHECK(run.latency_ms == doctest::Approx(3500));
  CHECK(run.route.at("model") == "anthropic/claude-3-5-haiku-latest");
  CHECK(run.route.at("temperature") == "0.5");
  CHECK(run.route.at("seed") == "7");
  // One retried error before the sample ran through.
  CHECK(run.route.at("retries") == "1");
  CHECK(run.attempts == 2);
}

TEST_CASE("Inspect scores: --scorer picks one, whose value is the reward; --pass-threshold applies") {
  Options o;
  o.scorer = "judge";
  auto recs = read_all(records_of({"log.json", log_with(k_sample)}, o), o);
  CHECK_FALSE(recs[0].run.passed); // P = 0.5
  CHECK(recs[0].run.checks.at(0).label == "reward");
  CHECK(recs[0].run.checks.at(0).detail == "0.5 (needed 1)");
  o.pass_threshold = 0.5;
  recs = read_all(records_of({"log.json", log_with(k_sample)}, o), o);
  CHECK(recs[0].run.passed);
  o.scorer = "match";
  o.pass_threshold.reset();
  recs = read_all(records_of({"log.json", log_with(k_sample)}, o), o);
  CHECK(recs[0].run.passed);
  o.scorer = "f1";
  CHECK(error_of(log_with(k_sample), o) ==
        "log.json: samples[0]: no score of scorer \"f1\" (--scorer); the sample has match, judge");
}

TEST_CASE("Inspect values as value_to_float reads them: booleans, numbers, yes/no, numeric text") {
  auto passed = [](const std::string& value) {
    std::string s = k_sample;
    s.replace(s.find(R"("value": "P")"), 12, "\"value\": " + value);
    Options o;
    o.scorer = "judge";
    return read_all(records_of({"log.json", log_with(s)}, o), o)[0].run.passed;
  };
  CHECK(passed("true"));
  CHECK_FALSE(passed("false"));
  CHECK(passed("1"));
  CHECK(passed("0.9999999"));
  CHECK_FALSE(passed("0.99"));
  CHECK(passed(R"("Yes")"));
  CHECK_FALSE(passed(R"("no")"));
  CHECK(passed(R"("1.0")"));
  CHECK_FALSE(passed(R"("I")"));
  CHECK_FALSE(passed(R"("N")"));
  CHECK_FALSE(passed(R"("maybe")"));          // Inspect counts what it cannot read as 0
  CHECK_FALSE(passed(R"({"a": 1, "b": 1})")); // an object too
}

TEST_CASE("an Inspect sample that raised is an errored run; a limit hit is why a failing run ended") {
  std::string errored = R"({"id": 3, "epoch": 1, "input": "?", "target": "x", "messages": [],
    "output": {"choices": []}, "model_usage": {},
    "error": {"message": "RuntimeError: boom", "traceback": "...", "traceback_ansi": "..."}})";
  std::string limited = R"({"id": 3, "epoch": 2, "input": "?", "target": "x", "messages": [],
    "output": {"choices": [], "completion": ""}, "scores": {"match": {"value": "I"}},
    "model_usage": {"m": {"input_tokens": 9, "output_tokens": 1, "total_tokens": 10}},
    "limit": {"type": "token", "limit": 1000}})";
  auto f = records_of({"log.json", log_with(errored + "," + limited)}, {});
  auto recs = read_all(f);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].run.errored());
  CHECK(recs[0].run.error == "exception");
  CHECK_FALSE(recs[0].run.usage_known); // no usage recorded: n/a, not 0
  CHECK_FALSE(recs[1].run.passed);
  CHECK(f.records[1].note == "match I; ended: token limit 1000");
  CHECK(recs[1].run.usage_known);
  CHECK_FALSE(gate::results::recorded_cost(recs[1].run).has_value()); // no total_cost: n/a
  CHECK(recs[1].run.answer.empty());
}

TEST_CASE("Inspect bad input: the sample, the field and what was expected; a .eval zip; no samples") {
  CHECK(error_of(log_with(R"({"id": 1, "epoch": 1, "messages": []})")) ==
        "log.json: samples[0]: field \"scores\": expected the sample's scores (an object of scorer name to "
        "score), none found");
  CHECK(error_of(log_with(R"({"id": 1, "epoch": 1, "scores": {"m": {"value": "C"}},
                             "model_usage": {"m": {"input_tokens": -1, "output_tokens": 0}}})")) ==
        "log.json: samples[0]: field \"model_usage.m.input_tokens\": expected a whole number >= 0, got a "
        "number");
  CHECK(error_of(log_with("3")) ==
        "log.json: samples[0]: expected an Inspect sample (a JSON object), got a number");
  std::string no_samples = log_with("");
  no_samples.replace(no_samples.find("\"samples\": []"), 13, "\"reductions\": []");
  CHECK(has(error_of(no_samples), "log.json: the Inspect log (status \"success\") has no \"samples\" list"));
  CHECK(has(error_of(std::string("PK\x03\x04\x14\x00", 6) + "header.json"),
            "log.json: a zip archive (an Inspect AI .eval log?); expected JSON: run inspect eval with "
            "--log-format json, or convert the log with `inspect log convert --to json`"));
  // A log cut short (a run killed while writing): the place in the file.
  const std::string log = log_with(k_sample);
  CHECK(has(error_of(log.substr(0, log.find("\"model_usage\": {\n"))),
            "log.json:21:3: incomplete JSON (truncated?)"));
  Options inspect;
  inspect.format = Format::inspect;
  CHECK(has(error_of("[]", inspect), "log.json: expected an Inspect AI JSON eval log"));
}

TEST_CASE("Inspect's NaN: an unscored sample is an errored run, a NaN metric is read; text is untouched") {
  // Inspect's log models write non-finite floats as Python's bare constants
  // (ser_json_inf_nan="constants"): a one-epoch stderr and an unscored
  // sample carry NaN. Before, such a log was bad input at the NaN.
  std::string unscored = R"({"id": "q2", "epoch": 1, "input": "NaN?", "target": "Infinity",
    "messages": [], "output": {"choices": [], "completion": "NaN and -Infinity, as text"},
    "scores": {"match": {"value": NaN, "answer": "NaN"}}, "model_usage": {}})";
  std::string scored = R"({"id": "q2", "epoch": 2, "input": "?", "target": "x", "messages": [],
    "output": {"choices": [], "completion": "x"}, "scores": {"match": {"value": "C"}},
    "model_usage": {}, "total_time": Infinity})";
  std::string log = log_with(unscored + "," + scored);
  const std::string results = "\"results\": {\"total_samples\": 2, \"completed_samples\": 2, \"scores\": []}";
  REQUIRE(log.find(results) != std::string::npos);
  log.replace(
      log.find(results), results.size(),
      "\"results\": {\"scores\": [{\"name\": \"match\", \"metrics\": {\"stderr\": {\"name\": \"stderr\", "
      "\"value\": NaN}, \"low\": {\"name\": \"low\", \"value\": -Infinity}}}]}");
  for (Format f : {Format::automatic, Format::inspect}) {
    Options o;
    o.format = f;
    const FileRecords file = records_of({"log.json", log}, o);
    CHECK(file.format == Format::inspect);
    auto recs = read_all(file);
    REQUIRE(recs.size() == 2);
    CHECK(recs[0].run.errored());
    CHECK(recs[0].run.error == "unscored");
    CHECK(recs[0].run.answer == "NaN and -Infinity, as text");
    CHECK(recs[1].run.passed);
    CHECK(recs[1].run.latency_ms == 0); // an infinite time is no latency: n/a
  }
  // A constant inside a word is no constant: still bad input, at its place.
  CHECK(has(error_of(log_with(R"({"id": 1, "epoch": 1, "scores": {"m": {"value": NaNa}}})")), "log.json:"));
}

#include <doctest.h>

#include <string>
#include <vector>

#include <gate/model/api.hpp>
#include <gate/model/stream.hpp>

#include "test_model_support.hpp"

using gate::model::ApiResponse;
using gate::model::Bucket;
using gate::model::parse_response;
using gate::model::Reply;
using gate::model::StreamAssembler;
using gate::model::StreamState;

using gate::model::test::response;

namespace {

gate::config::ModelConfig responses_model() {
  gate::config::ModelConfig m;
  m.name = "gpt-x";
  m.api = "responses";
  m.seed = 7;
  return m;
}

struct Ev {
  std::string event, data;
};

// Events 10 ms apart from t = 10.
StreamAssembler run(const std::vector<Ev>& events) {
  StreamAssembler a("responses", 0);
  double now = 0;
  for (const auto& e : events)
    a.on_event(e.event, e.data, now += 10);
  a.finish(false);
  return a;
}

} // namespace

TEST_CASE("responses: the dialect, the path and the body") {
  auto m = responses_model();
  CHECK(gate::model::dialect(m) == "responses");
  CHECK(gate::model::endpoint_path(m) == "/responses");
  m.api = "chat";
  CHECK(gate::model::dialect(m) == "openai");
  m.provider = "anthropic";
  m.api = "responses"; // the loader refuses this; the dialect stays anthropic's
  CHECK(gate::model::dialect(m) == "anthropic");

  // System prompt as instructions, max_tokens as max_output_tokens, no seed
  // (the API has none), store false; canonical key order.
  std::string body = gate::model::build_request(responses_model(), "Be brief.", {{"user", "Hi"}});
  CHECK(body == R"({"input":[{"content":"Hi","role":"user"}],"instructions":"Be brief.",)"
                R"("max_output_tokens":512,"model":"gpt-x","store":false,"temperature":0})");
  CHECK(gate::model::with_streaming("responses", body).find("stream_options") == std::string::npos);
  CHECK(gate::model::with_streaming("responses", body).find(R"("stream":true)") != std::string::npos);
}

TEST_CASE("responses: text, function calls, usage and finish reason") {
  const std::string body =
      R"({"id":"resp_1","status":"completed","output":[{"type":"reasoning","summary":[]},)"
      R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Paris, "},)"
      R"({"type":"output_text","text":"France"}]},)"
      R"({"type":"function_call","call_id":"c1","name":"weather","arguments":"{\"city\": \"Paris\"}"}],)"
      R"("usage":{"input_tokens":11,"output_tokens":4,"total_tokens":15}})";
  Reply r = parse_response("responses", response(200, body));
  CHECK(r.bucket == Bucket::none);
  CHECK(r.text == "Paris, France");
  CHECK(r.finish_reason == "tool_calls");
  REQUIRE(r.tool_calls.size() == 1);
  CHECK(r.tool_calls[0].name == "weather");
  CHECK(r.tool_calls[0].arguments == R"({"city":"Paris"})");
  // sha256 of {"city":"Paris"} (sha256sum), as test_model_api.cpp has it.
  CHECK(r.tool_calls[0].arguments_sha256 ==
        "6e1e312d537bc71b5410b0599f5a508142149e13174c6ee0d1671658845bc67d");
  REQUIRE(r.usage.has_value());
  CHECK(r.usage->prompt_tokens == 11);
  CHECK(r.usage->completion_tokens == 4);
}

TEST_CASE("responses: incomplete is length, absent usage stays absent, failures are bucketed") {
  Reply cut = parse_response(
      "responses",
      response(200, R"({"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},)"
                    R"("output":[]})"));
  CHECK(cut.bucket == Bucket::none);
  CHECK(cut.finish_reason == "length");
  CHECK_FALSE(cut.usage.has_value());

  Reply plain = parse_response(
      "responses", response(200, R"({"status":"completed","output":[{"type":"message","content":[)"
                                 R"({"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":3}})"));
  CHECK(plain.finish_reason == "stop");
  CHECK_FALSE(plain.usage.has_value()); // half a usage is not a count

  Reply failed = parse_response(
      "responses",
      response(
          200,
          R"({"status":"failed","error":{"code":"rate_limit_exceeded","message":"slow down"},"output":[]})"));
  CHECK(failed.bucket == Bucket::rate_limit);
  CHECK(failed.error == "response failed: rate_limit_exceeded: slow down");

  CHECK(parse_response("responses", response(200, R"({"status":"completed","output":[]})")).bucket ==
        Bucket::bad_response);
  CHECK(parse_response("responses", response(200, R"({"status":"completed"})")).bucket ==
        Bucket::bad_response);
  Reply bad_args = parse_response(
      "responses", response(200, R"({"status":"completed","output":[{"type":"function_call","name":"f",)"
                                 R"("arguments":"{not json"}]})"));
  CHECK(bad_args.bucket == Bucket::none); // the model's answer, kept as written
  REQUIRE(bad_args.tool_calls.size() == 1);
  CHECK(bad_args.tool_calls[0].arguments == "{not json");
  // HTTP errors go through the shared OpenAI error reading.
  CHECK(parse_response("responses", response(429, R"({"error":{"message":"x","code":"insufficient_quota"}})"))
            .bucket == Bucket::quota);
}

TEST_CASE("responses stream: deltas, a function call and the final response") {
  const std::string final_response =
      R"({"id":"resp_1","model":"gpt-x","status":"completed","output":[{"type":"message","content":[)"
      R"({"type":"output_text","text":"Hi there"}]},{"type":"function_call","call_id":"c1","name":"f",)"
      R"("arguments":"{\"a\":1}"}],"usage":{"input_tokens":5,"output_tokens":3}})";
  auto a = run({
      {"response.created", R"({"type":"response.created","response":{"id":"resp_1","model":"gpt-x"}})"},
      {"response.output_text.delta", R"({"type":"response.output_text.delta","output_index":0,"delta":""})"},
      {"response.output_text.delta",
       R"({"type":"response.output_text.delta","output_index":0,"delta":"Hi "})"},
      {"response.output_text.delta",
       R"({"type":"response.output_text.delta","output_index":0,"delta":"there"})"},
      {"response.output_item.added",
       R"({"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"c1","name":"f"}})"},
      {"response.function_call_arguments.delta",
       R"({"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"a\":"})"},
      {"response.function_call_arguments.delta",
       R"({"type":"response.function_call_arguments.delta","output_index":1,"delta":"1}"})"},
      {"response.completed", R"({"type":"response.completed","response":)" + final_response + "}"},
  });
  const auto& r = a.result();
  CHECK(r.state == StreamState::complete);
  CHECK(a.cacheable());
  CHECK(r.id == "resp_1");
  CHECK(r.text == "Hi there");
  REQUIRE(r.ttft_ms.has_value());
  CHECK(*r.ttft_ms == doctest::Approx(30)); // the third event, the first non-empty delta
  REQUIRE(r.tool_calls.size() == 1);
  CHECK(r.tool_calls[0].arguments == R"({"a":1})");
  CHECK(r.finish_reason == "tool_calls");
  REQUIRE(r.usage.has_value());
  CHECK(r.usage->completion_tokens == 3);

  // Assembled, it is the plain response: the same reply as a non-streamed call.
  ApiResponse head;
  head.status = 200;
  ApiResponse plain = gate::model::to_non_streaming("responses", r, head);
  Reply streamed = parse_response("responses", plain);
  Reply direct = parse_response("responses", response(200, final_response));
  CHECK(streamed.text == direct.text);
  CHECK(streamed.text == "Hi there");
  REQUIRE(streamed.tool_calls.size() == 1);
  CHECK(streamed.tool_calls[0].arguments_sha256 == direct.tool_calls[0].arguments_sha256);
  CHECK(streamed.usage->prompt_tokens == 5);
}

TEST_CASE("responses stream: error events, failed responses and cuts") {
  auto err = run({{"response.created", R"({"type":"response.created","response":{"id":"r"}})"},
                  {"error", R"({"type":"error","code":"rate_limit_exceeded","message":"busy"})"}});
  CHECK(err.result().state == StreamState::failed);
  CHECK(err.result().bucket == Bucket::rate_limit);
  CHECK(err.result().error == "stream error: rate_limit_exceeded: busy");

  auto failed = run({{"response.failed", R"({"type":"response.failed","response":{"status":"failed",)"
                                         R"("error":{"code":"server_error","message":"oops"}}})"}});
  CHECK(failed.result().state == StreamState::failed);
  CHECK(failed.result().bucket == Bucket::server);

  auto cut = run({{"response.output_text.delta", R"({"type":"response.output_text.delta","delta":"Hi"})"}});
  CHECK(cut.result().state == StreamState::incomplete);
  CHECK_FALSE(cut.cacheable());
  CHECK(cut.result().error == "stream ended without response.completed");

  auto orphan = run({{"response.function_call_arguments.delta",
                      R"({"type":"response.function_call_arguments.delta","output_index":3,"delta":"{}"})"}});
  CHECK(orphan.result().bucket == Bucket::bad_response);
}

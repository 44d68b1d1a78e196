// Whatever the model produced is an answer (docs/metrics.md "Measured
// runs"): a refusal, a length cut-off, a content-filter finish and a tool
// call whose arguments are not JSON parse into a Reply without an error
// bucket, in each dialect, and a streamed answer assembles into the Reply
// its plain form gives. Only a response with no answer in it is an error.
#include <doctest.h>

#include <string>
#include <vector>

#include <gate/model/api.hpp>
#include <gate/model/stream.hpp>
#include <gate/util/sha256.hpp>

#include "test_model_support.hpp"

using gate::model::Bucket;
using gate::model::parse_response;
using gate::model::Reply;
using gate::model::StreamAssembler;
using gate::model::test::response;

namespace {

struct Ev {
  std::string event;
  std::string data;
};

// The events as one streamed response, assembled and parsed as the client
// and the cache see it.
Reply streamed(const std::string& provider, const std::vector<Ev>& events) {
  StreamAssembler a(provider, 0);
  double now = 0;
  for (const auto& e : events)
    a.on_event(e.event, e.data, now += 10);
  a.finish(false);
  REQUIRE(a.cacheable());
  gate::model::ApiResponse head;
  head.status = 200;
  return parse_response(provider, gate::model::to_non_streaming(provider, a.result(), head));
}

Reply plain(const std::string& provider, const std::string& body) {
  return parse_response(provider, response(200, body));
}

void same_answer(const Reply& s, const Reply& p) {
  CHECK(s.bucket == Bucket::none);
  CHECK(p.bucket == Bucket::none);
  CHECK(s.text == p.text);
  CHECK(s.refused == p.refused);
  CHECK(s.finish_reason == p.finish_reason);
  REQUIRE(s.tool_calls.size() == p.tool_calls.size());
  for (std::size_t i = 0; i < s.tool_calls.size(); ++i) {
    CHECK(s.tool_calls[i].name == p.tool_calls[i].name);
    CHECK(s.tool_calls[i].arguments == p.tool_calls[i].arguments);
    CHECK(s.tool_calls[i].arguments_sha256 == p.tool_calls[i].arguments_sha256);
  }
}

std::string chat_chunk(const std::string& delta, const std::string& finish = "null") {
  return R"({"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":)" + delta +
         R"(,"finish_reason":)" + finish + "}]}";
}

const std::string k_words = "I'm sorry, I cannot assist with that request.";

} // namespace

TEST_CASE("openai chat refusal: message.refusal is the answer, refused, plain and streamed alike") {
  const Reply p = plain("openai", R"({"choices":[{"index":0,"message":{"role":"assistant","content":null,)"
                                  R"("refusal":"I'm sorry, I cannot assist with that request."},)"
                                  R"("finish_reason":"stop"}]})");
  CHECK(p.bucket == Bucket::none);
  CHECK(p.text == k_words);
  CHECK(p.refused);
  CHECK(p.finish_reason == "stop");
  // choices[0].delta.refusal, content null from the first chunk on.
  const Reply s =
      streamed("openai", {{"message", chat_chunk(R"({"role":"assistant","content":null,"refusal":""})")},
                          {"message", chat_chunk(R"({"refusal":"I'm sorry, I cannot "})")},
                          {"message", chat_chunk(R"({"refusal":"assist with that request."})")},
                          {"message", chat_chunk("{}", R"("stop")")},
                          {"message", "[DONE]"}});
  same_answer(s, p);
  // A plain answer says it did not refuse.
  CHECK_FALSE(plain("openai",
                    R"({"choices":[{"message":{"content":"Paris","refusal":null},"finish_reason":"stop"}]})")
                  .refused);
}

TEST_CASE("responses refusal: the refusal content part, plain and streamed (response.refusal.delta)") {
  const std::string final_response =
      R"({"id":"resp_1","status":"completed","output":[{"type":"message","id":"msg_1","role":"assistant",)"
      R"("content":[{"type":"refusal","refusal":"I'm sorry, I cannot assist with that request."}]}]})";
  const Reply p = plain("responses", final_response);
  CHECK(p.bucket == Bucket::none);
  CHECK(p.text == k_words);
  CHECK(p.refused);
  const Reply s = streamed(
      "responses",
      {{"response.created",
        R"({"type":"response.created","response":{"id":"resp_1","status":"in_progress"}})"},
       {"response.output_item.added",
        R"({"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1"}})"},
       {"response.content_part.added",
        R"({"type":"response.content_part.added","item_id":"msg_1",)"
        R"("output_index":0,"content_index":0,"part":{"type":"refusal","refusal":""}})"},
       {"response.refusal.delta", R"({"type":"response.refusal.delta","item_id":"msg_1","output_index":0,)"
                                  R"("content_index":0,"delta":"I'm sorry, I cannot "})"},
       {"response.refusal.delta", R"({"type":"response.refusal.delta","item_id":"msg_1","output_index":0,)"
                                  R"("content_index":0,"delta":"assist with that request."})"},
       {"response.refusal.done",
        R"({"type":"response.refusal.done","item_id":"msg_1","output_index":0,)"
        R"("content_index":0,"refusal":"I'm sorry, I cannot assist with that request."})"},
       {"response.completed", R"({"type":"response.completed","response":)" + final_response + "}"}});
  same_answer(s, p);
}

TEST_CASE("anthropic refusal: stop_reason refusal after some text or none, plain and streamed") {
  for (const std::string text : {"", "Hello.."}) {
    CAPTURE(text);
    const std::string content = text.empty() ? "[]" : R"([{"type":"text","text":")" + text + R"("}])";
    const Reply p = plain("anthropic", R"({"id":"msg_1","type":"message","role":"assistant","content":)" +
                                           content + R"(,"stop_reason":"refusal","stop_sequence":null})");
    CHECK(p.bucket == Bucket::none);
    CHECK(p.text == text);
    CHECK(p.refused);
    CHECK(p.finish_reason == "refusal");
    std::vector<Ev> events = {
        {"message_start",
         R"({"type":"message_start","message":{"id":"msg_1","content":[],"stop_reason":null}})"}};
    if (!text.empty()) {
      events.push_back({"content_block_start", R"({"type":"content_block_start","index":0,)"
                                               R"("content_block":{"type":"text","text":""}})"});
      events.push_back({"content_block_delta", R"({"type":"content_block_delta","index":0,)"
                                               R"("delta":{"type":"text_delta","text":")" +
                                                   text + R"("}})"});
      events.push_back({"content_block_stop", R"({"type":"content_block_stop","index":0})"});
    }
    // The classifier's stop comes on message_delta (with stop_details, here
    // as the API documents it).
    events.push_back({"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"refusal",)"
                                       R"("stop_sequence":null,"stop_details":{"type":"refusal"}}})"});
    events.push_back({"message_stop", R"({"type":"message_stop"})"});
    same_answer(streamed("anthropic", events), p);
  }
}

TEST_CASE("a length cut-off is an answer, even with no text before it, in every dialect") {
  // OpenAI chat: content null (all of it reasoning), finish_reason length.
  Reply p = plain(
      "openai", R"({"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"length"}]})");
  CHECK(p.bucket == Bucket::none);
  CHECK(p.text.empty());
  CHECK(p.finish_reason == "length");
  CHECK_FALSE(p.refused);
  Reply s = streamed("openai", {{"message", chat_chunk(R"({"role":"assistant","content":""})")},
                                {"message", chat_chunk("{}", R"("length")")},
                                {"message", "[DONE]"}});
  same_answer(s, p);

  // Responses: incomplete at max_output_tokens with only a reasoning item.
  const std::string final_response =
      R"({"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},)"
      R"("output":[{"type":"reasoning","id":"rs_1","summary":[]}]})";
  p = plain("responses", final_response);
  CHECK(p.bucket == Bucket::none);
  CHECK(p.finish_reason == "length");
  s = streamed(
      "responses",
      {{"response.created", R"({"type":"response.created","response":{"id":"resp_1"}})"},
       {"response.incomplete", R"({"type":"response.incomplete","response":)" + final_response + "}"}});
  same_answer(s, p);

  // Anthropic: max_tokens reached inside the thinking block.
  p = plain("anthropic",
            R"({"type":"message","content":[{"type":"thinking","thinking":"Let me","signature":"c2ln"}],)"
            R"("stop_reason":"max_tokens"})");
  CHECK(p.bucket == Bucket::none);
  CHECK(p.text.empty());
  CHECK(p.finish_reason == "max_tokens");
  s = streamed(
      "anthropic",
      {{"message_start", R"({"type":"message_start","message":{"id":"msg_1","content":[]}})"},
       {"content_block_start",
        R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})"},
       {"content_block_delta", R"({"type":"content_block_delta","index":0,)"
                               R"("delta":{"type":"thinking_delta","thinking":"Let me"}})"},
       {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
       {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"max_tokens"}})"},
       {"message_stop", R"({"type":"message_stop"})"}});
  same_answer(s, p);
}

TEST_CASE("a content-filter finish is an answer: OpenAI chat streamed, Responses incomplete") {
  const Reply p = plain(
      "openai",
      R"({"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]})");
  const Reply s = streamed("openai", {{"message", chat_chunk(R"({"role":"assistant","content":""})")},
                                      {"message", chat_chunk("{}", R"("content_filter")")},
                                      {"message", "[DONE]"}});
  same_answer(s, p);
  CHECK(s.finish_reason == "content_filter");
  const Reply r =
      plain("responses", R"({"status":"incomplete","incomplete_details":{"reason":"content_filter"},)"
                         R"("output":[]})");
  CHECK(r.bucket == Bucket::none);
  CHECK(r.finish_reason == "content_filter");
}

TEST_CASE("a tool call whose arguments are not JSON is an answer: kept as written, plain and streamed") {
  const std::string bad = R"({"city": "Par)";
  const std::string sha = gate::sha256_hex(bad);
  // OpenAI chat.
  Reply p = plain("openai", R"({"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[)"
                            R"({"id":"call_1","type":"function","function":{"name":"lookup",)"
                            R"("arguments":"{\"city\": \"Par"}}]},"finish_reason":"tool_calls"}]})");
  CHECK(p.bucket == Bucket::none);
  REQUIRE(p.tool_calls.size() == 1);
  CHECK(p.tool_calls[0].name == "lookup");
  CHECK(p.tool_calls[0].arguments == bad);
  CHECK(p.tool_calls[0].arguments_sha256 == sha);
  Reply s = streamed(
      "openai",
      {{"message", chat_chunk(R"({"role":"assistant","content":null,"tool_calls":[)"
                              R"({"index":0,"id":"call_1","type":"function",)"
                              R"("function":{"name":"lookup","arguments":""}}]})")},
       {"message", chat_chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": "}}]})")},
       {"message", chat_chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"\"Par"}}]})")},
       {"message", chat_chunk("{}", R"("tool_calls")")},
       {"message", "[DONE]"}});
  same_answer(s, p);

  // Responses.
  const std::string final_response =
      R"({"id":"resp_1","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"call_1",)"
      R"("name":"lookup","arguments":"{\"city\": \"Par","status":"completed"}]})";
  p = plain("responses", final_response);
  CHECK(p.bucket == Bucket::none);
  REQUIRE(p.tool_calls.size() == 1);
  CHECK(p.tool_calls[0].arguments == bad);
  s = streamed(
      "responses",
      {{"response.created", R"({"type":"response.created","response":{"id":"resp_1"}})"},
       {"response.output_item.added",
        R"({"type":"response.output_item.added","output_index":0,)"
        R"("item":{"type":"function_call","call_id":"call_1","name":"lookup"}})"},
       {"response.function_call_arguments.delta",
        R"({"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"city\": \"Par"})"},
       {"response.completed", R"({"type":"response.completed","response":)" + final_response + "}"}});
  same_answer(s, p);

  // Anthropic: only a stream carries unvalidated input (fine-grained tool
  // streaming); gate records it with the input as a string, which reads back
  // as the same call.
  s = streamed(
      "anthropic",
      {{"message_start", R"({"type":"message_start","message":{"id":"msg_1","content":[]}})"},
       {"content_block_start", R"({"type":"content_block_start","index":0,"content_block":)"
                               R"({"type":"tool_use","id":"toolu_1","name":"lookup","input":{}}})"},
       {"content_block_delta", R"({"type":"content_block_delta","index":0,)"
                               R"("delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Par"}})"},
       {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
       {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"max_tokens"}})"},
       {"message_stop", R"({"type":"message_stop"})"}});
  CHECK(s.bucket == Bucket::none);
  REQUIRE(s.tool_calls.size() == 1);
  CHECK(s.tool_calls[0].name == "lookup");
  CHECK(s.tool_calls[0].arguments == bad);
  CHECK(s.tool_calls[0].arguments_sha256 == sha);
}

TEST_CASE("a response with no answer in it stays bad_response, plain and streamed") {
  // Content null, no refusal, no tool call, a normal stop: nothing to judge.
  CHECK(plain("openai", R"({"choices":[{"message":{"content":null},"finish_reason":"stop"}]})").bucket ==
        Bucket::bad_response);
  CHECK(plain("anthropic", R"({"type":"message","content":[],"stop_reason":"end_turn"})").bucket ==
        Bucket::bad_response);
  CHECK(plain("responses", R"({"status":"completed","output":[]})").bucket == Bucket::bad_response);
  // A call gate cannot read at all is still the tool_call bucket.
  CHECK(plain("openai",
              R"({"choices":[{"message":{"content":null,"tool_calls":[{"function":{"arguments":"{}"}}]}}]})")
            .bucket == Bucket::tool_call);
  CHECK(plain("anthropic", R"({"content":[{"type":"tool_use","name":"f","input":5}]})").bucket ==
        Bucket::tool_call);
}

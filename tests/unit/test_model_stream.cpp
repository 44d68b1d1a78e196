#include <doctest.h>

#include <string>
#include <utility>
#include <vector>

#include <gate/model/api.hpp>
#include <gate/model/stream.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>

using gate::model::ApiResponse;
using gate::model::Bucket;
using gate::model::parse_response;
using gate::model::Reply;
using gate::model::StreamAssembler;
using gate::model::StreamState;

namespace {

struct Ev {
  std::string event;
  std::string data;
};

// Feeds events 10 ms apart starting at t = 10 (the request went out at 0).
StreamAssembler run(const std::string& provider, const std::vector<Ev>& events, bool eof = true) {
  StreamAssembler a(provider, 0);
  double now = 0;
  for (const auto& e : events)
    a.on_event(e.event, e.data, now += 10);
  if (eof) a.finish(false);
  return a;
}

ApiResponse ok(std::string body) {
  ApiResponse r;
  r.status = 200;
  r.headers = {{"content-type", "application/json"}, {"x-request-id", "req_1"}};
  r.body = std::move(body);
  return r;
}

ApiResponse stream_head() {
  ApiResponse r;
  r.status = 200;
  r.headers = {{"content-type", "text/event-stream"}, {"x-request-id", "req_1"}};
  return r;
}

Reply via_stream(const std::string& provider, const StreamAssembler& a) {
  return parse_response(provider, gate::model::to_non_streaming(provider, a.result(), stream_head()));
}

void check_equivalent(const Reply& streamed, const Reply& plain) {
  CHECK(streamed.bucket == Bucket::none);
  CHECK(plain.bucket == Bucket::none);
  CHECK(streamed.text == plain.text);
  CHECK(streamed.finish_reason == plain.finish_reason);
  REQUIRE(streamed.usage.has_value());
  REQUIRE(plain.usage.has_value());
  CHECK(streamed.usage->prompt_tokens == plain.usage->prompt_tokens);
  CHECK(streamed.usage->completion_tokens == plain.usage->completion_tokens);
  REQUIRE(streamed.tool_calls.size() == plain.tool_calls.size());
  for (std::size_t i = 0; i < plain.tool_calls.size(); ++i) {
    CHECK(streamed.tool_calls[i].name == plain.tool_calls[i].name);
    CHECK(streamed.tool_calls[i].arguments_sha256 == plain.tool_calls[i].arguments_sha256);
  }
}

// An OpenAI chat.completion.chunk with the fields the real ones carry.
std::string chunk(const std::string& delta, const std::string& finish = "null") {
  return R"({"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-x",)"
         R"("system_fingerprint":"fp_1","choices":[{"index":0,"delta":)" +
         delta + R"(,"logprobs":null,"finish_reason":)" + finish + R"(}],"usage":null})";
}

const std::string k_openai_usage_chunk =
    R"({"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-x",)"
    R"("choices":[],"usage":{"prompt_tokens":31,"completion_tokens":9,"total_tokens":40}})";

std::vector<Ev> openai_text_stream(bool with_usage, bool with_done) {
  std::vector<Ev> evs = {
      {"message", chunk(R"({"role":"assistant","content":"","refusal":null})")},
      {"message", chunk(R"({"content":"The capital"})")},
      {"message", chunk(R"({"content":" of France is \u00e9l\u00e9gante "})")},
      {"message", chunk(R"({"content":"Paris."})")},
      {"message", chunk("{}", R"("stop")")},
  };
  if (with_usage) evs.push_back({"message", k_openai_usage_chunk});
  if (with_done) evs.push_back({"message", "[DONE]"});
  return evs;
}

const std::string k_openai_plain_text =
    R"({"id":"chatcmpl-9x","object":"chat.completion","created":1718000000,"model":"gpt-x","choices":[)"
    R"({"index":0,"message":{"role":"assistant","content":"The capital of France is \u00e9l\u00e9gante Paris.",)"
    R"("refusal":null},"logprobs":null,"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":31,"completion_tokens":9,"total_tokens":40}})";

} // namespace

TEST_CASE("rel-29: an OpenAI streamed answer equals the plain one") {
  auto a = run("openai", openai_text_stream(true, true));
  REQUIRE(a.result().state == StreamState::complete);
  CHECK(a.cacheable());
  CHECK_FALSE(a.result().usage_missing);
  check_equivalent(via_stream("openai", a), parse_response("openai", ok(k_openai_plain_text)));
  // The role-only first chunk (t = 10) is no token; "The capital" at t = 20 is.
  CHECK(a.result().ttft_ms == 20);
  auto synth = gate::model::to_non_streaming("openai", a.result(), stream_head());
  CHECK(synth.status == 200);
  CHECK(synth.headers == std::vector<std::pair<std::string, std::string>>{
                             {"x-request-id", "req_1"}, {"content-type", "application/json"}});
}

TEST_CASE("rel-29: OpenAI tool calls are accumulated by index") {
  auto call_start = [](int index, const std::string& id, const std::string& name) {
    return chunk(R"({"tool_calls":[{"index":)" + std::to_string(index) + R"(,"id":")" + id +
                 R"(","type":"function","function":{"name":")" + name + R"(","arguments":""}}]})");
  };
  auto args = [](int index, const std::string& piece) {
    return chunk(R"({"tool_calls":[{"index":)" + std::to_string(index) + R"(,"function":{"arguments":)" +
                 piece + "}}]}");
  };
  std::vector<Ev> evs = {
      {"message", chunk(R"({"role":"assistant","content":null})")},
      {"message", call_start(0, "call_a", "get_weather")},
      {"message", args(0, R"("{\"ci")")},
      {"message", args(0, R"("ty\": \"Pa")")},
      {"message", call_start(1, "call_b", "get_time")},
      {"message", args(1, R"("{\"tz\":\"Europe/Paris\"}")")},
      {"message", args(0, R"("ris\"}")")},
      {"message", chunk("{}", R"("tool_calls")")},
      {"message", k_openai_usage_chunk},
      {"message", "[DONE]"},
  };
  auto a = run("openai", evs);
  REQUIRE(a.result().tool_calls.size() == 2);
  CHECK(a.result().tool_calls[0].arguments == R"({"city": "Paris"})");
  CHECK(a.result().tool_calls[1].id == "call_b");
  const std::string plain =
      R"({"id":"chatcmpl-9x","object":"chat.completion","created":1718000000,"model":"gpt-x","choices":[)"
      R"({"index":0,"message":{"role":"assistant","content":null,"tool_calls":[)"
      R"({"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},)"
      R"({"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\": \"Europe/Paris\"}"}}]},)"
      R"("finish_reason":"tool_calls"}],"usage":{"prompt_tokens":31,"completion_tokens":9,"total_tokens":40}})";
  auto streamed = via_stream("openai", a);
  check_equivalent(streamed, parse_response("openai", ok(plain)));
  CHECK(streamed.tool_calls[0].name == "get_weather");
  // The first tool-call piece (t = 20) is the first token.
  CHECK(a.result().ttft_ms == 20);
}

namespace {

const std::string k_message_start =
    R"({"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],)"
    R"("model":"claude-x","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}})";

std::vector<Ev> anthropic_tool_stream(bool with_stop) {
  std::vector<Ev> evs = {
      {"message_start", k_message_start},
      {"content_block_start",
       R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"},
      {"ping", R"({"type": "ping"})"},
      {"content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me check "}})"},
      {"content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the weather."}})"},
      {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
      {"content_block_start", R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use",)"
                              R"("id":"toolu_01","name":"get_weather","input":{}}})"},
      {"content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",)"
                              R"("partial_json":""}})"},
      {"content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",)"
                              R"("partial_json":"{\"city\": \"Par"}})"},
      {"content_block_delta", R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",)"
                              R"("partial_json":"is\", \"unit\": \"c\"}"}})"},
      {"content_block_stop", R"({"type":"content_block_stop","index":1})"},
      {"content_block_start", R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use",)"
                              R"("id":"toolu_02","name":"get_time","input":{}}})"},
      {"content_block_stop", R"({"type":"content_block_stop","index":2})"},
      {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},)"
                        R"("usage":{"output_tokens":40}})"},
      {"message_delta", R"({"type":"message_delta","delta":{},"usage":{"output_tokens":57}})"},
  };
  if (with_stop) evs.push_back({"message_stop", R"({"type":"message_stop"})"});
  return evs;
}

} // namespace

TEST_CASE("rel-29: an Anthropic streamed answer equals the plain one (cumulative usage)") {
  auto a = run("anthropic", anthropic_tool_stream(true));
  REQUIRE(a.result().state == StreamState::complete);
  CHECK(a.cacheable());
  const std::string plain =
      R"({"id":"msg_01","type":"message","role":"assistant","model":"claude-x","content":[)"
      R"({"type":"text","text":"Let me check the weather."},)"
      R"({"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"unit":"c","city":"Paris"}},)"
      R"({"type":"tool_use","id":"toolu_02","name":"get_time","input":{}}],)"
      R"("stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":57}})";
  auto streamed = via_stream("anthropic", a);
  check_equivalent(streamed, parse_response("anthropic", ok(plain)));
  // Input from message_start (25); output is the last cumulative
  // message_delta value (57), not 1 + 40 + 57.
  CHECK(streamed.usage->prompt_tokens == 25);
  CHECK(streamed.usage->completion_tokens == 57);
  CHECK(streamed.tool_calls.size() == 2);
  // A tool without input streams no partial_json: its input is {}.
  CHECK(a.result().tool_calls[1].arguments == "{}");
  // First text delta is the 4th event: t = 40.
  CHECK(a.result().ttft_ms == 40);
}

TEST_CASE("rel-27: a 200 followed by an error event fails the attempt") {
  gate::register_secret("sk-canary-7f3a9b1c2d4e5f60");
  SUBCASE("OpenAI error object mid-stream") {
    auto evs = openai_text_stream(false, false);
    evs.resize(3);
    evs.push_back({"message",
                   R"({"error":{"message":"The server had an error, key sk-canary-7f3a9b1c2d4e5f60",)"
                   R"("type":"server_error","param":null,"code":null}})"});
    evs.push_back({"message", "[DONE]"}); // too late: the failure stands
    auto a = run("openai", evs);
    CHECK(a.result().state == StreamState::failed);
    CHECK_FALSE(a.cacheable());
    CHECK(a.result().bucket == Bucket::server);
    CHECK(a.result().error.find("server_error: The server had an error") != std::string::npos);
    CHECK_FALSE(gate::contains_secret(a.result().error));
    auto reply = via_stream("openai", a);
    CHECK(reply.bucket == Bucket::server);
    CHECK_FALSE(gate::contains_secret(reply.error));
  }
  SUBCASE("Anthropic overloaded_error event") {
    auto evs = anthropic_tool_stream(false);
    evs.resize(4);
    evs.push_back(
        {"error", R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"});
    auto a = run("anthropic", evs);
    CHECK(a.result().state == StreamState::failed);
    CHECK_FALSE(a.cacheable());
    // Overloaded, as the plain 529 is: a server failure, not this key's rate limit.
    CHECK(a.result().bucket == Bucket::server);
    CHECK(a.result().error == "stream error: overloaded_error: Overloaded");
    auto synth = gate::model::to_non_streaming("anthropic", a.result(), stream_head());
    CHECK(synth.status == 529);
    const auto reply = parse_response("anthropic", synth);
    CHECK(reply.bucket == Bucket::server);
    CHECK(reply.error.find("HTTP 529") != std::string::npos);
    CHECK(reply.error.find("Overloaded") != std::string::npos);
  }
  SUBCASE("context overflow mid-stream stays a context_length failure") {
    auto a = run("openai",
                 {{"message", R"({"error":{"message":"This model's maximum context length is 8192 tokens",)"
                              R"("type":"invalid_request_error","code":"context_length_exceeded"}})"}});
    CHECK(a.result().bucket == Bucket::context_length);
    CHECK(via_stream("openai", a).bucket == Bucket::context_length);
  }
  SUBCASE("a chunk that is not JSON") {
    auto a = run("openai", {{"message", "{\"id\":"}});
    CHECK(a.result().state == StreamState::failed);
    CHECK(a.result().bucket == Bucket::bad_response);
  }
}

TEST_CASE("rel-28: a stream without its end marker is incomplete; missing usage is flagged") {
  SUBCASE("OpenAI without [DONE]") {
    auto a = run("openai", openai_text_stream(true, false));
    CHECK(a.result().state == StreamState::incomplete);
    CHECK_FALSE(a.cacheable());
    CHECK(a.result().bucket == Bucket::connection);
    CHECK(a.result().error == "stream ended without [DONE]");
    auto synth = gate::model::to_non_streaming("openai", a.result(), stream_head());
    CHECK(synth.status == 0);
    CHECK(parse_response("openai", synth).bucket == Bucket::connection);
  }
  SUBCASE("Anthropic without message_stop, cut inside an event") {
    StreamAssembler a("anthropic", 0);
    for (const auto& e : anthropic_tool_stream(false))
      a.on_event(e.event, e.data, 1);
    CHECK(a.result().state == StreamState::open);
    a.finish(true);
    CHECK(a.result().state == StreamState::incomplete);
    CHECK(a.result().error == "stream ended without message_stop (in the middle of an event)");
    CHECK_FALSE(a.cacheable());
  }
  SUBCASE("OpenAI without the include_usage chunk: usage absent, never zero") {
    auto a = run("openai", openai_text_stream(false, true));
    CHECK(a.result().state == StreamState::complete);
    CHECK(a.result().usage_missing);
    CHECK_FALSE(a.result().usage.has_value());
    auto reply = via_stream("openai", a);
    CHECK(reply.bucket == Bucket::none);
    CHECK(reply.text == "The capital of France is \xC3\xA9l\xC3\xA9gante Paris.");
    CHECK_FALSE(reply.usage.has_value());
  }
  SUBCASE("Anthropic message_start without usage") {
    auto a =
        run("anthropic", {{"message_start", R"({"type":"message_start","message":{"id":"m","content":[]}})"},
                          {"content_block_start", R"({"type":"content_block_start","index":0,)"
                                                  R"("content_block":{"type":"text","text":"hi"}})"},
                          {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},)"
                                            R"("usage":{"output_tokens":3}})"},
                          {"message_stop", R"({"type":"message_stop"})"}});
    CHECK(a.result().state == StreamState::complete);
    CHECK(a.result().text == "hi");
    CHECK(a.result().usage_missing);
    CHECK_FALSE(via_stream("anthropic", a).usage.has_value());
  }
}

TEST_CASE("stream error buckets") {
  using gate::model::stream_error_bucket;
  CHECK(stream_error_bucket("overloaded_error", "", "Overloaded") == Bucket::server);
  CHECK(stream_error_bucket("", "529", "") == Bucket::server);
  CHECK(stream_error_bucket("rate_limit_error", "", "") == Bucket::rate_limit);
  CHECK(stream_error_bucket("tokens", "rate_limit_exceeded", "") == Bucket::rate_limit);
  CHECK(stream_error_bucket("", "429", "") == Bucket::rate_limit);
  CHECK(stream_error_bucket("api_error", "", "Internal") == Bucket::server);
  CHECK(stream_error_bucket("server_error", "", "") == Bucket::server);
  CHECK(stream_error_bucket("something_new", "", "") == Bucket::server);
  CHECK(stream_error_bucket("authentication_error", "", "") == Bucket::auth);
  CHECK(stream_error_bucket("not_found_error", "", "") == Bucket::not_found);
  CHECK(stream_error_bucket("invalid_request_error", "", "prompt is too long: 210000 tokens") ==
        Bucket::context_length);
  CHECK(stream_error_bucket("invalid_request_error", "", "bad field") == Bucket::bad_response);
}

TEST_CASE("requests ask for streaming and, from OpenAI, for usage") {
  CHECK(gate::model::with_streaming("openai", R"({"model":"gpt-x","messages":[]})") ==
        R"({"messages":[],"model":"gpt-x","stream":true,"stream_options":{"include_usage":true}})");
  CHECK(gate::model::with_streaming("anthropic", R"({"model":"claude-x"})") ==
        R"({"model":"claude-x","stream":true})");
  CHECK_THROWS_AS(gate::model::with_streaming("openai", "[1]"), gate::Error);
}

TEST_CASE(
    "Anthropic's prompt cache: the prompt counts what was read from and written to it, streamed or not") {
  // input_tokens leaves the cached part out; gate counts the whole prompt,
  // so a run that reads the provider's cache and one that fills it count
  // alike: 4 + 1000 (written) + 0, and 4 + 0 + 1000 (read).
  const std::string start =
      R"({"type":"message_start","message":{"id":"msg_c","type":"message","role":"assistant","model":"claude-x",)"
      R"("content":[],"stop_reason":null,"usage":{"input_tokens":4,"cache_creation_input_tokens":1000,)"
      R"("cache_read_input_tokens":0,"output_tokens":1}}})";
  std::vector<Ev> evs = {
      {"message_start", start},
      {"content_block_start",
       R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"},
      {"content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}})"},
      {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
      {"message_delta",
       R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}})"},
      {"message_stop", R"({"type":"message_stop"})"},
  };
  auto written = run("anthropic", evs);
  REQUIRE(written.result().usage.has_value());
  CHECK(written.result().usage->prompt_tokens == 1004);
  CHECK(written.result().usage->completion_tokens == 2);
  // The read and written parts, kept apart for pricing.
  CHECK(written.result().usage->cache_write_tokens == 1000);
  CHECK(written.result().usage->cache_read_tokens == 0);
  // The stored (non-streaming) form reads back to the same counts.
  const auto stored = via_stream("anthropic", written);
  CHECK(stored.usage->prompt_tokens == 1004);
  CHECK(stored.usage->cache_write_tokens == 1000);
  CHECK(stored.usage->cache_read_tokens == 0);

  // A cumulative message_delta that restates the cache counts wins.
  evs[4].data = R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":4,)"
                R"("cache_creation_input_tokens":0,"cache_read_input_tokens":1000,"output_tokens":2}})";
  CHECK(run("anthropic", evs).result().usage->prompt_tokens == 1004);

  const auto plain = parse_response(
      "anthropic",
      ok(R"({"id":"msg_c","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],)"
         R"("stop_reason":"end_turn","usage":{"input_tokens":4,"cache_creation_input_tokens":0,)"
         R"("cache_read_input_tokens":1000,"output_tokens":2}})"));
  REQUIRE(plain.usage.has_value());
  CHECK(plain.usage->prompt_tokens == 1004);
  CHECK(plain.usage->cache_read_tokens == 1000);
  CHECK(plain.usage->cache_write_tokens == 0);
  // Without input_tokens there is no count, whatever the cache says.
  CHECK_FALSE(
      parse_response("anthropic", ok(R"({"content":[{"type":"text","text":"ok"}],)"
                                     R"("usage":{"cache_read_input_tokens":1000,"output_tokens":2}})"))
          .usage.has_value());
}

TEST_CASE("OpenAI's prompt cache: cached_tokens of the prompt, plain, streamed and on the Responses API") {
  const auto plain = parse_response(
      "openai",
      ok(R"({"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],)"
         R"("usage":{"prompt_tokens":2000,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1536}}})"));
  REQUIRE(plain.usage.has_value());
  CHECK(plain.usage->prompt_tokens == 2000); // the whole prompt, as before
  CHECK(plain.usage->cache_read_tokens == 1536);
  CHECK_FALSE(plain.usage->cache_write_tokens.has_value()); // OpenAI reports none: n/a
  // Without the details: absent, not 0.
  CHECK_FALSE(
      parse_response("openai",
                     ok(R"({"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},)"
                        R"("finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":1}})"))
          .usage->cache_read_tokens.has_value());
  std::vector<Ev> evs = {
      {"message",
       R"({"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}],"usage":null})"},
      {"message",
       R"({"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null})"},
      {"message",
       R"({"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":2000,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1536}}})"},
      {"message", "[DONE]"},
  };
  auto a = run("openai", evs);
  REQUIRE(a.result().usage.has_value());
  CHECK(a.result().usage->cache_read_tokens == 1536);
  CHECK(via_stream("openai", a).usage->cache_read_tokens == 1536); // the stored form keeps it
  const auto responses = parse_response(
      "responses",
      ok(R"({"id":"r1","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}],)"
         R"("usage":{"input_tokens":2000,"output_tokens":5,"input_tokens_details":{"cached_tokens":1024}}})"));
  REQUIRE(responses.usage.has_value());
  CHECK(responses.usage->cache_read_tokens == 1024);
}

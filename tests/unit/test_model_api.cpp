#include <doctest.h>

#include <string>

#include <boost/json.hpp>
#include <optional>

#include <gate/model/api.hpp>
#include <gate/run/runner.hpp>
#include <gate/util/redact.hpp>

#include "test_model_support.hpp"

using gate::model::ApiResponse;
using gate::model::Bucket;
using gate::model::ChatMessage;
using gate::model::parse_response;

using gate::model::test::response;

namespace {

gate::config::ModelConfig openai_model() {
  gate::config::ModelConfig m;
  m.provider = "openai";
  m.name = "gpt-x";
  return m;
}

gate::config::ModelConfig anthropic_model() {
  gate::config::ModelConfig m;
  m.provider = "anthropic";
  m.name = "claude-x";
  return m;
}

// sha256 of the canonical text {"a":1,"b":2} (computed with `sha256sum`).
constexpr const char* k_sha_a1_b2 = "43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777";
// sha256 of {"city":"Paris"}.
constexpr const char* k_sha_city_paris = "6e1e312d537bc71b5410b0599f5a508142149e13174c6ee0d1671658845bc67d";

} // namespace

TEST_CASE("bucket names round-trip and match METRICS.md") {
  const Bucket all[] = {Bucket::none,           Bucket::auth,      Bucket::not_found,  Bucket::rate_limit,
                        Bucket::context_length, Bucket::timeout,   Bucket::connection, Bucket::server,
                        Bucket::bad_response,   Bucket::tool_call, Bucket::agent,      Bucket::check};
  for (Bucket b : all)
    CHECK(gate::model::parse_bucket(gate::model::to_string(b)) == b);
  CHECK(gate::model::to_string(Bucket::none) == "");
  CHECK(gate::model::to_string(Bucket::context_length) == "context_length");
  CHECK(gate::model::to_string(Bucket::bad_response) == "bad_response");
  CHECK_FALSE(gate::model::parse_bucket("rate-limit").has_value());
  CHECK_FALSE(gate::model::parse_bucket("AUTH").has_value());
}

TEST_CASE("endpoint path per provider") {
  CHECK(gate::model::endpoint_path(openai_model()) == "/chat/completions");
  CHECK(gate::model::endpoint_path(anthropic_model()) == "/v1/messages");
}

TEST_CASE("openai request: system first, sampling fields only when set") {
  auto m = openai_model(); // defaults: temperature 0, max_tokens 512
  m.seed = 7;
  std::string body = gate::model::build_request(m, "Be brief.", {{"user", "Hi"}});
  CHECK(body == R"({"max_tokens":512,"messages":[{"content":"Be brief.","role":"system"},)"
                R"({"content":"Hi","role":"user"}],"model":"gpt-x","seed":7,"temperature":0})");

  m.temperature = 0.7;
  m.top_p = 0.9;
  m.seed.reset();
  m.max_tokens.reset();
  body = gate::model::build_request(m, "", {{"user", "Hi"}, {"assistant", "Hello"}, {"user", "a \"q\"\n"}});
  CHECK(body == R"({"messages":[{"content":"Hi","role":"user"},{"content":"Hello","role":"assistant"},)"
                R"({"content":"a \"q\"\n","role":"user"}],"model":"gpt-x","temperature":0.7,"top_p":0.9})");

  m.temperature.reset();
  m.top_p.reset();
  CHECK(gate::model::build_request(m, "", {}) == R"({"messages":[],"model":"gpt-x"})");
}

TEST_CASE("openai reasoning models get max_completion_tokens and no sampling fields") {
  auto m = openai_model();
  m.top_p = 0.9;
  for (const char* name : {"gpt-5-mini", "o4-mini", "o3", "o1-preview", "openai/gpt-5"}) {
    m.name = name;
    const std::string body = gate::model::build_request(m, "", {{"user", "Hi"}});
    CHECK(body == R"({"max_completion_tokens":512,"messages":[{"content":"Hi","role":"user"}],"model":")" +
                      std::string(name) + R"("})");
  }
  m.name = "gpt-5-chat-latest";
  CHECK(gate::model::build_request(m, "", {}) ==
        R"({"max_tokens":512,"messages":[],"model":"gpt-5-chat-latest","temperature":0,"top_p":0.9})");
}

TEST_CASE("model.family overrides the name table: a deployment named otherwise, an alias") {
  auto m = openai_model();
  m.name = "prod-reasoner"; // an Azure deployment of o4-mini
  CHECK(gate::model::build_request(m, "", {}) ==
        R"({"max_tokens":512,"messages":[],"model":"prod-reasoner","temperature":0})");
  m.family = "reasoning";
  CHECK(gate::model::build_request(m, "", {}) ==
        R"({"max_completion_tokens":512,"messages":[],"model":"prod-reasoner"})");
  m.name = "gpt-5-mini"; // a proxy that maps the name to a sampling model
  m.family = "sampling";
  CHECK(gate::model::build_request(m, "", {}) ==
        R"({"max_tokens":512,"messages":[],"model":"gpt-5-mini","temperature":0})");
}

TEST_CASE("anthropic 4.5 and later get at most one of temperature and top_p") {
  auto m = anthropic_model();
  m.top_p = 0.5;
  m.name = "claude-sonnet-4-5";
  CHECK(gate::model::build_request(m, "", {}) ==
        R"({"max_tokens":512,"messages":[],"model":"claude-sonnet-4-5","temperature":0})");
  m.name = "claude-3-5-sonnet-latest";
  CHECK(gate::model::build_request(m, "", {}).find(R"("top_p":0.5)") != std::string::npos);
}

TEST_CASE("anthropic request: top-level system, max_tokens always, no seed") {
  auto m = anthropic_model();
  m.seed = 7;
  m.max_tokens.reset();
  std::string body = gate::model::build_request(m, "Be brief.", {{"user", "Hi"}});
  CHECK(body == R"({"max_tokens":1024,"messages":[{"content":"Hi","role":"user"}],"model":"claude-x",)"
                R"("system":"Be brief.","temperature":0})");

  m.max_tokens = 256;
  m.temperature.reset();
  m.top_p = 0.5;
  body = gate::model::build_request(m, "", {{"user", "Hi"}});
  CHECK(body ==
        R"({"max_tokens":256,"messages":[{"content":"Hi","role":"user"}],"model":"claude-x","top_p":0.5})");

  // A system message inside the conversation joins the system prompt.
  body = gate::model::build_request(m, "A", {{"system", "B"}, {"user", "Hi"}});
  CHECK(body == R"({"max_tokens":256,"messages":[{"content":"Hi","role":"user"}],"model":"claude-x",)"
                R"("system":"A\n\nB","top_p":0.5})");
}

TEST_CASE("the route records what went on the wire: each setting as the request body carries it") {
  struct Case {
    gate::config::ModelConfig m;
    const char* limit_field;
  };
  auto openai = openai_model();
  openai.seed = 7;
  openai.top_p = 0.9;
  auto reasoning = openai;
  reasoning.name = "gpt-5-mini";
  auto responses = openai;
  responses.api = "responses";
  auto responses_reasoning = responses;
  responses_reasoning.name = "o4-mini";
  auto anthropic = anthropic_model();
  anthropic.seed = 7;
  anthropic.top_p = 0.5;
  anthropic.name = "claude-sonnet-4-5";
  auto anthropic_null = anthropic_model();
  anthropic_null.max_tokens.reset();
  for (const Case& c : {Case{openai, "max_tokens"}, Case{reasoning, "max_completion_tokens"},
                        Case{responses, "max_output_tokens"}, Case{responses_reasoning, "max_output_tokens"},
                        Case{anthropic, "max_tokens"}, Case{anthropic_null, "max_tokens"}}) {
    CAPTURE(c.m.name);
    CAPTURE(c.m.api);
    const auto w = gate::model::wire_settings(c.m);
    CHECK(w.max_tokens_field == c.limit_field);
    const auto body = boost::json::parse(gate::model::build_request(c.m, "", {{"user", "Hi"}})).as_object();
    auto sent = [&](const char* field) -> std::optional<double> {
      const auto* v = body.if_contains(field);
      return v ? std::optional<double>(v->to_number<double>()) : std::nullopt;
    };
    CHECK(sent("temperature") == w.temperature);
    CHECK(sent("top_p") == w.top_p);
    CHECK(sent("seed") == (w.seed ? std::optional<double>(static_cast<double>(*w.seed)) : std::nullopt));
    CHECK(sent(c.limit_field) ==
          (w.max_tokens ? std::optional<double>(static_cast<double>(*w.max_tokens)) : std::nullopt));
    // The route, from the same settings: "unset" for what was not sent.
    gate::config::Config cfg;
    cfg.model = c.m;
    const auto route = gate::run::configured_route(cfg);
    CHECK((route.at("seed") == "unset") == !sent("seed").has_value());
    CHECK((route.at("temperature") == "unset") == !sent("temperature").has_value());
    CHECK((route.at("top_p") == "unset") == !sent("top_p").has_value());
    CHECK((route.at("max_tokens") == "unset") == !sent(c.limit_field).has_value());
  }
  // By hand: Anthropic and the Responses API never received a seed; a
  // null max_tokens on Anthropic went out as 1024; Claude 4.5 kept temperature.
  gate::config::Config cfg;
  cfg.model = anthropic;
  CHECK(gate::run::configured_route(cfg).at("seed") == "unset");
  CHECK(gate::run::configured_route(cfg).at("top_p") == "unset");
  CHECK(gate::run::configured_route(cfg).at("temperature") == "0");
  cfg.model = anthropic_null;
  CHECK(gate::run::configured_route(cfg).at("max_tokens") == "1024");
  cfg.model = responses;
  CHECK(gate::run::configured_route(cfg).at("seed") == "unset");
  CHECK(gate::run::configured_route(cfg).at("max_tokens") == "512");
  cfg.model = reasoning;
  CHECK(gate::run::configured_route(cfg).at("temperature") == "unset");
  CHECK(gate::run::configured_route(cfg).at("seed") == "7");
}

TEST_CASE("a 400 unsupported_parameter / unsupported_value names the gate.yaml key to change") {
  // OpenAI's documented bodies for a reasoning model sent max_tokens or a temperature.
  auto r = parse_response(
      "openai",
      response(
          400,
          R"({"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}})"));
  CHECK(r.bucket == Bucket::bad_response);
  CHECK(r.error.find("Unsupported parameter: 'max_tokens'") != std::string::npos);
  // The hint comes first: the 200 bytes of a run's error keep it.
  CHECK(r.error.find(
            "HTTP 400: the model does not take max_tokens: set model.max_tokens: null in gate.yaml, or "
            "model.family: reasoning (gpt-5, o-series) — Unsupported parameter") != std::string::npos);
  r = parse_response(
      "openai",
      response(
          400,
          R"({"error":{"message":"Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}})"));
  CHECK(r.error.find("set model.temperature: null in gate.yaml") != std::string::npos);
  // A field gate does not set came from model.extra.
  r = parse_response(
      "openai",
      response(
          400,
          R"({"error":{"message":"Unsupported parameter: 'logprobs'","type":"invalid_request_error","param":"logprobs","code":"unsupported_parameter"}})"));
  CHECK(r.error.find("remove it from model.extra") != std::string::npos);
  // Any other 400 gets no hint.
  r = parse_response(
      "openai",
      response(
          400,
          R"({"error":{"message":"bad","type":"invalid_request_error","param":"temperature","code":"invalid_value"}})"));
  CHECK(r.error == "HTTP 400: bad");
}

TEST_CASE("openai success: text, finish reason, usage") {
  auto r = parse_response("openai", response(200, R"({"id":"x","choices":[{"index":0,"message":{"role":
    "assistant","content":"Paris"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,
    "total_tokens":15}})"));
  CHECK(r.bucket == Bucket::none);
  CHECK(r.text == "Paris");
  CHECK(r.finish_reason == "stop");
  REQUIRE(r.usage.has_value());
  CHECK(r.usage->prompt_tokens == 12);
  CHECK(r.usage->completion_tokens == 3);
  CHECK(r.tool_calls.empty());
  CHECK(r.error.empty());
}

TEST_CASE("openai success without usage leaves usage absent, not zero") {
  auto r = parse_response(
      "openai", response(200, R"({"choices":[{"message":{"content":""},"finish_reason":"length"}]})"));
  CHECK(r.bucket == Bucket::none);
  CHECK(r.text == "");
  CHECK(r.finish_reason == "length");
  CHECK_FALSE(r.usage.has_value());
  // Half a usage object is not a count either.
  r = parse_response(
      "openai", response(200, R"({"choices":[{"message":{"content":"a"}}],"usage":{"prompt_tokens":4}})"));
  CHECK_FALSE(r.usage.has_value());
}

TEST_CASE("openai tool calls: null content, canonical argument hash") {
  auto r =
      parse_response("openai", response(200, R"({"choices":[{"message":{"role":"assistant","content":null,
    "tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"b\": 2, \"a\": 1}"}},
    {"id":"c2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},
    "finish_reason":"tool_calls"}]})"));
  CHECK(r.bucket == Bucket::none);
  CHECK(r.text == "");
  CHECK(r.finish_reason == "tool_calls");
  REQUIRE(r.tool_calls.size() == 2);
  CHECK(r.tool_calls[0].name == "add");
  CHECK(r.tool_calls[0].arguments_sha256 == k_sha_a1_b2); // key order and spaces do not matter
  CHECK(r.tool_calls[1].name == "weather");
  CHECK(r.tool_calls[1].arguments_sha256 == k_sha_city_paris);
}

TEST_CASE("openai tool calls gate cannot read are bucket tool_call; bad JSON arguments are an answer") {
  // The model wrote arguments that do not parse: its answer, for the checks.
  auto r = parse_response("openai", response(200, R"({"choices":[{"message":{"content":null,"tool_calls":[
    {"type":"function","function":{"name":"add","arguments":"{\"a\": 1,"}}]}}]})"));
  CHECK(r.bucket == Bucket::none);
  REQUIRE(r.tool_calls.size() == 1);
  CHECK(r.tool_calls[0].arguments == R"({"a": 1,)");
  r = parse_response("openai", response(200, R"({"choices":[{"message":{"content":null,"tool_calls":[
    {"type":"function","function":{"arguments":"{}"}}]}}]})"));
  CHECK(r.bucket == Bucket::tool_call);
  r = parse_response("openai", response(200, R"({"choices":[{"message":{"content":null,"tool_calls":[
    {"type":"function","function":{"name":"f","arguments":{"a":1}}}]}}]})"));
  CHECK(r.bucket == Bucket::tool_call);
}

TEST_CASE("openai 2xx that is not an answer is bad_response") {
  CHECK(parse_response("openai", response(200, "not json")).bucket == Bucket::bad_response);
  CHECK(parse_response("openai", response(200, R"({"choices":[]})")).bucket == Bucket::bad_response);
  CHECK(parse_response("openai", response(200, R"({"id":"x"})")).bucket == Bucket::bad_response);
  CHECK(parse_response("openai", response(200, R"({"choices":[{"message":{"content":null}}]})")).bucket ==
        Bucket::bad_response);
  CHECK(parse_response("openai", response(200, R"({"choices":[{"finish_reason":"stop"}]})")).bucket ==
        Bucket::bad_response);
  auto r = parse_response("openai", response(200, R"({"error":{"message":"upstream overloaded"}})"));
  CHECK(r.bucket == Bucket::bad_response);
  CHECK(r.error.find("upstream overloaded") != std::string::npos);
}

TEST_CASE("anthropic success: text blocks joined, tool_use, usage") {
  auto r = parse_response("anthropic", response(200, R"({"id":"msg_1","type":"message","role":"assistant",
    "content":[{"type":"text","text":"Par"},{"type":"thinking","thinking":"hm"},{"type":"text","text":"is"},
    {"type":"tool_use","id":"t1","name":"weather","input":{"city":"Paris"}}],"stop_reason":"tool_use",
    "usage":{"input_tokens":20,"output_tokens":9}})"));
  CHECK(r.bucket == Bucket::none);
  CHECK(r.text == "Paris");
  CHECK(r.finish_reason == "tool_use");
  REQUIRE(r.usage.has_value());
  CHECK(r.usage->prompt_tokens == 20);
  CHECK(r.usage->completion_tokens == 9);
  REQUIRE(r.tool_calls.size() == 1);
  CHECK(r.tool_calls[0].name == "weather");
  CHECK(r.tool_calls[0].arguments_sha256 == k_sha_city_paris);
}

TEST_CASE("anthropic responses that are not an answer") {
  CHECK(parse_response("anthropic", response(200, R"({"type":"message","content":[]})")).bucket ==
        Bucket::bad_response);
  CHECK(parse_response("anthropic", response(200, R"({"type":"message"})")).bucket == Bucket::bad_response);
  CHECK(
      parse_response("anthropic", response(200, R"({"content":[{"type":"tool_use","name":"f","input":5}]})"))
          .bucket == Bucket::tool_call);
  // A string input is a streamed one that did not parse: the model's answer.
  CHECK(parse_response("anthropic",
                       response(200, R"({"content":[{"type":"tool_use","name":"f","input":"x"}]})"))
            .bucket == Bucket::none);
  auto r = parse_response("anthropic", response(200, R"({"content":[{"type":"text","text":"hi"}]})"));
  CHECK(r.bucket == Bucket::none);
  CHECK_FALSE(r.usage.has_value());
}

TEST_CASE("error statuses map to buckets") {
  const char* openai_err = R"({"error":{"message":"Incorrect API key provided","type":"invalid_request_error",
    "code":"invalid_api_key"}})";
  CHECK(parse_response("openai", response(401, openai_err)).bucket == Bucket::auth);
  CHECK(parse_response("openai", response(403, "forbidden")).bucket == Bucket::auth);
  CHECK(parse_response("openai", response(404, R"({"error":{"message":"The model `x` does not exist",
    "code":"model_not_found"}})"))
            .bucket == Bucket::not_found);
  CHECK(parse_response("openai",
                       response(400, R"({"error":{"message":"no such model","code":"model_not_found"}})"))
            .bucket == Bucket::not_found);
  CHECK(parse_response("openai", response(429, R"({"error":{"message":"slow down"}})")).bucket ==
        Bucket::rate_limit);
  CHECK(parse_response("openai", response(408, "")).bucket == Bucket::timeout);
  CHECK(parse_response("openai", response(500, "")).bucket == Bucket::server);
  CHECK(parse_response("openai", response(503, "<html>busy</html>")).bucket == Bucket::server);
  CHECK(parse_response("anthropic", response(529, R"({"type":"error","error":{"type":"overloaded_error",
    "message":"Overloaded"}})"))
            .bucket == Bucket::server);
  auto r = parse_response("openai", response(422, R"({"detail":"temperature must be <= 2"})"));
  CHECK(r.bucket == Bucket::bad_response);
  CHECK(r.error == "HTTP 422: temperature must be <= 2");
  r = parse_response("anthropic", response(400, R"({"type":"error","error":{"type":"invalid_request_error",
    "message":"max_tokens: field required"}})"));
  CHECK(r.bucket == Bucket::bad_response);
  CHECK(r.error == "HTTP 400: max_tokens: field required");
  CHECK(parse_response("openai", response(302, "")).bucket == Bucket::bad_response);
}

TEST_CASE("context overflow variants are context_length") {
  CHECK(parse_response("openai", response(400, R"({"error":{"message":"too many tokens",
    "code":"context_length_exceeded"}})"))
            .bucket == Bucket::context_length);
  CHECK(parse_response("openai", response(400, R"({"error":{"message":
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error"}})"))
            .bucket == Bucket::context_length);
  CHECK(parse_response("anthropic", response(400, R"({"type":"error","error":{"type":"invalid_request_error",
    "message":"prompt is too long: 210000 tokens > 200000 maximum"}})"))
            .bucket == Bucket::context_length);
  CHECK(parse_response("openai",
                       response(400, R"({"message":"input exceeds the context window of this model"})"))
            .bucket == Bucket::context_length);
  // The same words in a 500 are a server fault, not the prompt's size.
  CHECK(parse_response("openai", response(500, R"({"error":{"code":"context_length_exceeded"}})")).bucket ==
        Bucket::server);
}

TEST_CASE("status 0 is connection, or timeout when the client says so") {
  auto r = parse_response("openai", response(0, "timeout: no complete response from 127.0.0.1:9 within 1 s"));
  CHECK(r.bucket == Bucket::timeout);
  CHECK(r.error == "timeout: no complete response from 127.0.0.1:9 within 1 s");
  CHECK(parse_response("openai", response(0, "connection: cannot connect to 127.0.0.1:9: refused")).bucket ==
        Bucket::connection);
  CHECK(parse_response("anthropic", response(0, "")).bucket == Bucket::connection);
}

TEST_CASE("429 errors show the retry-after the server asked for") {
  ApiResponse r = response(429, R"({"error":{"message":"Rate limit reached"}})");
  r.headers = {{"retry-after", "30"}};
  auto reply = parse_response("openai", r);
  CHECK(reply.bucket == Bucket::rate_limit);
  CHECK(reply.error == "HTTP 429: (retry-after 30) Rate limit reached");
}

TEST_CASE("error text is short, one line and redacted") {
  gate::register_secret("sk-canary-7f3a9b1c2d4e5f60");
  std::string long_message(1000, 'x');
  auto r = parse_response("openai",
                          response(400, R"({"error":{"message":"bad key sk-canary-7f3a9b1c2d4e5f60\n here )" +
                                            long_message + R"("}})"));
  CHECK(r.bucket == Bucket::bad_response);
  CHECK(r.error.size() <= 200);
  CHECK(r.error.find("sk-canary") == std::string::npos);
  CHECK(r.error.find("[REDACTED]") != std::string::npos);
  CHECK(r.error.find('\n') == std::string::npos);
  CHECK(r.error.rfind("HTTP 400: bad key [REDACTED]  here xxx", 0) == 0);
  // Cutting at 200 bytes never splits a UTF-8 sequence: 150 x + 30 "é" (2 bytes each) = 210 bytes,
  // prefix "HTTP 400: " (10) + 150 + 20 é = 200 bytes.
  r = parse_response("openai", response(
                                   400, R"({"error":{"message":")" + std::string(150, 'x') + [] {
                                     std::string s;
                                     for (int i = 0; i < 30; ++i)
                                       s += "\xc3\xa9";
                                     return s;
                                   }() + R"("}})"));
  CHECK(r.error.size() == 200);
}

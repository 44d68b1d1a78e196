// Azure OpenAI, Google's OpenAI-compatible endpoint and local servers
// (Ollama, vLLM, llama.cpp): their paths, headers and error shapes.
#include <doctest.h>

#include <string>

#include <gate/model/api.hpp>

#include "test_model_support.hpp"

using gate::model::ApiResponse;
using gate::model::Bucket;
using gate::model::parse_response;

using gate::model::test::response;

namespace {

gate::config::ModelConfig azure(std::string api_version, std::string api = "chat") {
  gate::config::ModelConfig m;
  m.provider = "azure";
  m.api = std::move(api);
  m.name = "gpt4o-prod";
  m.api_version = std::move(api_version);
  return m;
}

using Headers = std::vector<std::pair<std::string, std::string>>;

} // namespace

TEST_CASE("azure: deployment URLs carry the deployment and the api-version; the v1 API neither") {
  CHECK(gate::model::endpoint_path(azure("2024-10-21")) ==
        "/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21");
  CHECK(gate::model::endpoint_path(azure("2025-03-01-preview", "responses")) ==
        "/responses?api-version=2025-03-01-preview");
  CHECK(gate::model::endpoint_path(azure("")) == "/chat/completions");
  CHECK(gate::model::endpoint_path(azure("", "responses")) == "/responses");
  CHECK(gate::model::dialect(azure("2024-10-21")) == "openai");
  CHECK(gate::model::dialect(azure("", "responses")) == "responses");
  // The path is part of the cache key: another deployment or version is another path.
  auto other = azure("2024-10-21");
  other.name = "gpt4o-canary";
  CHECK(gate::model::endpoint_path(other) != gate::model::endpoint_path(azure("2024-10-21")));
  CHECK(gate::model::endpoint_path(azure("2024-06-01")) != gate::model::endpoint_path(azure("2024-10-21")));
}

TEST_CASE("the key travels in each provider's header, and in none when there is no key") {
  gate::config::ModelConfig m;
  CHECK(gate::model::provider_headers(m, "k1") == Headers{{"authorization", "Bearer k1"}});
  m.provider = "gemini";
  CHECK(gate::model::provider_headers(m, "k1") == Headers{{"authorization", "Bearer k1"}});
  CHECK(gate::model::provider_headers(azure(""), "k1") == Headers{{"api-key", "k1"}});
  m.provider = "anthropic";
  CHECK(gate::model::provider_headers(m, "k1") ==
        Headers{{"x-api-key", "k1"}, {"anthropic-version", "2023-06-01"}});
  CHECK(gate::model::provider_headers(m, "") == Headers{{"anthropic-version", "2023-06-01"}});
  m.provider = "openai";
  CHECK(gate::model::provider_headers(m, "").empty());
  for (const char* h : {"authorization", "x-api-key", "api-key"})
    CHECK(gate::model::is_credential_header(h));
  CHECK_FALSE(gate::model::is_credential_header("anthropic-version"));
}

TEST_CASE("azure errors and content filters") {
  auto r = parse_response("openai", response(404, R"({"error":{"code":"DeploymentNotFound","message":
    "The API deployment for this resource does not exist."}})"));
  CHECK(r.bucket == Bucket::not_found);
  CHECK(r.error == "HTTP 404: The API deployment for this resource does not exist.");
  CHECK(parse_response("openai", response(404, R"({"error":{"code":"404","message":"Resource not found"}})"))
            .bucket == Bucket::not_found);
  CHECK(parse_response("openai", response(401, R"({"error":{"code":"401",
    "message":"Access denied due to invalid subscription key or wrong API endpoint."}})"))
            .bucket == Bucket::auth);
  // A prompt the filter refused: not an answer, with Azure's words.
  r = parse_response("openai", response(400, R"({"error":{
    "message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
    "type":null,"param":"prompt",
    "code":"content_filter","status":400}})"));
  CHECK(r.bucket == Bucket::bad_response);
  CHECK(r.error.find("content management policy") != std::string::npos);
  // An answer the filter stopped before its first word is an answer with
  // that finish reason, for the checks to judge; not a broken response.
  r = parse_response("openai", response(200, R"({"choices":[{"index":0,"finish_reason":"content_filter",
    "message":{"role":"assistant","content":null},"content_filter_results":{"hate":{"filtered":true}}}],
    "usage":{"prompt_tokens":5,"completion_tokens":0}})"));
  CHECK(r.bucket == Bucket::none);
  CHECK(r.finish_reason == "content_filter");
  CHECK(r.text == "");
  // Without that finish reason, no content is still a broken response.
  CHECK(parse_response("openai", response(200, R"({"choices":[{"finish_reason":"stop",
    "message":{"role":"assistant","content":null}}]})"))
            .bucket == Bucket::bad_response);
}

TEST_CASE("gemini's array of errors: the first one's message and status") {
  auto r = parse_response("openai", response(400, R"([{"error":{"code":400,"message":
    "API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}])"));
  CHECK(r.bucket == Bucket::auth);
  CHECK(r.error == "HTTP 400: API key not valid. Please pass a valid API key.");
  r = parse_response("openai", response(429, R"([{"error":{"code":429,
    "message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}])"));
  CHECK(r.bucket == Bucket::rate_limit);
  CHECK(parse_response("openai", response(404, R"([{"error":{"code":404,
    "message":"models/gemini-9 is not found for API version v1main","status":"NOT_FOUND"}}])"))
            .bucket == Bucket::not_found);
  CHECK(parse_response("openai", response(400, R"([{"error":{"code":400,
    "message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    "status":"INVALID_ARGUMENT"}}])"))
            .bucket == Bucket::context_length);
  r = parse_response("openai", response(400, R"([{"error":{"code":400,
    "message":"Invalid JSON payload received. Unknown name \"seed\": Cannot find field.","status":"INVALID_ARGUMENT"}}])"));
  CHECK(r.bucket == Bucket::bad_response);
  CHECK(r.error.find("Unknown name \"seed\"") != std::string::npos);
  // An empty array says nothing: its text is the message.
  CHECK(parse_response("openai", response(500, "[]")).error == "HTTP 500: []");
}

TEST_CASE("local servers: Ollama's string errors, llama.cpp's and vLLM's context errors") {
  auto r = parse_response("openai",
                          response(404, R"({"error":"model \"llama3.2\" not found, try pulling it first"})"));
  CHECK(r.bucket == Bucket::not_found);
  CHECK(r.error == "HTTP 404: model \"llama3.2\" not found, try pulling it first");
  CHECK(parse_response("openai", response(400, R"({"error":{"code":400,
    "message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}})"))
            .bucket == Bucket::context_length);
  CHECK(parse_response("openai", response(400, R"({"object":"error",
    "message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
    "type":"BadRequestError","code":400})"))
            .bucket == Bucket::context_length);
  // Missing usage is absent, never zero.
  r = parse_response("openai", response(200, R"({"choices":[{"finish_reason":"stop",
    "message":{"role":"assistant","content":"hi"}}]})"));
  CHECK(r.bucket == Bucket::none);
  CHECK_FALSE(r.usage.has_value());
}

#pragma once

// Internal to the fake upstream: how compatible providers differ from
// OpenAI on the wire (Script::azure_api_version, error_style): their error
// bodies and Azure OpenAI's routes and key header.

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

#include <tests/support/fake_upstream.hpp>

namespace gate::testing {

// An error body in the script's error_style: "" (OpenAI's
// {"error":{"message","type","code"}}), "azure" ({"error":{"code",
// "message"}}), "gemini" (Google's array [{"error":{"code":<status>,
// "message","status":"INVALID_ARGUMENT"}}]) or "ollama" ({"error":"..."}).
// `code` is OpenAI's or Azure's error code ("" = none, Azure: the status).
std::string error_body(const Script& script, int status, const std::string& message,
                       const std::string& code = "");

// Azure's refusal of a request, before it is answered: no `api-key` header
// (401), a path that is not one of its routes, or a deployment route or
// /openai/responses without ?api-version=<Script::azure_api_version> (404
// "Resource not found"), a deployment not in Script::models (404
// DeploymentNotFound). nullopt = go on. `path` excludes the query.
struct Refusal {
  int status;
  std::string body;
};
std::optional<Refusal> azure_refusal(const Script& script, std::string_view path, std::string_view query,
                                     const std::string& api_key_header);

// The refusal of a request body that the served model's documented rules
// (Script::enforce) reject, with the provider's 400 body; nullopt = go on.
//   openai-reasoning, Chat Completions: max_tokens (unsupported_parameter,
//     "Use 'max_completion_tokens' instead"), a temperature or top_p other
//     than 1 (unsupported_value, "Only the default (1) value is supported");
//   openai-reasoning, Responses API: temperature or top_p at all
//     (unsupported_parameter);
//   claude-4.5: temperature and top_p together, or no max_tokens
//     (invalid_request_error).
enum class Shape { chat, responses, anthropic };
std::optional<Refusal> provider_refusal(const Script& script, Shape shape, const boost::json::object& body);

} // namespace gate::testing

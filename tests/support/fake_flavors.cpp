#include <tests/support/fake_flavors.hpp>

#include <algorithm>
#include <boost/json.hpp>

namespace gate::testing {

namespace {

// Google API error statuses for the HTTP statuses tests use.
const char* google_status(int status) {
  switch (status) {
  case 400: return "INVALID_ARGUMENT";
  case 401: return "UNAUTHENTICATED";
  case 403: return "PERMISSION_DENIED";
  case 404: return "NOT_FOUND";
  case 429: return "RESOURCE_EXHAUSTED";
  case 503: return "UNAVAILABLE";
  default: return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
  }
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The value of `name` in "a=1&b=2"; nullopt when absent.
std::optional<std::string_view> query_value(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    if (starts_with(pair, name) && pair.size() > name.size() && pair[name.size()] == '=')
      return pair.substr(name.size() + 1);
  }
  return std::nullopt;
}

} // namespace

std::string error_body(const Script& script, int status, const std::string& message,
                       const std::string& code) {
  namespace bj = boost::json;
  const std::string& style = script.error_style;
  if (style == "ollama") return bj::serialize(bj::object{{"error", message}});
  if (style == "gemini")
    return bj::serialize(bj::array{bj::object{
        {"error", bj::object{{"code", status}, {"message", message}, {"status", google_status(status)}}}}});
  if (style == "azure")
    return bj::serialize(bj::object{
        {"error", bj::object{{"code", code.empty() ? std::to_string(status) : code}, {"message", message}}}});
  const char* type = status == 401   ? "authentication_error"
                     : status == 403 ? "permission_error"
                     : status == 404 ? "not_found_error"
                     : status == 429 ? "rate_limit_error"
                     : status >= 500 ? "server_error"
                                     : "invalid_request_error";
  bj::value c = code.empty() ? bj::value(nullptr) : bj::value(code);
  return bj::serialize(bj::object{{"error", bj::object{{"message", message}, {"type", type}, {"code", c}}}});
}

Script azure_script(const std::string& api_version, const std::vector<std::string>& deployments) {
  Script s;
  s.azure_api_version = api_version;
  s.error_style = "azure";
  s.models = deployments;
  return s;
}

Fault gemini_bad_key() {
  Fault f;
  f.status = 400;
  f.times = 1000;
  f.body = R"([{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.",)"
           R"("status":"INVALID_ARGUMENT"}}])";
  return f;
}

std::optional<Refusal> azure_refusal(const Script& script, std::string_view path, std::string_view query,
                                     const std::string& api_key_header) {
  if (api_key_header.empty())
    return Refusal{401,
                   error_body(script, 401,
                              "Access denied due to invalid subscription key or wrong API endpoint. Make "
                              "sure to provide a valid key for an active subscription and use a correct "
                              "regional API endpoint for your resource.")};
  const Refusal not_found{404, error_body(script, 404, "Resource not found")};
  // The v1 API: no api-version, the deployment in the body.
  if (path == "/openai/v1/chat/completions" || path == "/openai/v1/responses" || path == "/openai/v1/models")
    return std::nullopt;
  const bool versioned = query_value(query, "api-version") == std::string_view(script.azure_api_version);
  if (path == "/openai/responses" || path == "/openai/models") {
    if (!versioned) return not_found;
    return std::nullopt;
  }
  constexpr std::string_view deployments = "/openai/deployments/";
  constexpr std::string_view chat = "/chat/completions";
  if (!starts_with(path, deployments) || path.size() <= deployments.size() + chat.size() ||
      path.substr(path.size() - chat.size()) != chat)
    return not_found;
  const std::string deployment(
      path.substr(deployments.size(), path.size() - deployments.size() - chat.size()));
  if (!versioned) return not_found;
  if (!script.models.empty() &&
      std::find(script.models.begin(), script.models.end(), deployment) == script.models.end())
    return Refusal{404,
                   error_body(script, 404,
                              "The API deployment for this resource does not exist. If you created the "
                              "deployment within the last 5 minutes, please wait a moment and try again.",
                              "DeploymentNotFound")};
  return std::nullopt;
}

namespace {

std::string openai_400(const std::string& message, const std::string& param, const std::string& code) {
  return boost::json::serialize(boost::json::object{
      {"error",
       boost::json::object{
           {"message", message}, {"type", "invalid_request_error"}, {"param", param}, {"code", code}}}});
}

} // namespace

std::optional<Refusal> provider_refusal(const Script& script, Shape shape, const boost::json::object& body) {
  namespace bj = boost::json;
  if (script.enforce == "openai-reasoning" && shape == Shape::chat) {
    if (body.contains("max_tokens"))
      return Refusal{400,
                     openai_400("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                "'max_completion_tokens' instead.",
                                "max_tokens", "unsupported_parameter")};
    for (const char* field : {"temperature", "top_p"}) {
      const bj::value* v = body.if_contains(field);
      if (v == nullptr || !v->is_number() || v->to_number<double>() == 1.0) continue;
      return Refusal{400, openai_400("Unsupported value: '" + std::string(field) + "' does not support " +
                                         bj::serialize(*v) +
                                         " with this model. Only the default (1) value is supported.",
                                     field, "unsupported_value")};
    }
  }
  if (script.enforce == "openai-reasoning" && shape == Shape::responses)
    for (const char* field : {"temperature", "top_p"})
      if (body.contains(field))
        return Refusal{400, openai_400("Unsupported parameter: '" + std::string(field) +
                                           "' is not supported with this model.",
                                       field, "unsupported_parameter")};
  if (script.enforce == "claude-4.5" && shape == Shape::anthropic) {
    auto refuse = [](const std::string& message) {
      return Refusal{400, bj::serialize(bj::object{{"type", "error"},
                                                   {"error", bj::object{{"type", "invalid_request_error"},
                                                                        {"message", message}}}})};
    };
    if (body.contains("temperature") && body.contains("top_p"))
      return refuse(
          "`temperature` and `top_p` cannot both be specified for this model. Please use only one.");
    if (!body.contains("max_tokens")) return refuse("max_tokens: Field required");
  }
  return std::nullopt;
}

} // namespace gate::testing

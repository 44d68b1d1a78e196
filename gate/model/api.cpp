#include <gate/model/api.hpp>

#include <array>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <initializer_list>

#include <gate/model/responses.hpp>
#include <gate/util/json.hpp>

namespace gate::model {

namespace {

struct BucketName {
  Bucket bucket;
  const char* name;
};

// The one table both directions read, so a name cannot drift between them.
constexpr std::array<BucketName, 13> k_bucket_names{{
    {Bucket::none, ""},
    {Bucket::auth, "auth"},
    {Bucket::not_found, "not_found"},
    {Bucket::rate_limit, "rate_limit"},
    {Bucket::quota, "quota"},
    {Bucket::context_length, "context_length"},
    {Bucket::timeout, "timeout"},
    {Bucket::connection, "connection"},
    {Bucket::server, "server"},
    {Bucket::bad_response, "bad_response"},
    {Bucket::tool_call, "tool_call"},
    {Bucket::agent, "agent"},
    {Bucket::check, "check"},
}};

// Anthropic's max_tokens is mandatory; 1024 is the value its own examples use.
constexpr std::int64_t k_anthropic_default_max_tokens = 1024;

// The model name without a routing prefix such as "openai/".
std::string bare_name(const std::string& name) {
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

bool starts_with_any(const std::string& s, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes)
    if (s.rfind(p, 0) == 0) return true;
  return false;
}

// OpenAI reasoning models (gpt-5 family, o-series) reject max_tokens
// (unsupported_parameter) and a non-default temperature/top_p
// (unsupported_value); gpt-5-chat-* is the non-reasoning chat variant.
bool openai_reasoning_model(const std::string& name) {
  const std::string n = bare_name(name);
  if (n.rfind("gpt-5-chat", 0) == 0) return false;
  return starts_with_any(n, {"gpt-5", "o1", "o3", "o4"});
}

// Claude 4.5 and later reject temperature together with top_p.
bool anthropic_one_sampling_field(const std::string& name) {
  const std::string n = bare_name(name);
  return starts_with_any(n, {"claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5", "claude-opus-4-1",
                             "claude-sonnet-5", "claude-opus-5", "claude-haiku-5"});
}

boost::json::object message_object(const std::string& role, const std::string& content) {
  boost::json::object o;
  o["role"] = role;
  o["content"] = content;
  return o;
}

std::string build_openai(const config::ModelConfig& m, const std::string& system,
                         const std::vector<ChatMessage>& messages) {
  boost::json::object body;
  body["model"] = m.name;
  boost::json::array msgs;
  if (!system.empty()) msgs.push_back(message_object("system", system));
  for (const auto& msg : messages)
    msgs.push_back(message_object(msg.role, msg.content));
  body["messages"] = std::move(msgs);
  put_settings(wire_settings(m), body);
  return json::canonical(body);
}

std::string build_anthropic(const config::ModelConfig& m, const std::string& system,
                            const std::vector<ChatMessage>& messages) {
  boost::json::object body;
  body["model"] = m.name;
  // The Messages API has no system role inside `messages`; a system message
  // in the conversation joins the top-level system prompt instead of being
  // rejected upstream with a 400.
  std::string sys = system;
  boost::json::array msgs;
  for (const auto& msg : messages) {
    if (msg.role == "system") {
      if (!sys.empty()) sys += "\n\n";
      sys += msg.content;
      continue;
    }
    msgs.push_back(message_object(msg.role, msg.content));
  }
  if (!sys.empty()) body["system"] = sys;
  body["messages"] = std::move(msgs);
  put_settings(wire_settings(m), body);
  return json::canonical(body);
}

} // namespace

WireSettings wire_settings(const config::ModelConfig& m) {
  WireSettings w;
  const std::string d = dialect(m);
  if (d == "anthropic") {
    w.max_tokens = m.max_tokens.value_or(k_anthropic_default_max_tokens);
    w.max_tokens_field = "max_tokens";
    w.temperature = m.temperature;
    // When both are set, temperature is the one kept: it is gate's default.
    if (!(m.temperature && anthropic_one_sampling_field(m.name))) w.top_p = m.top_p;
    return w;
  }
  const bool reasoning = m.family == "reasoning" || (m.family == "auto" && openai_reasoning_model(m.name));
  if (!reasoning) {
    w.temperature = m.temperature;
    w.top_p = m.top_p;
  }
  w.max_tokens = m.max_tokens;
  if (d == "responses") {
    w.max_tokens_field = "max_output_tokens";
    return w;
  }
  w.seed = m.seed;
  // OpenAI deprecated max_tokens on Chat Completions; reasoning models refuse it.
  w.max_tokens_field = reasoning ? "max_completion_tokens" : "max_tokens";
  return w;
}

void put_settings(const WireSettings& w, boost::json::object& body) {
  if (w.temperature) body["temperature"] = *w.temperature;
  if (w.top_p) body["top_p"] = *w.top_p;
  if (w.seed) body["seed"] = *w.seed;
  if (w.max_tokens) body[w.max_tokens_field] = *w.max_tokens;
}

std::string to_string(Bucket b) {
  for (const auto& e : k_bucket_names)
    if (e.bucket == b) return e.name;
  return "";
}

std::optional<Bucket> parse_bucket(const std::string& s) {
  for (const auto& e : k_bucket_names)
    if (s == e.name) return e.bucket;
  return std::nullopt;
}

std::string dialect(const config::ModelConfig& m) {
  if (m.provider == "anthropic") return "anthropic";
  return m.api == "responses" ? "responses" : "openai";
}

std::string endpoint_path(const config::ModelConfig& m) {
  // OpenAI base URLs carry the version (".../v1"); Anthropic's do not.
  const std::string d = dialect(m);
  if (d == "anthropic") return "/v1/messages";
  if (m.provider == "azure" && !m.api_version.empty()) {
    // The loader checked that both are plain URL characters.
    const std::string query = "?api-version=" + m.api_version;
    if (d == "responses") return "/responses" + query;
    return "/deployments/" + m.name + "/chat/completions" + query;
  }
  if (d == "responses") return "/responses";
  return "/chat/completions";
}

std::vector<std::pair<std::string, std::string>> provider_headers(const config::ModelConfig& m,
                                                                  const std::string& key) {
  std::vector<std::pair<std::string, std::string>> h;
  if (m.provider == "anthropic") {
    if (!key.empty()) h.emplace_back("x-api-key", key);
    h.emplace_back("anthropic-version", "2023-06-01");
  } else if (!key.empty()) {
    if (m.provider == "azure")
      h.emplace_back("api-key", key);
    else
      h.emplace_back("authorization", "Bearer " + key);
  }
  return h;
}

bool is_credential_header(std::string_view name) {
  return name == "authorization" || name == "x-api-key" || name == "api-key";
}

std::string build_request(const config::ModelConfig& m, const std::string& system,
                          const std::vector<ChatMessage>& messages) {
  const std::string d = dialect(m);
  std::string body = d == "anthropic"   ? build_anthropic(m, system, messages)
                     : d == "responses" ? detail::build_responses(m, system, messages)
                                        : build_openai(m, system, messages);
  if (m.extra.empty()) return body;
  // The loader refused every field gate writes, so nothing is overwritten.
  auto v = json::parse_strict(body, "request body");
  auto& o = v.as_object();
  const boost::json::value extra = json::parse_strict(m.extra, "model.extra");
  for (const auto& [key, value] : extra.as_object())
    o[key] = value;
  return json::canonical(v);
}

} // namespace gate::model

#include <gate/importer/detail.hpp>

#include <algorithm>
#include <boost/json/value.hpp>

#include <gate/config/config.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::importer::detail {

namespace bj = boost::json;

namespace {

// Request fields promptfoo passes through to the API under the same name,
// which gate sends through model.extra.
const std::vector<std::string> k_openai_body = {
    "response_format",  "stop",  "frequency_penalty", "presence_penalty",
    "reasoning_effort", "tools", "tool_choice",       "parallel_tool_calls",
    "logit_bias",       "user",  "service_tier",      "max_completion_tokens"};
const std::vector<std::string> k_anthropic_body = {"tools", "tool_choice", "stop_sequences", "top_k",
                                                   "thinking"};

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The model part of an id after `prefix` ("openai:chat:" → "gpt-4o").
std::optional<std::string> after(const std::string& id, std::string_view prefix) {
  if (!id.starts_with(prefix) || id.size() == prefix.size()) return std::nullopt;
  return id.substr(prefix.size());
}

// "anthropic:<model>" is promptfoo's Messages API for a Claude model it
// knows; its completion models (claude-1, claude-2, claude-instant-*) go to
// the legacy Completions API, which gate does not speak.
bool messages_model(const std::string& name) {
  return name.starts_with("claude-") && name.find(':') == std::string::npos &&
         !name.starts_with("claude-1") && !name.starts_with("claude-2") &&
         !name.starts_with("claude-instant");
}

const char* k_speaks =
    "gate speaks OpenAI's, Anthropic's and Azure OpenAI's APIs, and OpenAI-compatible servers "
    "given by apiBaseUrl";

} // namespace

std::optional<Model> map_provider(const Node& p, Findings& findings, std::string& why) {
  const Node* config = nullptr;
  std::string id;
  if (p.is_scalar()) {
    id = p.text;
  } else if (p.is_map() && p.get("id") != nullptr) {
    if (!p.get("id")->is_scalar()) {
      why = "its id is " + describe(*p.get("id")) + "; expected a text";
      return std::nullopt;
    }
    id = p.get("id")->text;
    config = p.get("config");
    for (const auto& [key, value] : p.entries)
      if (key != "id" && key != "config" && key != "label")
        findings.unmapped_at(value, "provider key " + quote_excerpt(key),
                             "not carried over: gate calls the model with the request as written");
  } else if (p.is_map() && p.entries.size() == 1 && p.entries[0].second.is_map()) {
    // { "openai:gpt-4o": { config: ... } }
    id = p.entries[0].first;
    config = p.entries[0].second.get("config");
  } else {
    why = "expected an id or a mapping with \"id\", got " + describe(p);
    return std::nullopt;
  }
  Model m;
  m.id = id;
  if (id.starts_with("file://")) {
    why = "providers from a file; gate import reads them inline";
    return std::nullopt;
  }
  if (auto name = after(id, "openai:chat:")) {
    m.provider = "openai", m.name = *name;
  } else if (auto responses = after(id, "openai:responses:")) {
    m.provider = "openai", m.name = *responses, m.api = "responses";
  } else if (auto bare = after(id, "openai:"); bare && bare->find(':') == std::string::npos) {
    m.provider = "openai", m.name = *bare;
  } else if (auto claude = after(id, "anthropic:messages:")) {
    m.provider = "anthropic", m.name = *claude;
  } else if (auto shorthand = after(id, "anthropic:"); shorthand && messages_model(*shorthand)) {
    m.provider = "anthropic", m.name = *shorthand; // promptfoo's shorthand for its Messages API
  } else if (auto deployment =
                 after(id, "azure:chat:") ? after(id, "azure:chat:") : after(id, "azureopenai:chat:")) {
    m.provider = "azure", m.name = *deployment;
  } else {
    why = std::string(k_speaks);
    return std::nullopt;
  }

  std::string host;
  if (config != nullptr && config->is_map()) {
    for (const auto& entry : config->entries) {
      // Named, not bound: a lambda below uses them (clang 14 captures no structured binding).
      const std::string& key = entry.first;
      const Node& value = entry.second;
      const std::string what = "provider config " + quote_excerpt(key);
      const bj::value v = to_json(value);
      auto number_in = [&](double lo, double hi) {
        if (!v.is_number() || v.to_number<double>() < lo || v.to_number<double>() > hi) {
          findings.unmapped_at(value, what, describe(value) + " is not a number gate takes here");
          return false;
        }
        return true;
      };
      auto text = [&]() -> std::optional<std::string> {
        if (!value.is_scalar() || value.text.find("{{") != std::string::npos) {
          findings.unmapped_at(value, what, "expected a plain text (an {{ env.X }} template is promptfoo's)");
          return std::nullopt;
        }
        return value.text;
      };
      if (key == "temperature" || key == "top_p") {
        if (number_in(0, key == "temperature" ? 2 : 1)) m.settings[key] = json::canonical(v);
      } else if (key == "max_tokens" || key == "seed") {
        if (!v.is_int64() || (key == "max_tokens" && v.as_int64() < 1))
          findings.unmapped_at(value, what, describe(value) + " is not an integer gate takes here");
        else
          m.settings[key] = json::canonical(v);
      } else if (key == "apiKey") {
        // The value is never read into anything gate writes.
        findings.note_at(value, what,
                         "not copied: gate reads the key from the environment variable api_key_env names");
      } else if (key == "apiKeyEnvar") {
        if (auto t = text()) m.api_key_env = *t;
      } else if (key == "apiBaseUrl") {
        if (auto t = text()) m.base_url = *t;
      } else if (key == "apiHost") {
        if (auto t = text()) host = *t;
      } else if (key == "apiVersion" && m.provider == "azure") {
        if (auto t = text()) m.api_version = *t;
      } else if (has(m.provider == "anthropic" ? k_anthropic_body : k_openai_body, key)) {
        if (value.is_scalar() && value.text.starts_with("file://"))
          findings.unmapped_at(value, what, "a file:// value, which promptfoo loads; gate import reads none");
        else
          m.extra[key] = v;
      } else if (key == "passthrough" && value.is_map()) {
        for (const auto& [k, x] : value.entries) {
          if (has(config::request_fields(), k))
            findings.unmapped_at(x, "provider config passthrough." + k, "a field gate writes itself");
          else
            m.extra[k] = to_json(x);
        }
      } else {
        findings.unmapped_at(value, what, "not a setting gate import carries over");
      }
    }
  } else if (config != nullptr && !config->is_null()) {
    findings.unmapped_at(*config, "provider config", "expected a mapping, got " + describe(*config));
  }
  if (m.provider == "azure") {
    if (host.empty() && m.base_url.empty()) {
      why = "Azure needs config.apiHost (promptfoo may take it from AZURE_API_HOST, which gate import does "
            "not read)";
      return std::nullopt;
    }
    if (m.base_url.empty())
      m.base_url = "https://" + host + (m.api_version.empty() ? "/openai/v1" : "/openai");
  } else if (!host.empty() && m.base_url.empty()) {
    m.base_url = "https://" + host + (m.provider == "openai" ? "/v1" : "");
  }
  if (!m.base_url.empty() && !(m.base_url.starts_with("http://") || m.base_url.starts_with("https://"))) {
    why = "its base URL " + quote_excerpt(m.base_url) + " is not http(s)://";
    return std::nullopt;
  }
  return m;
}

} // namespace gate::importer::detail

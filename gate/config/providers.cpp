#include <gate/config/config.hpp>

#include <algorithm>

namespace gate::config {

const std::vector<Provider>& providers() {
  // openai first: its values are also ModelConfig's member defaults.
  static const std::vector<Provider> k_providers = {
      {"openai", "https://api.openai.com/v1", "OPENAI_API_KEY"},
      {"anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"},
      {"azure", "", "AZURE_OPENAI_API_KEY"},
      {"gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"},
  };
  return k_providers;
}

const Provider* find_provider(std::string_view name) {
  const auto& all = providers();
  auto it = std::find_if(all.begin(), all.end(), [&](const Provider& p) { return p.name == name; });
  return it == all.end() ? nullptr : &*it;
}

const std::vector<std::string>& request_fields() {
  static const std::vector<std::string> k_fields = {
      "input", "instructions", "max_output_tokens", "max_tokens", "messages",    "model", "seed",
      "store", "stream",       "stream_options",    "system",     "temperature", "top_p",
  };
  return k_fields;
}

} // namespace gate::config

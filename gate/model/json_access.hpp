#pragma once

// Internal to gate_model: reading a provider's JSON without exceptions, for
// answers whose shape nobody promised.

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gate::model::detail {

// Providers nest a few levels; deeper is an attack or garbage.
inline constexpr std::size_t k_max_json_depth = 64;

inline std::optional<boost::json::value> try_parse(std::string_view text) {
  boost::json::parse_options opts;
  opts.max_depth = k_max_json_depth;
  boost::system::error_code ec;
  auto v = boost::json::parse(boost::json::string_view(text.data(), text.size()), ec, {}, opts);
  if (ec) return std::nullopt;
  return v;
}

inline const boost::json::value* field(const boost::json::value* v, std::string_view key) {
  if (v == nullptr || !v->is_object()) return nullptr;
  return v->get_object().if_contains(boost::json::string_view(key.data(), key.size()));
}

inline std::string_view text_of(const boost::json::value* v) {
  if (v == nullptr || !v->is_string()) return {};
  return std::string_view(v->get_string());
}

inline std::optional<std::int64_t> integer_of(const boost::json::value* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v->get_uint64());
  return std::nullopt;
}

// Anthropic's usage splits the prompt: input_tokens leaves out what was
// read from its prompt cache (cache_read_input_tokens) or written to it
// (cache_creation_input_tokens); OpenAI's prompt_tokens counts both. gate
// counts the whole prompt the model read, so a run that hits the provider's
// cache and one that fills it count the same, and the token metric moves
// with the agent, not with the cache's state. nullopt without input_tokens,
// or when the sum does not fit.
inline std::optional<std::int64_t> anthropic_prompt(std::optional<std::int64_t> input,
                                                    std::optional<std::int64_t> cache_write,
                                                    std::optional<std::int64_t> cache_read) {
  if (!input) return std::nullopt;
  std::int64_t sum = *input;
  for (auto part : {cache_write, cache_read})
    if (part && __builtin_add_overflow(sum, *part, &sum)) return std::nullopt;
  return sum;
}

// OpenAI's count of prompt tokens its prompt cache served:
// usage.<details>.cached_tokens (Chat: prompt_tokens_details, Responses:
// input_tokens_details); absent when not reported.
inline std::optional<std::int64_t> openai_cached(const boost::json::value* usage, std::string_view details) {
  return integer_of(field(field(usage, details), "cached_tokens"));
}

// For the wording of providers' error messages.
inline bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

} // namespace gate::model::detail

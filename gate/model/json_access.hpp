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

// For the wording of providers' error messages.
inline bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

} // namespace gate::model::detail

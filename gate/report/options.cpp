#include <gate/report/report.hpp>

#include <algorithm>
#include <cmath>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

// Read where a report's config is: reading a report, merging shards.
namespace gate::report {

namespace {

// A price field: a finite number >= 0.
double price_field(const boost::json::object& row, const char* name, const std::string& at) {
  const auto* v = row.if_contains(name);
  if (v == nullptr) throw_bad_input(at + ": missing field \"" + name + "\"");
  if (!v->is_number()) throw_bad_input(at + ": field \"" + name + "\" must be a number");
  const double d = json::to_double(*v);
  if (!std::isfinite(d) || d < 0) throw_bad_input(at + ": field \"" + name + "\" must be a number >= 0");
  return d;
}

} // namespace

metrics::Pricing pricing_from_json(const boost::json::value& pricing, const std::string& where) {
  metrics::Pricing out;
  if (pricing.is_null()) return out;
  if (!pricing.is_object()) throw_bad_input(where + ": \"pricing\" must be an object");
  for (const auto& [name, row] : pricing.get_object()) {
    const std::string at = where + ": pricing of model " + quote_excerpt(name);
    if (!row.is_object()) throw_bad_input(at + " must be an object");
    for (const auto& [field, value] : row.get_object())
      if (field != "prompt" && field != "completion" && field != "cached_prompt" && field != "cache_write")
        throw_bad_input(at + ": unknown field " + quote_excerpt(field) +
                        "; expected prompt, completion, cached_prompt, cache_write");
    metrics::Price price{price_field(row.get_object(), "prompt", at),
                         price_field(row.get_object(), "completion", at)};
    if (row.get_object().contains("cached_prompt"))
      price.cached_prompt = price_field(row.get_object(), "cached_prompt", at);
    if (row.get_object().contains("cache_write"))
      price.cache_write = price_field(row.get_object(), "cache_write", at);
    out.models[std::string(name)] = price;
  }
  return out;
}

metrics::Options options_from_config(const boost::json::value& config, const std::string& where) {
  metrics::Options o;
  if (!config.is_object()) return o;
  const auto& c = config.get_object();
  if (const auto* band = c.if_contains("token_band_pct")) {
    double pct = 0;
    if (band->is_double())
      pct = band->get_double();
    else if (band->is_int64())
      pct = static_cast<double>(band->get_int64());
    else if (band->is_uint64())
      pct = static_cast<double>(band->get_uint64());
    else
      throw_bad_input(where + ": config field \"token_band_pct\" must be a number");
    if (!std::isfinite(pct) || pct < 0)
      throw_bad_input(where + ": config field \"token_band_pct\" must be a number >= 0");
    o.token_band_pct = pct;
  }
  if (const auto* polluted = c.if_contains("include_polluted")) {
    if (!polluted->is_bool())
      throw_bad_input(where + ": config field \"include_polluted\" must be true or false");
    o.include_polluted = polluted->get_bool();
  }
  if (const auto* pricing = c.if_contains("pricing")) {
    o.pricing = pricing_from_json(*pricing, where + ": config");
    const auto* judge = c.if_contains("judge");
    const auto* model =
        judge != nullptr && judge->is_object() ? judge->get_object().if_contains("model") : nullptr;
    if (model != nullptr && !model->is_string())
      throw_bad_input(where + ": config field \"judge.model\" must be a string");
    if (model != nullptr) o.pricing.judge_model = std::string(model->get_string());
  }
  if (const auto* by_design = c.if_contains("route_by_design")) {
    const auto* names = by_design->if_array();
    if (names == nullptr ||
        !std::all_of(names->begin(), names->end(), [](const auto& v) { return v.is_string(); }))
      throw_bad_input(where + ": config field \"route_by_design\" must be an array of route field names");
    for (const auto& name : *names)
      o.routes.by_design.insert(std::string(name.get_string()));
  }
  return o;
}

} // namespace gate::report

#include <gate/report/report.hpp>

#include <cmath>

#include <gate/util/error.hpp>
#include <gate/util/text.hpp>

// Read where a report's config is: reading a report, merging shards.
namespace gate::report {

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
  return o;
}

} // namespace gate::report

#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <gate/results/results.hpp>

// The route of an ingested run, apart from record.cpp for size.
namespace gate::ingest {

// Route values as a record gave them (text; numbers in shortest form).
struct RouteFields {
  std::optional<std::string> model, user_model, base_url, key_alias, temperature, top_p, seed, concurrency;
  int retries = 0;
};

// The run's route in gate's own keys (model, user_model, base_url_host, base_url_path,
// key_alias, temperature, top_p, seed, concurrency, retries). A base URL
// keeps only host:port and path: user info and query (where keys hide) are
// dropped, and any part or key alias that looks like a secret becomes
// "[REDACTED]". Absent fields stay absent; retries is always set, so a
// retried run differs from the others of its task.
results::Route route_of_record(const RouteFields& f);

} // namespace gate::ingest

#pragma once

#include <memory>
#include <string>

#include <gate/config/config.hpp>
#include <gate/model/api.hpp>

namespace gate::net {

// A plain-HTTP/1.1 ModelClient on Boost.Beast: base URL "http://host:port/prefix",
// keep-alive connections pooled per worker thread, a deadline for the whole
// call (model.timeout_s), retries on connection failures, 408/409/429/5xx/529
// with exponential backoff (model.max_retries). The key is read from the
// environment variable model.api_key_env when the client is made; a missing
// key throws Error(cannot_run) naming the variable (never the value).
// https:// base URLs are refused with Error(cannot_run) until the HTTPS
// transport lands.
std::unique_ptr<model::ModelClient> make_http_client(const config::ModelConfig& m);

// Splits "http://host:port/prefix" (port defaults to 80/443); throws
// Error(bad_input) on anything else.
struct Url {
  std::string scheme, host, port, path_prefix;
};
Url parse_url(const std::string& url);

} // namespace gate::net

#pragma once

// Internal to gate_net: one HTTP(S) exchange with an origin, shared by the
// model client (which adds retries, streaming and the limiter) and fetch()
// (one request, no retry). Connections, TLS, proxies, deadlines and limits
// live here and nowhere else.

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <gate/model/api.hpp>
#include <gate/net/http_client.hpp>
#include <gate/net/proxy.hpp>
#include <gate/net/settings.hpp>

namespace gate::net::detail {

using Mono = std::chrono::steady_clock;
using Request = boost::beast::http::request<boost::beast::http::string_body>;

// Explicit, since Beast's default body limit is 8 MB and a long completion
// can exceed that; anything past 64 MiB is not a chat answer.
inline constexpr std::uint64_t k_body_limit = 64ull << 20;

// `fatal`: retrying cannot help (a certificate, a proxy's 407).
enum class Failure { none, timeout, connection, limit, fatal };

// What one exchange produced: an HTTP response (header values and body
// redacted), or why there was none.
struct Exchange {
  Failure failure = Failure::none;
  std::string detail; // for failures: the status-0 body, redacted
  model::ApiResponse response;
};

// Sees each piece of the response body as it arrives (after the header),
// with the response's status and content type; streamed answers are read
// through it. Pieces are not yet redacted.
using BodySink = std::function<void(int status, std::string_view content_type, std::string_view piece)>;

// Plain http carries credentials in clear text: only to this machine, or
// to a host listed in GATE_ALLOW_HTTP (settings.allow_http: comma list, any
// case).
bool http_allowed(const std::string& host, const Settings& settings);

struct Connection; // one pooled TCP or TLS connection
struct ThreadIo;   // a worker thread's io_context and idle connections

// An origin from a base URL: TLS context (https), proxy from the
// settings, and the per-thread keep-alive pool. Thread-safe: each worker
// thread drives its own connections.
class Transport {
public:
  // Throws Error(bad_input) on a bad URL, Error(cannot_run) for plain http
  // to a host not allowed (`what_travels` names what would be exposed, e.g.
  // "the API key") or a trust store that cannot be used.
  Transport(const std::string& base_url, const std::filesystem::path& ca_file, const HttpOptions& options,
            const Settings& settings, const std::string& what_travels);

  const Url& url() const { return url_; }
  const std::optional<Proxy>& proxy() const { return proxy_; }
  const HttpOptions& options() const { return options_; }

  // A request for `path` (with any query) below the base URL's prefix:
  // Host, User-Agent, keep-alive and the proxy's credentials for plain http.
  Request make_request(boost::beast::http::verb method, const std::string& path) const;

  // One request and its response; a pooled connection the server dropped
  // while idle is replaced once. `total_s` is only for messages: the
  // deadline is `deadline`. `abandoned`, when given, is asked before the
  // call and every 50 ms during it; once it says true the call is given up:
  // a connection failure, the connection closed.
  Exchange exchange(const Request& req, Mono::time_point deadline, double total_s, const BodySink& sink = {},
                    const std::function<bool()>* abandoned = nullptr) const;

private:
  std::string where() const;
  std::string proxy_where() const;
  std::unique_ptr<Connection> open_connection(ThreadIo& io, Mono::time_point deadline, Exchange& err,
                                              const std::function<bool()>* abandoned) const;
  Exchange open_tunnel(Connection& c, Mono::time_point deadline) const;
  Exchange handshake(Connection& c, Mono::time_point deadline) const;
  Exchange exchange_on(Connection& c, const Request& req, Mono::time_point deadline, double total_s,
                       const BodySink& sink, bool& stale, bool& keep) const;

  Url url_;
  std::shared_ptr<boost::asio::ssl::context> tls_; // null for http
  std::optional<Proxy> proxy_;
  HttpOptions options_;
  std::string host_header_;
  std::string pool_key_;
};

// The exchange as a status-0 response when it failed, with latency set.
model::ApiResponse to_response(Exchange e, double latency_ms);

Mono::time_point after(double seconds);

} // namespace gate::net::detail

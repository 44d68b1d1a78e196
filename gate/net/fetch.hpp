#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <gate/model/api.hpp>
#include <gate/net/http_client.hpp>

namespace gate::net {

// A generic HTTP(S) request, for APIs other than the model's (GitHub's).
struct FetchRequest {
  std::string method = "GET";
  std::string url;       // "https://host[:port]/path[?query]"; no user info, no fragment
  Headers headers;       // sent as given; Host, User-Agent and Content-Length are set here
  std::string body;      // sent when not empty (Content-Length is set)
  double timeout_s = 30; // the whole request
  std::string ca_file;   // extra trust anchors (PEM); empty = the system store only
  // When set, sees each piece of the response body as it arrives, before
  // redaction: for timing a stream, never for keeping its text.
  std::function<void(std::string_view piece)> on_body = {};
  // When set: asked before the call and every 50 ms while it runs; true
  // gives the call up (status 0, "connection: ... abandoned by its
  // caller"), e.g. when the proxy's client left.
  std::function<bool()> abandoned = {};
};

// One request, no retry. Same rules as make_http_client, with the same
// variables taken from `env`: https verified (system store, SSL_CERT_FILE /
// SSL_CERT_DIR, ca_file), plain http only to loopback or GATE_ALLOW_HTTP
// hosts (else Error(cannot_run)), proxies and NO_PROXY honoured, 64 MiB response limit, keep-alive per
// thread. A bad URL or method is Error(bad_input). When no HTTP answer came back: status 0 and a body
// "timeout: ...", "connection: ...", "tls: ...", "proxy: ..." or "response exceeds limit: ...". Response
// header values and the body are redacted; register a token sent in `headers` with register_secret() so that
// an echo of it is redacted too.
model::ApiResponse fetch(const FetchRequest& r, const Environment& env);

namespace detail {
class Transport;
}

// A base URL that many plain requests go to (the shared cache): its
// transport (TLS context, proxy, connection pool key) is made once, by
// fetch()'s rules. Thread-safe; each thread keeps its own connection.
class Origin {
public:
  struct Timeouts {
    double connect_s = 2; // resolve + TCP connect (+ proxy CONNECT, TLS handshake)
    double total_s = 10;  // the whole request
  };
  // `what_travels` names what plain http would expose, for the refusal.
  // Throws as fetch() does for a bad URL or plain http to a host not allowed.
  Origin(const std::string& base_url, const Environment& env, Timeouts timeouts,
         const std::string& what_travels);
  ~Origin();
  Origin(const Origin&) = delete;
  Origin& operator=(const Origin&) = delete;

  // `path` below the base URL's path ("/ab/ab12….entry"), percent-encoded
  // already; the response as fetch() returns it. Never throws for what the
  // server or the network does.
  model::ApiResponse request(const std::string& method, const std::string& path, const Headers& headers,
                             const std::string& body) const;

private:
  std::unique_ptr<detail::Transport> transport_;
  Timeouts timeouts_;
};

} // namespace gate::net

#pragma once

#include <functional>
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

} // namespace gate::net

#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gate/config/config.hpp>
#include <gate/model/api.hpp>
#include <gate/util/environment.hpp>

namespace gate::net {

// Knobs that are not user configuration: the backoff schedule and the
// per-step deadlines (each also bounded by the attempt's model.timeout_s).
// Tests shorten them to keep fault tests fast.
struct HttpOptions {
  double backoff_base_s = 0.5; // first retry waits about this long
  double backoff_cap_s =
      8.0; // gate's own backoff waits no longer (a server's Retry-After: model.max_retry_after_s)
  // How long one call may keep retrying 429s (rate limits, not a spent
  // quota), which do not count against model.max_retries; the smaller of
  // this and model.rate_limit_wait_s holds. Once no attempt of any worker
  // got an answer other than a 429 for that long, no call retries a 429:
  // an outage ends the run in minutes, not hours.
  double rate_limit_budget_s = 120.0;
  double connect_timeout_s = 10.0;   // resolve + TCP connect (+ proxy CONNECT)
  double handshake_timeout_s = 10.0; // TLS handshake
  double read_idle_timeout_s = 30.0; // longest silence while reading a response
};

// An HTTP/1.1 ModelClient on Boost.Beast and OpenSSL: base URL
// "https://host:port/prefix" (verify_peer, SNI, host-name check, trust from
// the system store and model.ca_file; see tls.hpp) or "http://..." for
// loopback hosts and hosts listed in GATE_ALLOW_HTTP (comma list) only,
// since the key would travel in clear text; anything else throws
// Error(cannot_run). HTTPS_PROXY / HTTP_PROXY / NO_PROXY are honoured (see
// proxy.hpp). Every variable comes from `env` (settings.hpp), which cli
// read from the process at start-up. Keep-alive connections are pooled per worker thread and
// origin; deadlines for connect, handshake, each read's silence and the
// whole attempt (model.timeout_s); retries on connection failures and
// timeouts, 408/409/5xx/529 with exponential backoff (model.max_retries);
// a 429 is retried on its own time budget (HttpOptions::rate_limit_budget_s),
// with a backoff that grows even when the server's retry-after says 0.
// The key is `env`'s variable model.api_key_env, taken when the client is
// made and registered for redaction; a missing key throws
// Error(cannot_run) naming the variable (never the value).
//
// A call that never got an HTTP answer returns status 0 and a body that
// says why: "timeout: ...", "connection: ...", "response exceeds limit: ...",
// "tls: ..." (a certificate or handshake failure) or "proxy: ..." (the proxy
// refused); model::parse_response maps these to buckets. Limits, "tls:" and
// a proxy's 407 are not retried. Response header values and bodies are
// redacted before they are returned.
//
// A call with ApiCall::stream is read as server-sent events while it
// arrives (net/sse.hpp, model/stream.hpp) and returned assembled into the
// provider's plain response, with ttft_ms set; an error event after the
// 200 or a stream without its end marker fails the attempt, retried when
// the error is an overload, rate limit, server error or a cut stream.
// One net::Limiter per client paces every attempt of every worker:
// model.requests_per_minute / tokens_per_minute, the adaptive cap on calls
// in flight (halved on 429/529, from expect_workers()) and pool-wide pauses
// for a server's retry-after. Every attempt is in the response's
// attempt_log (status, bucket, wait, latency, usage).
//
// ApiCall's proxy fields (gate proxy forwards an agent's calls): a GET is
// sent without a body; passed-on headers replace the defaults (never the
// credentials: Error(bad_input)); with pass_through the body comes back as
// it came, a stream not assembled, retried on an error event, and on a
// missing end marker only when the stream carried the provider's response
// id (a chat completion or message stream, not one of an API the stream
// reader does not know); `abandoned` stops the attempts.
std::unique_ptr<model::ModelClient> make_http_client(const config::ModelConfig& m, const Environment& env,
                                                     const HttpOptions& options = {});

// Splits "http://host:port/prefix" (port defaults to 80/443, prefix has no
// trailing slash); throws Error(bad_input) on anything else, including
// user info, a query or a fragment.
struct Url {
  std::string scheme, host, port, path_prefix;
};
Url parse_url(const std::string& url);

using Headers = std::vector<std::pair<std::string, std::string>>; // lowercase names

// Retry policy, exposed so the rules can be tested without a network.
// True when a response with this status is worth another attempt:
// 408/409/429/500/502/503/504/529, unless the server says
// "x-should-retry: false" or a 429 is a spent quota (insufficient_quota);
// "x-should-retry: true" makes any status retryable.
bool retryable_response(int status, const Headers& headers, std::string_view body);

// The wait the server asked for, in seconds: retry-after-ms, else
// retry-after as delta seconds or an HTTP date (relative to `now`).
// nullopt when absent or unparseable (then backoff applies).
std::optional<double> server_delay_s(const Headers& headers, std::chrono::system_clock::time_point now);

// Exponential backoff with jitter before retry number `attempt` (0-based):
// d = min(cap, base * 2^attempt), waiting d * (0.5 + 0.5 * u) for u in [0, 1).
double backoff_delay_s(const HttpOptions& o, int attempt, double u);

} // namespace gate::net

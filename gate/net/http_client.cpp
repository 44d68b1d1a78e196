#include <gate/net/http_client.hpp>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include <gate/net/proxy.hpp>
#include <gate/net/tls.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/version.hpp>

// SSE streaming, when it lands, replaces the string-body parser in
// `exchange` with a buffered-body one; the read loop stays.

namespace gate::net {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using ErrorCode = boost::system::error_code;

// Explicit, since Beast's default body limit is 8 MB and a long completion
// can exceed that; anything past 64 MiB is not a chat answer.
constexpr std::uint64_t k_body_limit = 64ull << 20;
constexpr std::uint32_t k_header_limit = 64u << 10;
constexpr std::size_t k_read_chunk = 64u << 10;

// `fatal`: retrying cannot help (a certificate, a proxy's 407).
enum class Failure { none, timeout, connection, limit, fatal };

// What one attempt produced: an HTTP response, or why there was none.
struct Attempt {
  Failure failure = Failure::none;
  std::string detail; // for failures: the status-0 body
  model::ApiResponse response;
};

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// A plain connection, or once the handshake starts a TLS one that took the
// TCP stream over; the tcp_stream's timer is the deadline for both.
struct Connection {
  explicit Connection(asio::io_context& ioc) { plain.emplace(ioc); }
  beast::tcp_stream& tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
  template <class F> ErrorCode with_stream(F&& f) { return tls ? f(*tls) : f(*plain); }

  std::optional<beast::tcp_stream> plain;
  std::optional<TlsStream> tls;
  beast::flat_buffer buffer;
};

// Each worker thread drives its own io_context through blocking calls and
// keeps at most one idle connection per origin, so a thread's calls to one
// host reuse a connection and threads never share one.
struct ThreadIo {
  asio::io_context ioc;
  std::map<std::string, std::unique_ptr<Connection>> idle; // destroyed before ioc
};

ThreadIo& thread_io() {
  thread_local ThreadIo io;
  return io;
}

// The blocking facade: starts one async operation and runs the thread's
// io_context until it (and the stream's deadline timer) completes.
template <class Start> ErrorCode run_op(asio::io_context& ioc, Start&& start) {
  ErrorCode result = asio::error::would_block;
  start([&result](ErrorCode ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run();
  return result;
}

std::string seconds_text(double s) {
  std::string t = std::to_string(s);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t + " s";
}

Attempt failure(Failure f, std::string detail) {
  Attempt a;
  a.failure = f;
  a.detail = redact(detail);
  return a;
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double jitter() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

struct Transport {
  std::shared_ptr<asio::ssl::context> tls; // null for http
  std::optional<Proxy> proxy;
};

class HttpClient final : public model::ModelClient {
public:
  HttpClient(const config::ModelConfig& m, Url url, std::string key, Transport t, const HttpOptions& o)
      : provider_(m.provider), url_(std::move(url)), key_(std::move(key)), transport_(std::move(t)),
        options_(o), timeout_s_(m.timeout_s > 0 ? m.timeout_s : 60.0),
        max_retries_(std::max(0, m.max_retries)) {
    bool default_port =
        (url_.scheme == "http" && url_.port == "80") || (url_.scheme == "https" && url_.port == "443");
    host_header_ = default_port ? url_.host : url_.host + ":" + url_.port;
    // One pool entry per route: the same origin through another proxy is
    // another connection.
    pool_key_ = url_.scheme + "://" + url_.host + ":" + url_.port;
    if (transport_.proxy) pool_key_ += " via " + transport_.proxy->host + ":" + transport_.proxy->port;
  }

  model::ApiResponse send(const model::ApiCall& call, int& attempts) override {
    http::request<http::string_body> req = make_request(call);
    for (int attempt = 0;; ++attempt) {
      attempts = attempt + 1;
      auto start = Clock::now();
      Attempt a = attempt_once(req, after(timeout_s_));
      double latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      bool answered = a.failure == Failure::none;
      bool retry = answered ? retryable_response(a.response.status, a.response.headers, a.response.body)
                            : a.failure == Failure::timeout || a.failure == Failure::connection;
      if (!retry || attempt >= max_retries_) return finish(std::move(a), latency_ms);
      std::optional<double> asked;
      if (answered) asked = server_delay_s(a.response.headers, std::chrono::system_clock::now());
      // Waiting longer than the cap would stall a worker; the response
      // (with its retry-after) goes back to the caller instead.
      if (asked && *asked > options_.backoff_cap_s) return finish(std::move(a), latency_ms);
      double delay = asked ? *asked : backoff_delay_s(options_, attempt, jitter());
      std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    }
  }

private:
  http::request<http::string_body> make_request(const model::ApiCall& call) const {
    std::string target = url_.path_prefix + call.path;
    bool forward = transport_.proxy && !transport_.tls;
    // Through a proxy, plain http is sent in absolute form to the proxy.
    if (forward) target = url_.scheme + "://" + host_header_ + target;
    http::request<http::string_body> req{http::verb::post, target, 11};
    req.set(http::field::host, host_header_);
    req.set(http::field::user_agent, std::string("gate/") + k_version);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json");
    if (forward && !transport_.proxy->authorization.empty())
      req.set(http::field::proxy_authorization, transport_.proxy->authorization);
    if (provider_ == "anthropic") {
      req.set("x-api-key", key_);
      req.set("anthropic-version", "2023-06-01");
    } else {
      req.set(http::field::authorization, "Bearer " + key_);
    }
    req.keep_alive(true);
    req.body() = call.body;
    req.prepare_payload();
    return req;
  }

  static model::ApiResponse finish(Attempt a, double latency_ms) {
    if (a.failure != Failure::none) {
      a.response = {};
      a.response.status = 0;
      a.response.body = std::move(a.detail);
    }
    a.response.latency_ms = latency_ms;
    return std::move(a.response);
  }

  std::string where() const { return url_.host + ":" + url_.port; }

  std::string proxy_where() const {
    return "proxy " + transport_.proxy->host + ":" + transport_.proxy->port + " (from " +
           transport_.proxy->setting + ")";
  }

  std::vector<tcp::endpoint> resolve(asio::io_context& ioc, const std::string& bracketed,
                                     const std::string& port_text, Clock::time_point deadline,
                                     Attempt& err) const {
    std::string host = bracketed;
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    unsigned short port = static_cast<unsigned short>(std::stoi(port_text));
    ErrorCode ec;
    auto address = asio::ip::make_address(host, ec);
    if (!ec) return {tcp::endpoint(address, port)};

    tcp::resolver resolver(ioc);
    asio::steady_timer timer(ioc, deadline);
    std::vector<tcp::endpoint> out;
    bool timed_out = false;
    ec = asio::error::would_block;
    resolver.async_resolve(host, port_text, [&](ErrorCode e, tcp::resolver::results_type results) {
      ec = e;
      for (const auto& r : results)
        out.push_back(r.endpoint());
      timer.cancel();
    });
    timer.async_wait([&](ErrorCode e) {
      if (e) return;
      timed_out = true;
      resolver.cancel();
    });
    ioc.restart();
    ioc.run();
    if (timed_out)
      err = failure(Failure::timeout, "timeout: resolving " + bracketed + " took too long");
    else if (ec || out.empty())
      err = failure(Failure::connection, "connection: cannot resolve " + bracketed + ": " + ec.message());
    return out;
  }

  // CONNECT host:port through the proxy; the tunnel then carries TLS.
  Attempt open_tunnel(Connection& c, asio::io_context& ioc, Clock::time_point deadline) const {
    std::string authority = url_.host + ":" + url_.port;
    http::request<http::empty_body> req{http::verb::connect, authority, 11};
    req.set(http::field::host, authority);
    req.set(http::field::user_agent, std::string("gate/") + k_version);
    if (!transport_.proxy->authorization.empty())
      req.set(http::field::proxy_authorization, transport_.proxy->authorization);
    c.plain->expires_at(deadline);
    ErrorCode ec = run_op(ioc, [&](auto handler) { http::async_write(*c.plain, req, std::move(handler)); });
    http::response_parser<http::empty_body> parser;
    parser.skip(true); // a 2xx answer to CONNECT has no body: the tunnel follows
    parser.header_limit(k_header_limit);
    if (!ec)
      ec = run_op(ioc, [&](auto handler) {
        http::async_read_header(*c.plain, c.buffer, parser, std::move(handler));
      });
    if (ec == beast::error::timeout)
      return failure(Failure::timeout, "timeout: the " + proxy_where() + " did not open a tunnel in time");
    if (ec) return failure(Failure::connection, "connection: " + proxy_where() + " failed: " + ec.message());
    unsigned status = parser.get().result_int();
    if (status == 407)
      return failure(Failure::fatal, "proxy: " + proxy_where() +
                                         " answered 407 Proxy Authentication Required; check the user and "
                                         "password in " +
                                         transport_.proxy->setting);
    if (status / 100 != 2) {
      Failure f = status == 502 || status == 503 || status == 504 ? Failure::connection : Failure::fatal;
      return failure(f, "proxy: " + proxy_where() + " refused the tunnel to " + authority + " with HTTP " +
                            std::to_string(status));
    }
    c.buffer.consume(c.buffer.size());
    return {};
  }

  Attempt handshake(Connection& c, asio::io_context& ioc, Clock::time_point deadline) const {
    c.tls.emplace(std::move(*c.plain), *transport_.tls);
    c.plain.reset();
    SSL* ssl = c.tls->native_handle();
    if (!prepare_tls_session(ssl, url_.host))
      return failure(Failure::fatal, "tls: cannot set up the host-name check for " + url_.host);
    c.tcp().expires_at(std::min(deadline, after(options_.handshake_timeout_s)));
    ErrorCode ec = run_op(ioc, [&](auto handler) {
      c.tls->async_handshake(asio::ssl::stream_base::client, std::move(handler));
    });
    if (!ec) return {};
    if (ec == beast::error::timeout)
      return failure(Failure::timeout, "timeout: the TLS handshake with " + where() + " took too long");
    if (std::string why = tls_failure(ssl, ec, url_.host); !why.empty()) return failure(Failure::fatal, why);
    return failure(Failure::connection,
                   "connection: the TLS handshake with " + where() + " failed: " + ec.message());
  }

  std::unique_ptr<Connection> open_connection(ThreadIo& io, Clock::time_point deadline, Attempt& err) const {
    auto connect_deadline = std::min(deadline, after(options_.connect_timeout_s));
    const std::string& host = transport_.proxy ? transport_.proxy->host : url_.host;
    const std::string& port = transport_.proxy ? transport_.proxy->port : url_.port;
    std::string target = transport_.proxy ? proxy_where() : where();
    auto endpoints = resolve(io.ioc, host, port, connect_deadline, err);
    if (err.failure != Failure::none) return nullptr;
    auto conn = std::make_unique<Connection>(io.ioc);
    conn->plain->expires_at(connect_deadline);
    ErrorCode ec =
        run_op(io.ioc, [&](auto handler) { conn->plain->async_connect(endpoints, std::move(handler)); });
    if (ec == beast::error::timeout) {
      err = failure(Failure::timeout, "timeout: connecting to " + target + " took too long");
      return nullptr;
    }
    if (ec) {
      err = failure(Failure::connection, "connection: cannot connect to " + target + ": " + ec.message());
      return nullptr;
    }
    // Request header and body may leave in two segments; Nagle would hold
    // the second until the peer's delayed ACK.
    conn->plain->socket().set_option(tcp::no_delay(true), ec);
    if (transport_.proxy && transport_.tls) err = open_tunnel(*conn, io.ioc, connect_deadline);
    if (err.failure == Failure::none && transport_.tls) err = handshake(*conn, io.ioc, deadline);
    if (err.failure != Failure::none) return nullptr;
    return conn;
  }

  // Reads one response with two deadlines: the attempt's, and a silence
  // limit renewed by every read, so a server that trickles bytes hits the
  // first and one that stops answering hits the second early. Reads are
  // done by hand: Beast's read_some waits for a whole header under one timer.
  ErrorCode read_response(Connection& c, asio::io_context& ioc,
                          http::response_parser<http::string_body>& parser, Clock::time_point deadline,
                          bool& idle) const {
    idle = false;
    std::size_t header_bytes = c.buffer.size();
    std::size_t consumed = 0;
    for (;;) {
      if (c.buffer.size() > 0) {
        ErrorCode ec;
        bool had_header = parser.is_header_done();
        std::size_t used = parser.put(c.buffer.data(), ec);
        c.buffer.consume(used);
        consumed += used;
        if (ec && ec != http::error::need_more) return ec;
        // Checked here too: Beast lets a header that arrives whole in one
        // buffer past its limit. put() stops at the end of the header.
        if (!had_header && parser.is_header_done() && consumed > k_header_limit)
          return http::error::header_limit;
        if (!parser.is_header_done() && header_bytes > k_header_limit) return http::error::header_limit;
        if (parser.is_done()) return {};
        if (used > 0 && !ec) continue;
      }
      auto step = std::min(deadline, after(options_.read_idle_timeout_s));
      c.tcp().expires_at(step);
      std::size_t n = 0;
      ErrorCode ec = c.with_stream([&](auto& stream) {
        return run_op(ioc, [&](auto handler) {
          stream.async_read_some(c.buffer.prepare(k_read_chunk),
                                 [&n, handler = std::move(handler)](ErrorCode e, std::size_t got) mutable {
                                   n = got;
                                   handler(e);
                                 });
        });
      });
      c.buffer.commit(n);
      header_bytes += parser.is_header_done() ? 0 : n;
      if (ec == asio::error::eof) {
        // A clean close ends a body that runs until the close; any other
        // close before the end is a partial message.
        if (!parser.got_some()) return http::error::end_of_stream;
        parser.put_eof(ec);
        return ec ? ec : (parser.is_done() ? ErrorCode{} : ErrorCode(http::error::partial_message));
      }
      if (ec == beast::error::timeout) idle = step < deadline;
      if (ec) return ec;
    }
  }

  // One request/response on an open connection. `stale` is set when a
  // reused connection turned out closed before any response byte arrived:
  // the server dropped it while idle, and the request may be sent again.
  Attempt exchange(Connection& c, asio::io_context& ioc, const http::request<http::string_body>& req,
                   Clock::time_point deadline, bool& stale, bool& keep) const {
    stale = false;
    keep = false;
    c.tcp().expires_at(deadline);
    ErrorCode ec = c.with_stream([&](auto& stream) {
      return run_op(ioc, [&](auto handler) { http::async_write(stream, req, std::move(handler)); });
    });
    if (ec == beast::error::timeout)
      return failure(Failure::timeout, "timeout: sending the request to " + where() + " took too long");
    if (ec) {
      stale = true;
      return failure(Failure::connection, "connection: sending to " + where() + " failed: " + ec.message());
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(k_body_limit);
    parser.header_limit(k_header_limit);
    bool idle = false;
    ec = read_response(c, ioc, parser, deadline, idle);
    if (ec == beast::error::timeout && idle)
      return failure(Failure::timeout, "timeout: no data from " + where() + " for " +
                                           seconds_text(options_.read_idle_timeout_s));
    if (ec == beast::error::timeout)
      return failure(Failure::timeout,
                     "timeout: no complete response from " + where() + " within " + seconds_text(timeout_s_));
    if (ec == http::error::body_limit)
      return failure(Failure::limit, "response exceeds limit: body over 64 MiB from " + where());
    if (ec == http::error::header_limit)
      return failure(Failure::limit, "response exceeds limit: headers over 64 KiB from " + where());
    // A TLS peer that closes without close_notify: harmless after a framed
    // body (the loop stopped before it), a truncated response otherwise.
    bool closed = ec == http::error::partial_message || ec == asio::ssl::error::stream_truncated ||
                  ec == http::error::end_of_stream || ec == asio::error::eof;
    if (closed && parser.got_some())
      return failure(Failure::connection, "connection: " + where() + " closed the connection mid-response");
    if (ec) {
      stale = !parser.got_some();
      return failure(Failure::connection, "connection: reading from " + where() + " failed: " + ec.message());
    }
    auto res = parser.release();
    Attempt a;
    a.response.status = static_cast<int>(res.result_int());
    for (const auto& field : res) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      a.response.headers.emplace_back(std::move(name), redact(field.value()));
    }
    a.response.body = redact(res.body());
    keep = res.keep_alive();
    return a;
  }

  Attempt attempt_once(const http::request<http::string_body>& req, Clock::time_point deadline) const {
    ThreadIo& io = thread_io();
    std::unique_ptr<Connection> conn;
    if (auto it = io.idle.find(pool_key_); it != io.idle.end()) {
      conn = std::move(it->second);
      io.idle.erase(it);
    }
    bool reused = conn != nullptr;
    for (;;) {
      if (!conn) {
        Attempt err;
        conn = open_connection(io, deadline, err);
        if (!conn) return err;
      }
      bool stale = false;
      bool keep = false;
      Attempt a = exchange(*conn, io.ioc, req, deadline, stale, keep);
      if (stale && reused) {
        conn.reset();
        reused = false;
        continue;
      }
      if (a.failure == Failure::none && keep) io.idle[pool_key_] = std::move(conn);
      return a;
    }
  }

  std::string provider_;
  Url url_;
  std::string key_;
  Transport transport_;
  HttpOptions options_;
  double timeout_s_;
  int max_retries_;
  std::string pool_key_;
  std::string host_header_;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Plain http carries the key in clear text: only to this machine, or to a
// host the user listed on purpose.
bool http_allowed(const std::string& host) {
  if (is_loopback_host(host)) return true;
  const char* allow = std::getenv("GATE_ALLOW_HTTP");
  std::string list = allow == nullptr ? "" : allow;
  std::string want = lower(host);
  std::size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    std::string entry = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (!entry.empty() && lower(entry) == want) return true;
  }
  return false;
}

} // namespace

std::unique_ptr<model::ModelClient> make_http_client(const config::ModelConfig& m,
                                                     const HttpOptions& options) {
  const char* env = m.api_key_env.empty() ? nullptr : std::getenv(m.api_key_env.c_str());
  if (env == nullptr || *env == '\0')
    throw_cannot_run("no API key: environment variable " + m.api_key_env + " is not set (key alias " +
                     m.key_alias + ")");
  std::string key = env;
  register_secret(key);
  // A newline in the key would let it split the request's headers.
  for (unsigned char c : key)
    if (c < 0x20 || c == 0x7f)
      throw_cannot_run("the API key in environment variable " + m.api_key_env + " (key alias " + m.key_alias +
                       ") contains a control character");
  Url url = parse_url(m.base_url);
  if (url.scheme == "http" && !http_allowed(url.host))
    throw_cannot_run("plain http:// to " + url.host +
                     " would send the API key in clear text; use https://, or "
                     "list the host in the environment variable GATE_ALLOW_HTTP (comma-separated)");
  Transport t;
  if (url.scheme == "https") t.tls = make_tls_context(m.ca_file);
  t.proxy = proxy_from_env(url.scheme, url.host);
  return std::make_unique<HttpClient>(m, std::move(url), std::move(key), std::move(t), options);
}

} // namespace gate::net

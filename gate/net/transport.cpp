#include <gate/net/transport.hpp>

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
#include <functional>
#include <map>

#include <gate/net/tls.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/version.hpp>

namespace gate::net::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// A plain connection, or once the handshake starts a TLS one that took the
// TCP stream over; the tcp_stream's timer is the deadline for both.
struct Connection {
  explicit Connection(asio::io_context& ioc) : ioc(ioc) { plain.emplace(ioc); }
  beast::tcp_stream& tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
  template <class F> ErrorCode with_stream(F&& f) { return tls ? f(*tls) : f(*plain); }

  asio::io_context& ioc;
  const std::function<bool()>* abandoned = nullptr; // the caller gave up when it says true
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

namespace {

constexpr std::uint32_t k_header_limit = 64u << 10;
constexpr std::size_t k_read_chunk = 64u << 10;

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

// run_op on a connection: when the caller can give up (Connection::
// abandoned), a timer asks every 50 ms and cancels the operation
// (operation_aborted) once it says so, so an abandoned call frees its
// thread at once instead of at a deadline.
template <class Start> ErrorCode run_op(Connection& c, Start&& start) {
  if (c.abandoned == nullptr) return run_op(c.ioc, std::forward<Start>(start));
  ErrorCode result = asio::error::would_block;
  asio::steady_timer watch(c.ioc);
  std::function<void(ErrorCode)> tick = [&](ErrorCode e) {
    if (e || result != asio::error::would_block) return;
    if ((*c.abandoned)()) return c.tcp().cancel();
    watch.expires_after(std::chrono::milliseconds(50));
    watch.async_wait(tick);
  };
  start([&](ErrorCode ec, auto&&...) {
    result = ec;
    watch.cancel();
  });
  tick({});
  c.ioc.restart();
  c.ioc.run();
  return result;
}

std::string seconds_text(double s) {
  std::string t = std::to_string(s);
  t.erase(t.find_last_not_of('0') + 1);
  if (!t.empty() && t.back() == '.') t.pop_back();
  return t + " s";
}

Exchange failure(Failure f, const std::string& detail) {
  Exchange a;
  a.failure = f;
  a.detail = redact(detail);
  return a;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<tcp::endpoint> resolve(asio::io_context& ioc, const std::string& bracketed,
                                   const std::string& port_text, Mono::time_point deadline, Exchange& err) {
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

// Reads one response with two deadlines: the attempt's, and a silence
// limit renewed by every read, so a server that trickles bytes hits the
// first and one that stops answering hits the second early. Reads are
// done by hand: Beast's read_some waits for a whole header under one timer.
// The body goes to `sink` piece by piece as it is parsed.
ErrorCode read_response(Connection& c, http::response_parser<http::string_body>& parser,
                        Mono::time_point deadline, double idle_s, const BodySink& sink, bool& idle) {
  idle = false;
  std::size_t header_bytes = c.buffer.size();
  std::size_t consumed = 0;
  std::size_t fed = 0;
  auto feed = [&] {
    if (!sink || !parser.is_header_done()) return;
    const std::string& body = parser.get().body();
    if (body.size() <= fed) return;
    sink(static_cast<int>(parser.get().result_int()), parser.get()[http::field::content_type],
         std::string_view(body).substr(fed));
    fed = body.size();
  };
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
      feed();
      if (parser.is_done()) return {};
      if (used > 0 && !ec) continue;
    }
    auto step = std::min(deadline, after(idle_s));
    c.tcp().expires_at(step);
    std::size_t n = 0;
    ErrorCode ec = c.with_stream([&](auto& stream) {
      return run_op(c, [&](auto handler) {
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
      feed();
      return ec ? ec : (parser.is_done() ? ErrorCode{} : ErrorCode(http::error::partial_message));
    }
    if (ec == beast::error::timeout) idle = step < deadline;
    if (ec) return ec;
  }
}

} // namespace

Mono::time_point after(double seconds) {
  return Mono::now() + std::chrono::duration_cast<Mono::duration>(std::chrono::duration<double>(seconds));
}

bool http_allowed(const std::string& host, const Settings& settings) {
  if (is_loopback_host(host)) return true;
  const std::string& list = settings.allow_http;
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

Transport::Transport(const std::string& base_url, const std::filesystem::path& ca_file,
                     const HttpOptions& options, const Settings& settings, const std::string& what_travels)
    : url_(parse_url(base_url)), options_(options) {
  if (url_.scheme == "http" && !http_allowed(url_.host, settings))
    throw_cannot_run("plain http:// to " + url_.host + " would send " + what_travels +
                     " in clear text; use https://, or list the host in the environment variable "
                     "GATE_ALLOW_HTTP (comma-separated)");
  if (url_.scheme == "https") tls_ = make_tls_context(ca_file, settings);
  proxy_ = proxy_for(url_.scheme, url_.host, settings);
  bool default_port =
      (url_.scheme == "http" && url_.port == "80") || (url_.scheme == "https" && url_.port == "443");
  host_header_ = default_port ? url_.host : url_.host + ":" + url_.port;
  // One pool entry per route: the same origin through another proxy is
  // another connection.
  pool_key_ = url_.scheme + "://" + url_.host + ":" + url_.port;
  if (proxy_) pool_key_ += " via " + proxy_->host + ":" + proxy_->port;
  // A connection verified against one trust setting is not reused under another.
  if (tls_ && !ca_file.empty()) pool_key_ += " trusting " + ca_file.string();
}

Request Transport::make_request(http::verb method, const std::string& path) const {
  std::string target = url_.path_prefix + path;
  bool forward = proxy_ && !tls_;
  // Through a proxy, plain http is sent in absolute form to the proxy.
  if (forward) target = url_.scheme + "://" + host_header_ + target;
  Request req{method, target, 11};
  req.set(http::field::host, host_header_);
  req.set(http::field::user_agent, std::string("gate/") + k_version);
  if (forward && !proxy_->authorization.empty())
    req.set(http::field::proxy_authorization, proxy_->authorization);
  req.keep_alive(true);
  return req;
}

std::string Transport::where() const { return url_.host + ":" + url_.port; }

std::string Transport::proxy_where() const {
  return "proxy " + proxy_->host + ":" + proxy_->port + " (from " + proxy_->setting + ")";
}

// CONNECT host:port through the proxy; the tunnel then carries TLS.
Exchange Transport::open_tunnel(Connection& c, Mono::time_point deadline) const {
  std::string authority = url_.host + ":" + url_.port;
  http::request<http::empty_body> req{http::verb::connect, authority, 11};
  req.set(http::field::host, authority);
  req.set(http::field::user_agent, std::string("gate/") + k_version);
  if (!proxy_->authorization.empty()) req.set(http::field::proxy_authorization, proxy_->authorization);
  c.plain->expires_at(deadline);
  ErrorCode ec = run_op(c, [&](auto handler) { http::async_write(*c.plain, req, std::move(handler)); });
  http::response_parser<http::empty_body> parser;
  parser.skip(true); // a 2xx answer to CONNECT has no body: the tunnel follows
  parser.header_limit(k_header_limit);
  if (!ec)
    ec = run_op(
        c, [&](auto handler) { http::async_read_header(*c.plain, c.buffer, parser, std::move(handler)); });
  if (ec == beast::error::timeout)
    return failure(Failure::timeout, "timeout: the " + proxy_where() + " did not open a tunnel in time");
  if (ec) return failure(Failure::connection, "connection: " + proxy_where() + " failed: " + ec.message());
  unsigned status = parser.get().result_int();
  if (status == 407)
    return failure(Failure::fatal, "proxy: " + proxy_where() +
                                       " answered 407 Proxy Authentication Required; check the user and "
                                       "password in " +
                                       proxy_->setting);
  if (status / 100 != 2) {
    Failure f = status == 502 || status == 503 || status == 504 ? Failure::connection : Failure::fatal;
    return failure(f, "proxy: " + proxy_where() + " refused the tunnel to " + authority + " with HTTP " +
                          std::to_string(status));
  }
  c.buffer.consume(c.buffer.size());
  return {};
}

Exchange Transport::handshake(Connection& c, Mono::time_point deadline) const {
  c.tls.emplace(std::move(*c.plain), *tls_);
  c.plain.reset();
  SSL* ssl = c.tls->native_handle();
  if (!prepare_tls_session(ssl, url_.host))
    return failure(Failure::fatal, "tls: cannot set up the host-name check for " + url_.host);
  c.tcp().expires_at(std::min(deadline, after(options_.handshake_timeout_s)));
  ErrorCode ec = run_op(
      c, [&](auto handler) { c.tls->async_handshake(asio::ssl::stream_base::client, std::move(handler)); });
  if (!ec) return {};
  if (ec == beast::error::timeout)
    return failure(Failure::timeout, "timeout: the TLS handshake with " + where() + " took too long");
  if (std::string why = tls_failure(ssl, ec, url_.host, where()); !why.empty())
    return failure(Failure::fatal, why);
  return failure(Failure::connection,
                 "connection: the TLS handshake with " + where() + " failed: " + ec.message());
}

std::unique_ptr<Connection> Transport::open_connection(ThreadIo& io, Mono::time_point deadline, Exchange& err,
                                                       const std::function<bool()>* abandoned) const {
  auto connect_deadline = std::min(deadline, after(options_.connect_timeout_s));
  const std::string& host = proxy_ ? proxy_->host : url_.host;
  const std::string& port = proxy_ ? proxy_->port : url_.port;
  std::string target = proxy_ ? proxy_where() : where();
  auto endpoints = resolve(io.ioc, host, port, connect_deadline, err);
  if (err.failure != Failure::none) return nullptr;
  auto conn = std::make_unique<Connection>(io.ioc);
  conn->abandoned = abandoned;
  conn->plain->expires_at(connect_deadline);
  ErrorCode ec =
      run_op(*conn, [&](auto handler) { conn->plain->async_connect(endpoints, std::move(handler)); });
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
  if (proxy_ && tls_) err = open_tunnel(*conn, connect_deadline);
  if (err.failure == Failure::none && tls_) err = handshake(*conn, deadline);
  if (err.failure != Failure::none) return nullptr;
  return conn;
}

// One request/response on an open connection. `stale` is set when a
// reused connection turned out closed before any response byte arrived:
// the server dropped it while idle, and the request may be sent again.
Exchange Transport::exchange_on(Connection& c, const Request& req, Mono::time_point deadline, double total_s,
                                const BodySink& sink, bool& stale, bool& keep) const {
  stale = false;
  keep = false;
  c.tcp().expires_at(deadline);
  ErrorCode ec = c.with_stream([&](auto& stream) {
    return run_op(c, [&](auto handler) { http::async_write(stream, req, std::move(handler)); });
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
  // A HEAD answer announces a length it does not send.
  parser.skip(req.method() == http::verb::head);
  bool idle = false;
  ec = read_response(c, parser, deadline, options_.read_idle_timeout_s, sink, idle);
  if (ec == beast::error::timeout && idle)
    return failure(Failure::timeout,
                   "timeout: no data from " + where() + " for " + seconds_text(options_.read_idle_timeout_s));
  if (ec == beast::error::timeout)
    return failure(Failure::timeout,
                   "timeout: no complete response from " + where() + " within " + seconds_text(total_s));
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
  Exchange a;
  a.response.status = static_cast<int>(res.result_int());
  for (const auto& field : res) {
    std::string name = lower(std::string(field.name_string()));
    a.response.headers.emplace_back(std::move(name), redact(field.value()));
  }
  a.response.body = redact(res.body());
  keep = res.keep_alive();
  return a;
}

Exchange Transport::exchange(const Request& req, Mono::time_point deadline, double total_s,
                             const BodySink& sink, const std::function<bool()>* abandoned) const {
  ThreadIo& io = thread_io();
  std::unique_ptr<Connection> conn;
  if (auto it = io.idle.find(pool_key_); it != io.idle.end()) {
    conn = std::move(it->second);
    io.idle.erase(it);
  }
  bool reused = conn != nullptr;
  for (;;) {
    if (abandoned != nullptr && (*abandoned)())
      return failure(Failure::connection,
                     "connection: the call to " + where() + " was abandoned by its caller");
    if (!conn) {
      Exchange err;
      conn = open_connection(io, deadline, err, abandoned);
      if (!conn) return err;
    }
    conn->abandoned = abandoned;
    bool stale = false;
    bool keep = false;
    Exchange a = exchange_on(*conn, req, deadline, total_s, sink, stale, keep);
    conn->abandoned = nullptr;
    if (abandoned != nullptr && (*abandoned)())
      return failure(Failure::connection,
                     "connection: the call to " + where() + " was abandoned by its caller");
    if (stale && reused) {
      conn.reset();
      reused = false;
      continue;
    }
    if (a.failure == Failure::none && keep) io.idle[pool_key_] = std::move(conn);
    return a;
  }
}

model::ApiResponse to_response(Exchange e, double latency_ms) {
  if (e.failure != Failure::none) {
    e.response = {};
    e.response.status = 0;
    e.response.body = std::move(e.detail);
  }
  e.response.latency_ms = latency_ms;
  return std::move(e.response);
}

} // namespace gate::net::detail

#include <gate/net/http_client.hpp>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cstdlib>
#include <map>
#include <random>
#include <thread>

#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/version.hpp>

// Transport seams, left for the live-calls issue: an HTTPS connection
// (beast::ssl_stream over the same tcp_stream, with verify_peer, SNI and
// host-name checks) becomes a second connection type driven by the same
// `exchange` template; an HTTPS_PROXY CONNECT tunnel is set up in
// `open_connection` before the handshake; SSE streaming replaces the one
// http::async_read of a string body with a buffered-body read loop.

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

enum class Failure { none, timeout, connection, limit };

// What one attempt produced: an HTTP response, or why there was none.
struct Attempt {
  Failure failure = Failure::none;
  std::string detail; // for failures: the status-0 body
  model::ApiResponse response;
};

struct PlainConnection {
  explicit PlainConnection(asio::io_context &ioc) : stream(ioc) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
};

// Each worker thread drives its own io_context through blocking calls and
// keeps at most one idle connection per origin, so a thread's calls to one
// host reuse a connection and threads never share one.
struct ThreadIo {
  asio::io_context ioc;
  std::map<std::string, std::unique_ptr<PlainConnection>> idle; // destroyed before ioc
};

ThreadIo &thread_io() {
  thread_local ThreadIo io;
  return io;
}

// The blocking facade: starts one async operation and runs the thread's
// io_context until it (and the stream's deadline timer) completes.
template <class Start> ErrorCode run_op(asio::io_context &ioc, Start &&start) {
  ErrorCode result = asio::error::would_block;
  start([&result](ErrorCode ec, auto &&...) { result = ec; });
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

double jitter() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

class HttpClient final : public model::ModelClient {
public:
  HttpClient(const config::ModelConfig &m, Url url, std::string key, const HttpOptions &o)
      : provider_(m.provider), url_(std::move(url)), key_(std::move(key)), options_(o),
        timeout_s_(m.timeout_s > 0 ? m.timeout_s : 60.0), max_retries_(std::max(0, m.max_retries)) {
    origin_ = url_.scheme + "://" + url_.host + ":" + url_.port;
    bool default_port =
        (url_.scheme == "http" && url_.port == "80") || (url_.scheme == "https" && url_.port == "443");
    host_header_ = default_port ? url_.host : url_.host + ":" + url_.port;
  }

  model::ApiResponse send(const model::ApiCall &call, int &attempts) override {
    http::request<http::string_body> req = make_request(call);
    for (int attempt = 0;; ++attempt) {
      attempts = attempt + 1;
      auto start = Clock::now();
      Attempt a = attempt_once(req, start + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(timeout_s_)));
      double latency_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      bool answered = a.failure == Failure::none;
      bool retry = answered ? retryable_response(a.response.status, a.response.headers, a.response.body)
                            : a.failure != Failure::limit;
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
  http::request<http::string_body> make_request(const model::ApiCall &call) const {
    http::request<http::string_body> req{http::verb::post, url_.path_prefix + call.path, 11};
    req.set(http::field::host, host_header_);
    req.set(http::field::user_agent, std::string("gate/") + k_version);
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json");
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

  std::vector<tcp::endpoint> resolve(asio::io_context &ioc, Clock::time_point deadline, Attempt &err) const {
    std::string host = url_.host;
    if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    unsigned short port = static_cast<unsigned short>(std::stoi(url_.port));
    ErrorCode ec;
    auto address = asio::ip::make_address(host, ec);
    if (!ec) return {tcp::endpoint(address, port)};

    tcp::resolver resolver(ioc);
    asio::steady_timer timer(ioc, deadline);
    std::vector<tcp::endpoint> out;
    bool timed_out = false;
    ec = asio::error::would_block;
    resolver.async_resolve(host, url_.port, [&](ErrorCode e, tcp::resolver::results_type results) {
      ec = e;
      for (const auto &r : results)
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
      err = failure(Failure::timeout, "timeout: resolving " + url_.host + " took too long");
    else if (ec || out.empty())
      err = failure(Failure::connection, "connection: cannot resolve " + url_.host + ": " + ec.message());
    return out;
  }

  std::unique_ptr<PlainConnection> open_connection(ThreadIo &io, Clock::time_point deadline,
                                                   Attempt &err) const {
    auto connect_deadline =
        std::min(deadline, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(options_.connect_timeout_s)));
    auto endpoints = resolve(io.ioc, connect_deadline, err);
    if (err.failure != Failure::none) return nullptr;
    auto conn = std::make_unique<PlainConnection>(io.ioc);
    conn->stream.expires_at(connect_deadline);
    ErrorCode ec =
        run_op(io.ioc, [&](auto handler) { conn->stream.async_connect(endpoints, std::move(handler)); });
    if (ec == beast::error::timeout) {
      err = failure(Failure::timeout, "timeout: connecting to " + where() + " took too long");
      return nullptr;
    }
    if (ec) {
      err = failure(Failure::connection, "connection: cannot connect to " + where() + ": " + ec.message());
      return nullptr;
    }
    // Request header and body may leave in two segments; Nagle would hold
    // the second until the peer's delayed ACK.
    conn->stream.socket().set_option(tcp::no_delay(true), ec);
    return conn;
  }

  // One request/response on an open connection. `stale` is set when a
  // reused connection turned out closed before any response byte arrived:
  // the server dropped it while idle, and the request may be sent again.
  Attempt exchange(PlainConnection &c, asio::io_context &ioc, const http::request<http::string_body> &req,
                   Clock::time_point deadline, bool &stale, bool &keep) const {
    stale = false;
    keep = false;
    c.stream.expires_at(deadline);
    ErrorCode ec = run_op(ioc, [&](auto handler) { http::async_write(c.stream, req, std::move(handler)); });
    if (ec == beast::error::timeout)
      return failure(Failure::timeout, "timeout: sending the request to " + where() + " took too long");
    if (ec) {
      stale = true;
      return failure(Failure::connection, "connection: sending to " + where() + " failed: " + ec.message());
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(k_body_limit);
    parser.header_limit(k_header_limit);
    c.stream.expires_at(deadline);
    ec = run_op(ioc, [&](auto handler) { http::async_read(c.stream, c.buffer, parser, std::move(handler)); });
    if (ec == beast::error::timeout)
      return failure(Failure::timeout,
                     "timeout: no complete response from " + where() + " within " + seconds_text(timeout_s_));
    if (ec == http::error::body_limit)
      return failure(Failure::limit, "response exceeds limit: body over 64 MiB from " + where());
    if (ec == http::error::header_limit)
      return failure(Failure::limit, "response exceeds limit: headers over 64 KiB from " + where());
    if (ec == http::error::partial_message)
      return failure(Failure::connection, "connection: " + where() + " closed the connection mid-response");
    if (ec) {
      stale = !parser.got_some();
      return failure(Failure::connection, "connection: reading from " + where() + " failed: " + ec.message());
    }
    auto res = parser.release();
    Attempt a;
    a.response.status = static_cast<int>(res.result_int());
    for (const auto &field : res) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      a.response.headers.emplace_back(std::move(name), redact(field.value()));
    }
    a.response.body = redact(res.body());
    keep = res.keep_alive();
    return a;
  }

  Attempt attempt_once(const http::request<http::string_body> &req, Clock::time_point deadline) const {
    ThreadIo &io = thread_io();
    std::unique_ptr<PlainConnection> conn;
    if (auto it = io.idle.find(origin_); it != io.idle.end()) {
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
      if (a.failure == Failure::none && keep) io.idle[origin_] = std::move(conn);
      return a;
    }
  }

  std::string provider_;
  Url url_;
  std::string key_;
  HttpOptions options_;
  double timeout_s_;
  int max_retries_;
  std::string origin_;
  std::string host_header_;
};

} // namespace

std::unique_ptr<model::ModelClient> make_http_client(const config::ModelConfig &m,
                                                     const HttpOptions &options) {
  const char *env = m.api_key_env.empty() ? nullptr : std::getenv(m.api_key_env.c_str());
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
  if (url.scheme == "https")
    throw_cannot_run("https base URLs need the HTTPS transport (not built yet): " + redact(m.base_url));
  return std::make_unique<HttpClient>(m, std::move(url), std::move(key), options);
}

} // namespace gate::net

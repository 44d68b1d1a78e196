#include <gate/proxy/server.hpp>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sys/socket.h>
#include <thread>

#include <gate/proxy/paced_write.hpp>
#include <gate/proxy/route.hpp>
#include <gate/replay/policy.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/terminal.hpp>

namespace gate::proxy {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// An error body both SDKs surface: OpenAI reads error.message, Anthropic
// reads type "error" and error.type / error.message.
Reply error_reply(int status, const std::string& type, const std::string& message) {
  Reply r;
  r.status = status;
  r.body = R"({"type":"error","error":{"type":)";
  json::append_quoted(type, r.body);
  r.body += R"(,"message":)";
  json::append_quoted(redact(message), r.body);
  r.body += "}}";
  return r;
}

std::string header_value(const std::vector<std::pair<std::string, std::string>>& headers,
                         const std::string& name) {
  for (const auto& [n, v] : headers)
    if (n == name) return v;
  return "";
}

bool wants_stream(const boost::json::value& body) {
  const auto* o = body.if_object();
  if (o == nullptr) return false;
  const auto* s = o->if_contains("stream");
  return s != nullptr && s->is_bool() && s->get_bool();
}

} // namespace

struct Server::Impl {
  std::unique_ptr<asio::io_context> io; // set while serving
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
};

Server::Server(const config::Config& cfg, const Environment& env, ClientSource client)
    : cfg_(cfg), store_(cfg.cache.dir), env_(env), client_(std::move(client)),
      impl_(std::make_unique<Impl>()) {
  // Known for redaction before any answer passes, even one from the cache.
  register_secret(env_.get(cfg_.model.api_key_env));
  if (!client_) {
    own_client_ = std::make_unique<net::LazyClient>(cfg_.model, env_);
    client_ = [this]() -> model::ModelClient& {
      model::ModelClient& c = own_client_->get();
      std::call_once(workers_told_, [&] { c.expect_workers(threads_); });
      return c;
    };
  }
}

Server::~Server() { stop(); }

int Server::next_occurrence(const std::string& scope, const std::string& canonical_body) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The scope path cannot hold a NUL (it came from an HTTP target), so the
  // pair is unambiguous.
  return seen_[scope + std::string(1, '\0') + canonical_body]++;
}

Server::Fresh Server::forward(const std::string& method, const std::string& upstream_path,
                              const std::vector<std::pair<std::string, std::string>>& headers,
                              const std::string& body, bool stream,
                              const std::function<bool()>& client_gone) {
  Fresh out;
  model::ModelClient* client = nullptr;
  try {
    client = &client_();
  } catch (const Error& e) {
    out.reply =
        error_reply(502, "api_error", std::string("gate proxy: cannot call the upstream: ") + e.what());
    return out;
  }
  model::ApiCall call;
  call.provider = cfg_.model.provider;
  call.path = upstream_path;
  call.method = method;
  call.body = body;
  call.stream = stream;
  call.pass_through = true;
  for (const char* name : {"anthropic-version", "anthropic-beta"})
    if (std::string v = header_value(headers, name); !v.empty() && cfg_.model.provider == "anthropic")
      call.headers.emplace_back(name, v);
  call.abandoned = client_gone;
  // The events of the attempt that answered: a retried attempt's are dropped.
  int timed_attempt = -1;
  if (stream) {
    call.on_body = [&](int attempt, std::string_view piece, double ms) {
      if (attempt != timed_attempt) {
        out.clock = EventClock{};
        timed_attempt = attempt;
      }
      out.clock.feed(piece, ms);
    };
  }
  int attempts = 1;
  out.response = client->send(call, attempts);
  if (out.response.status == 0) {
    out.reply = error_reply(502, "api_error", "gate proxy: upstream " + out.response.body);
    return out;
  }
  out.reply.status = out.response.status;
  out.reply.body = out.response.body; // the client redacted it
  std::string type = header_value(out.response.headers, "content-type");
  if (!type.empty()) out.reply.content_type = type;
  return out;
}

Reply Server::handle(const std::string& method, const std::string& target, const std::string& host,
                     const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body,
                     const std::function<bool()>& client_gone) {
  std::optional<std::string> path = origin_form(target, port_);
  if (!path || !host_allowed(host, port_))
    return error_reply(403, "permission_error",
                       "gate proxy serves only http://127.0.0.1:" + std::to_string(port_) +
                           "; request refused");
  std::optional<Target> t = parse_target(*path);
  if (!t) return error_reply(400, "invalid_request_error", "gate proxy: unusable path " + *path);
  Observation seen;
  Reply r = answer(method, *t, headers, body, seen, client_gone);
  if (observer_ && !t->task.empty()) {
    seen.target = std::move(*t);
    seen.method = method;
    seen.status = r.status;
    seen.request_body = &body;
    seen.reply = &r;
    observer_(seen);
  }
  return r;
}

Reply Server::answer(const std::string& method, const Target& t,
                     const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body,
                     Observation& seen, const std::function<bool()>& client_gone) {
  if (method != "POST" && method != "GET")
    return error_reply(405, "invalid_request_error", "gate proxy: only POST and GET");

  // A GET (models.list(), a retrieve) is keyed by its path alone: the
  // canonical body of a POST is never empty, so the keys cannot meet.
  std::string canonical;
  bool stream = false;
  if (method == "POST") {
    try {
      boost::json::value v = json::parse_strict(body, "request body");
      canonical = json::canonical(v);
      stream = wants_stream(v);
    } catch (const Error& e) {
      return error_reply(400, "invalid_request_error", e.what());
    }
  }
  const int occurrence = next_occurrence(t.scope_path, canonical);
  seen.key = request_key(cfg_.model.provider, t, canonical, occurrence);
  const std::string& key = seen.key;
  const config::CacheMode mode = cfg_.cache.mode;

  replay::Decision d = replay::look_up(&store_, mode, key);
  if (!d.warning.empty()) std::cerr << "gate proxy: " << terminal_safe(d.warning) << "\n";
  if (d.verdict == replay::Verdict::hit) {
    Reply r;
    r.status = d.entry->status;
    r.body = std::move(d.entry->body);
    r.content_type = stream ? "text/event-stream" : "application/json";
    for (const auto& [n, v] : d.entry->headers)
      if (n == "content-type") r.content_type = v;
    r.steps = plan_replay(r.body, d.entry->event_ms, d.entry->latency_ms, timing_);
    seen.cache_hit = true;
    seen.remote = d.remote;
    if (trusted_ != nullptr) seen.trust = replay::vouch(*trusted_, store_, key, d);
    return r;
  }
  if (d.verdict == replay::Verdict::miss) {
    std::string what = "gate proxy: replay-only cache miss for " + t.scope_path + " (occurrence " +
                       std::to_string(occurrence) + "), key " + key;
    std::cerr << terminal_safe(what) << "\n";
    seen.missed = true;
    return error_reply(404, "not_found_error", what);
  }

  Fresh fresh =
      forward(method, t.upstream_path, headers, method == "POST" ? body : std::string(), stream, client_gone);
  if (!replay::records(&store_, mode, fresh.response.status >= 200 && fresh.response.status < 300))
    return std::move(fresh.reply);
  replay::Fresh f;
  f.key = key;
  f.provider = cfg_.model.provider;
  f.path = t.scope_path;
  f.replica = occurrence;
  f.request = canonical;
  f.response = &fresh.response;
  f.event_ms = fresh.clock.ms;
  f.latency_ms = fresh.response.latency_ms;
  try {
    replay::record(store_, f);
  } catch (const Error& err) {
    // An answer the agent acted on but the cache does not hold would make
    // the recording look whole when it is not: the request fails instead.
    seen.record_error = redact(err.what());
    std::cerr << "gate proxy: not recorded: " << terminal_safe(seen.record_error) << "\n";
    return error_reply(500, "api_error",
                       "gate proxy: the answer could not be recorded: " + seen.record_error);
  }
  return std::move(fresh.reply);
}

namespace {

// Headers a client may pass upstream; credentials are the proxy's own.
std::vector<std::pair<std::string, std::string>> client_headers(const http::request<http::string_body>& req) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : req) {
    std::string name(f.name_string());
    for (auto& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == "anthropic-version" || name == "anthropic-beta")
      out.emplace_back(name, std::string(f.value()));
  }
  return out;
}

// Limits on what a client sends: a target or header block over 16 KiB is a
// 431, a body over 64 MiB a 413 (Beast's defaults are 8 KiB and 8 MiB).
constexpr std::uint32_t k_request_header_limit = 16u << 10;
constexpr std::uint64_t k_request_body_limit = 64u << 20;

// True when the client closed its end of `fd`: readable with nothing to
// read is the peer's FIN (data would be a pipelined request). Asked on the
// descriptor by the thread handling the request, which polls it while an
// upstream call runs; the pool's other threads may all be busy, so an
// asynchronous watch could not be relied on to run.
bool hung_up(int fd) {
  char c = 0;
  ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

// One connection: reads a request, answers it, and reads the next while the
// client keeps the connection alive. Reads and writes are asynchronous, so
// an idle connection waits without a thread; only handle() runs on one.
class Session : public std::enable_shared_from_this<Session> {
public:
  Session(tcp::socket sock, Server& server)
      : sock_(std::move(sock)), server_(server), strand_(asio::make_strand(sock_.get_executor())),
        linger_timer_(strand_) {}

  void read() {
    parser_.emplace();
    parser_->header_limit(k_request_header_limit);
    parser_->body_limit(k_request_body_limit);
    http::async_read(sock_, buf_, *parser_,
                     [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                       if (!ec) return self->respond();
                       if (ec == http::error::header_limit)
                         return self->refuse(431, "gate proxy: request target or headers over 16 KiB");
                       if (ec == http::error::body_limit)
                         return self->refuse(413, "gate proxy: request body over 64 MiB");
                     });
  }

private:
  void respond() {
    const auto received = std::chrono::steady_clock::now();
    auto& req = parser_->get();
    Reply r;
    bool keep = req.keep_alive();
    if (req.count(http::field::host) > 1) {
      // Which one counts would be the first reader's guess; the Host check
      // must see the only one.
      r = error_reply(400, "invalid_request_error", "gate proxy: more than one Host header; request refused");
      keep = false;
    } else {
      try {
        r = server_.handle(std::string(req.method_string()), std::string(req.target()),
                           std::string(req[http::field::host]), client_headers(req), req.body(),
                           [fd = sock_.native_handle()] { return hung_up(fd); });
      } catch (const std::exception& e) {
        r = error_reply(500, "api_error", std::string("gate proxy: ") + e.what());
      }
    }
    http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
    res.set(http::field::content_type, r.content_type);
    res.keep_alive(keep);
    res.body() = std::move(r.body);
    res.prepare_payload();
    std::make_shared<PacedWrite<tcp::socket>>(
        sock_, std::move(res), std::move(r.steps), received,
        [self = shared_from_this(), keep](boost::system::error_code ec) {
          if (!ec && keep) return self->read();
          boost::system::error_code ignored;
          self->sock_.shutdown(tcp::socket::shutdown_both, ignored);
        })
        ->run();
  }

  // Answers a request that was not read whole, then reads and drops what
  // the client still sends for a while before closing: closing a socket
  // with unread data sends a reset, which can reach the client before the
  // answer does.
  void refuse(int status, const std::string& message) {
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(status), 11);
    Reply r = error_reply(status, "invalid_request_error", message);
    res->set(http::field::content_type, r.content_type);
    res->keep_alive(false);
    res->body() = std::move(r.body);
    res->prepare_payload();
    http::async_write(sock_, *res,
                      asio::bind_executor(strand_, [self = shared_from_this(),
                                                    res](boost::system::error_code ec, std::size_t) {
                        boost::system::error_code ignored;
                        if (ec) return (void)self->sock_.close(ignored);
                        self->sock_.shutdown(tcp::socket::shutdown_send, ignored);
                        self->drain_buf_.resize(64 * 1024);
                        self->linger_timer_.expires_after(std::chrono::seconds(5));
                        self->linger_timer_.async_wait([self](boost::system::error_code) {
                          boost::system::error_code ignored2;
                          self->sock_.close(ignored2);
                        });
                        self->drain();
                      }));
  }

  void drain() {
    sock_.async_read_some(asio::buffer(drain_buf_),
                          asio::bind_executor(strand_, [self = shared_from_this()](
                                                           boost::system::error_code ec, std::size_t n) {
                            self->drained_ += n;
                            if (!ec && self->drained_ < (k_request_body_limit << 1)) return self->drain();
                            self->linger_timer_.cancel();
                          }));
  }

  tcp::socket sock_;
  Server& server_;
  asio::strand<asio::any_io_executor> strand_; // orders the lingering close's read and timer
  asio::steady_timer linger_timer_;
  boost::beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::vector<char> drain_buf_; // only while lingering: idle connections stay small
  std::uint64_t drained_ = 0;
};

void accept_next(tcp::acceptor& acceptor, Server& server) {
  acceptor.async_accept([&acceptor, &server](boost::system::error_code ec, tcp::socket sock) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (!ec) {
      sock.set_option(tcp::no_delay(true), ec);
      std::make_shared<Session>(std::move(sock), server)->read();
    }
    accept_next(acceptor, server);
  });
}

} // namespace

void Server::start(unsigned short port, int threads) {
  impl_->io = std::make_unique<asio::io_context>();
  impl_->acceptor.emplace(*impl_->io);
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), port);
  boost::system::error_code ec;
  impl_->acceptor->open(ep.protocol(), ec);
  if (!ec) impl_->acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl_->acceptor->bind(ep, ec);
  if (!ec) impl_->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    impl_->acceptor.reset();
    impl_->io.reset();
    throw Error(Exit::cannot_run,
                "gate proxy: cannot bind 127.0.0.1:" + std::to_string(port) + ": " + ec.message());
  }
  port_ = impl_->acceptor->local_endpoint().port();
  threads_ = threads;
  accept_next(*impl_->acceptor, *this);
  for (int i = 0; i < threads; ++i)
    impl_->threads.emplace_back([io = impl_->io.get()] { io->run(); });
}

void Server::stop() {
  if (!impl_->io) return;
  // Requests being handled finish (an upstream call ends at its timeout);
  // then destroying the context drops every connection it still holds,
  // idle keep-alive ones included.
  impl_->io->stop();
  for (auto& t : impl_->threads)
    t.join();
  impl_->threads.clear();
  impl_->acceptor.reset();
  impl_->io.reset();
}

} // namespace gate::proxy

#include <gate/agent/tap.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <set>
#include <sys/socket.h>
#include <thread>

#include <gate/model/api.hpp>
#include <gate/model/stream.hpp>
#include <gate/net/sse.hpp>
#include <gate/proxy/route.hpp>
#include <gate/util/error.hpp>

namespace gate::agent {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

// One answer read as the runner reads a model's, plain JSON or a recorded
// event stream: its tool calls and usage.
model::Reply reply_of(const std::string& provider, const proxy::Reply& r) {
  model::ApiResponse a;
  a.status = r.status;
  a.headers.emplace_back("content-type", r.content_type);
  a.body = r.body;
  if (r.content_type.find("text/event-stream") != std::string::npos) {
    net::SseDecoder decoder;
    model::StreamAssembler assembler(provider, 0);
    for (const auto& e : decoder.feed(r.body))
      assembler.on_event(e.event, e.data, 0);
    assembler.finish(decoder.finish());
    a = model::to_non_streaming(provider, assembler.result(), a);
  }
  return model::parse_response(provider, a);
}

constexpr std::string_view k_miss = "replay-only cache miss for ";

// The key at the end of the proxy's miss message ("..., key <64 hex>").
std::string miss_key(const std::string& body) {
  std::size_t at = body.find(", key ");
  if (at == std::string::npos) return "";
  return body.substr(at + 6, 64);
}

} // namespace

std::string encode_segment(const std::string& s) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                 c == '_' || c == '~' || (c == '.' && s != "." && s != "..");
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(k_hex[c >> 4]);
      out.push_back(k_hex[c & 15]);
    }
  }
  return out;
}

struct Tap::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::thread accept_thread;
  std::atomic<bool> stopping{false};
  std::mutex mutex;
  std::vector<std::thread> connections; // guarded by mutex
  std::set<int> open_sockets;           // guarded by mutex; shut down by stop()
};

Tap::Tap(const config::Config& cfg)
    : provider_(cfg.model.provider), proxy_(cfg), impl_(std::make_unique<Impl>()) {}

Tap::~Tap() { stop(); }

std::string Tap::base_url(const std::string& task_id, int run) const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/t/" + encode_segment(task_id) + "/r/" +
         std::to_string(run);
}

ScopeLog Tap::take(const std::string& task_id, int run) {
  std::lock_guard lock(mutex_);
  const std::string scope = "/t/" + encode_segment(task_id) + "/r/" + std::to_string(run);
  auto it = scopes_.find(scope);
  if (it == scopes_.end()) return {};
  ScopeLog out = std::move(it->second);
  scopes_.erase(it);
  return out;
}

void Tap::note(const std::string& target, const proxy::Reply& reply) {
  std::optional<proxy::Target> t = proxy::parse_target(target);
  if (!t || t->task.empty()) return;
  const std::string scope = "/t/" + t->task + "/r/" + t->run;
  model::Reply answer;
  std::string missing;
  const bool ok = reply.status >= 200 && reply.status < 300;
  if (ok) {
    answer = reply_of(provider_, reply);
  } else if (reply.status == 404 && reply.body.find(k_miss) != std::string::npos) {
    missing = miss_key(reply.body);
  }
  std::lock_guard lock(mutex_);
  ScopeLog& log = scopes_[scope];
  ++log.requests;
  for (auto& c : answer.tool_calls)
    log.tool_calls.push_back({std::move(c.name), std::move(c.arguments_sha256)});
  if (ok && answer.usage) {
    log.prompt_tokens += answer.usage->prompt_tokens;
    log.completion_tokens += answer.usage->completion_tokens;
  } else if (ok) {
    log.usage_known = false;
  }
  if (!missing.empty()) log.missing_keys.push_back(missing);
}

proxy::Reply Tap::handle(const std::string& method, const std::string& target, const std::string& host,
                         const std::vector<std::pair<std::string, std::string>>& headers,
                         const std::string& body) {
  // The Host and target checks are the proxy's, made against this port;
  // a refused request is passed on unchanged so the proxy answers its 403.
  std::optional<std::string> path = proxy::origin_form(target, port_);
  if (!path || !proxy::host_allowed(host, port_)) return proxy_.handle(method, target, host, headers, body);
  proxy::Reply r = proxy_.handle(method, *path, "127.0.0.1", headers, body);
  if (method == "POST") note(*path, r);
  return r;
}

void Tap::start() {
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  boost::system::error_code ec;
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error(Exit::cannot_run, "cannot listen on 127.0.0.1 for the agents' proxy: " + ec.message());
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->accept_thread = std::thread([this] {
    while (!impl_->stopping) {
      auto sock = std::make_shared<tcp::socket>(impl_->io);
      boost::system::error_code aec;
      impl_->acceptor.accept(*sock, aec);
      if (aec) {
        if (impl_->stopping) return;
        continue;
      }
      std::lock_guard lock(impl_->mutex);
      impl_->open_sockets.insert(sock->native_handle());
      if (impl_->stopping) ::shutdown(sock->native_handle(), SHUT_RDWR);
      // A thread per connection: an agent may hold a keep-alive connection
      // idle while it works, which must not starve the others.
      impl_->connections.emplace_back([this, sock] {
        boost::beast::flat_buffer buf;
        boost::system::error_code rec;
        while (!impl_->stopping) {
          http::request_parser<http::string_body> parser;
          parser.body_limit(64u << 20);
          http::read(*sock, buf, parser, rec);
          if (rec) break;
          auto& req = parser.get();
          std::vector<std::pair<std::string, std::string>> headers;
          for (const auto& f : req) {
            std::string name(f.name_string());
            for (auto& c : name)
              c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (name == "anthropic-version" || name == "anthropic-beta")
              headers.emplace_back(name, std::string(f.value()));
          }
          proxy::Reply r;
          try {
            r = handle(std::string(req.method_string()), std::string(req.target()),
                       std::string(req[http::field::host]), headers, req.body());
          } catch (const std::exception& e) {
            r.status = 500;
            r.body = R"({"error":{"type":"api_error","message":"gate agent proxy failed"}})";
          }
          http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
          res.set(http::field::content_type, r.content_type);
          res.keep_alive(req.keep_alive());
          res.body() = std::move(r.body);
          res.prepare_payload();
          http::write(*sock, res, rec);
          if (rec || !res.keep_alive()) break;
        }
        {
          std::lock_guard l(impl_->mutex);
          impl_->open_sockets.erase(sock->native_handle());
        }
        boost::system::error_code ignored;
        sock->shutdown(tcp::socket::shutdown_both, ignored);
        sock->close(ignored);
      });
    }
  });
}

void Tap::stop() {
  if (!impl_->accept_thread.joinable()) return;
  impl_->stopping = true;
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
  impl_->accept_thread.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(impl_->mutex);
    for (int fd : impl_->open_sockets)
      ::shutdown(fd, SHUT_RDWR);
    threads.swap(impl_->connections);
  }
  for (auto& t : threads)
    t.join();
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
}

} // namespace gate::agent

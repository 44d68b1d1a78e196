#include <doctest.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>

#include <gate/model/api.hpp>
#include <gate/net/http_client.hpp>
#include <gate/net/tls.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <tests/support/fake_upstream.hpp>
#include <tests/support/test_certs.hpp>

using gate::model::ApiResponse;
using gate::model::Bucket;
using gate::net::HttpOptions;
using gate::testing::FakeUpstream;
using gate::testing::Pem;
using gate::testing::Script;

namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;

constexpr const char* k_canary = "sk-canary-7f3a9b1c2d4e5f60";
constexpr const char* k_key_env = "GATE_TEST_TLS_KEY";

// One CA and its certificates for the whole test binary: key generation
// is the slow part.
struct Pki {
  Pki() {
    ca = gate::testing::make_test_ca();
    localhost = gate::testing::issue_server_cert(ca, {"localhost"}, {"127.0.0.1"});
    other = gate::testing::issue_server_cert(ca, {"other.example"});
    dir = fs::temp_directory_path() / ("gate-test-tls-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    ca_file = dir / "ca.pem";
    gate::write_file_atomically(ca_file, ca.cert);
  }
  ~Pki() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  Pem ca, localhost, other;
  fs::path dir, ca_file;
};

Pki& pki() {
  static Pki p;
  return p;
}

HttpOptions fast() {
  HttpOptions o;
  o.backoff_base_s = 0.001;
  o.backoff_cap_s = 0.5;
  return o;
}

// The environment clients are made with: the test key, and what `more` adds.
gate::Environment key_env(std::vector<std::pair<std::string, std::string>> more = {}) {
  more.emplace_back(k_key_env, k_canary);
  return gate::environment_of(more);
}

gate::config::ModelConfig model_at(const std::string& base_url) {
  gate::register_secret(k_canary);
  gate::config::ModelConfig m;
  m.name = "fake-model";
  m.api_key_env = k_key_env;
  m.base_url = base_url;
  m.ca_file = pki().ca_file;
  m.timeout_s = 2;
  m.max_retries = 2;
  return m;
}

gate::model::ApiCall call_for(const gate::config::ModelConfig& m, const std::string& question) {
  return {m.provider, gate::model::endpoint_path(m), gate::model::build_request(m, "", {{"user", question}})};
}

bool mentions_canary(const ApiResponse& r) {
  return r.body.find(k_canary) != std::string::npos || gate::contains_secret(r.body);
}

// A hand-driven TLS server on 127.0.0.1 for the faults FakeUpstream does
// not script: each connection gets the handshake, the request head is read,
// then `behave` writes what it wants, on a thread per connection.
class RawTlsServer {
public:
  using Behaviour = std::function<void(ssl::stream<tcp::socket>&, const std::atomic<bool>& stop)>;

  explicit RawTlsServer(Behaviour behave) : behave_(std::move(behave)), ctx_(ssl::context::tls_server) {
    ctx_.use_certificate_chain(asio::buffer(pki().localhost.cert));
    ctx_.use_private_key(asio::buffer(pki().localhost.key), ssl::context::pem);
    acceptor_.open(tcp::v4());
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { serve(); });
  }
  ~RawTlsServer() {
    stop_ = true;
    // Wakes the blocking accept so the loop sees stop_.
    boost::system::error_code ec;
    tcp::socket wake(ioc_);
    wake.connect({asio::ip::make_address("127.0.0.1"), port_}, ec);
    thread_.join();
    for (auto& t : sessions_)
      t.join();
  }
  std::string base_url() const { return "https://localhost:" + std::to_string(port_) + "/v1"; }
  int connections() const { return connections_; }

private:
  void serve() {
    while (!stop_) {
      auto s = std::make_shared<ssl::stream<tcp::socket>>(ioc_, ctx_);
      boost::system::error_code ec;
      acceptor_.accept(s->lowest_layer(), ec);
      if (ec || stop_) return;
      ++connections_;
      sessions_.emplace_back([this, s] { session(*s); });
    }
  }

  void session(ssl::stream<tcp::socket>& s) {
    boost::system::error_code ec;
    s.handshake(ssl::stream_base::server, ec);
    std::string head;
    if (!ec) asio::read_until(s, asio::dynamic_buffer(head), "\r\n\r\n", ec);
    if (ec) return;
    try {
      behave_(s, stop_);
    } catch (const std::exception&) {
      // the client went away
    }
    s.lowest_layer().close(ec); // no close_notify
  }

  Behaviour behave_;
  asio::io_context ioc_;
  ssl::context ctx_;
  tcp::acceptor acceptor_{ioc_};
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
  std::vector<std::thread> sessions_; // joined after thread_, which adds to it
};

// Sleeps up to `ms` in small steps, returning early when the test ends.
void nap(const std::atomic<bool>& stop, int ms) {
  for (int i = 0; i < ms / 10 && !stop; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

const std::string k_ok_body = R"({"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,)"
                              R"("message":{"role":"assistant","content":"fine"},"finish_reason":"stop"}],)"
                              R"("usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}})";

std::string ok_head(std::size_t length) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(length) +
         "\r\n\r\n";
}

} // namespace

TEST_CASE("an https call: verified certificate, SNI virtual host, keep-alive") {
  FakeUpstream server(Script{});
  // A virtual host that needs SNI "localhost": the bare name, no port.
  server.start_tls(0, 2, pki().localhost.cert, pki().localhost.key, "localhost");
  auto m = model_at(server.base_url());
  auto client = gate::net::make_http_client(m, key_env(), fast());
  for (int i = 0; i < 3; ++i) {
    int attempts = 0;
    ApiResponse r = client->send(call_for(m, "hello tls"), attempts);
    CHECK(attempts == 1);
    CHECK(r.status == 200);
    CHECK(gate::model::parse_response("openai", r).text == "echo: hello tls");
  }
  CHECK(server.requests() == 3);
  CHECK(server.connections() == 1);
  CHECK(server.log()[0].headers["authorization"] == std::string("Bearer ") + k_canary);
}

TEST_CASE("a server that requires another SNI name refuses the handshake; not retried") {
  FakeUpstream server(Script{});
  server.start_tls(0, 1, pki().localhost.cert, pki().localhost.key, "api.other.example");
  auto m = model_at(server.base_url());
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 1);
  CHECK(r.status == 0);
  CHECK(r.body.rfind("tls: handshake with localhost failed", 0) == 0);
  CHECK(server.requests() == 0);
}

TEST_CASE("a certificate for another host is a TLS error, not retried") {
  FakeUpstream server(Script{});
  server.start_tls(0, 1, pki().other.cert, pki().other.key);
  auto m = model_at(server.base_url());
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 1);
  CHECK(r.status == 0);
  CHECK(r.body == "tls: certificate does not match host localhost");
  CHECK(server.connections() == 1);
  CHECK(server.requests() == 0);
  CHECK_FALSE(mentions_canary(r));
  // The runner stops on the connection bucket (exit 3).
  CHECK(gate::model::parse_response("openai", r).bucket == Bucket::connection);
}

TEST_CASE("a certificate from an untrusted CA is refused; there is no fallback") {
  FakeUpstream server(Script{});
  server.start_tls(0, 1, pki().localhost.cert, pki().localhost.key);
  auto m = model_at(server.base_url());
  m.ca_file.clear(); // the system store only: it does not know the test CA
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 1);
  CHECK(r.status == 0);
  CHECK(r.body.rfind("tls: certificate for localhost not trusted: ", 0) == 0);
  CHECK(server.requests() == 0);
}

TEST_CASE("a trust setting naming a missing or empty bundle cannot run") {
  auto m = model_at("https://localhost:9/v1");
  fs::path empty = pki().dir / "empty.pem";
  gate::write_file_atomically(empty, "no certificates here\n");
  fs::path missing = pki().dir / "missing.pem";
  auto expect = [&](const std::string& text, const gate::Environment& env) {
    try {
      gate::net::make_http_client(m, env, fast());
      FAIL("no error");
    } catch (const gate::Error& e) {
      CHECK(e.code() == gate::Exit::cannot_run);
      CHECK(std::string(e.what()) == text);
    }
  };
  expect("SSL_CERT_FILE names " + missing.string() +
             ", which is not a readable file; TLS needs a trust store",
         key_env({{"SSL_CERT_FILE", missing.string()}}));
  expect("SSL_CERT_FILE names " + empty.string() + ", which holds no PEM certificate",
         key_env({{"SSL_CERT_FILE", empty.string()}}));
  expect("SSL_CERT_DIR names " + missing.string() + ", which is not a directory; TLS needs a trust store",
         key_env({{"SSL_CERT_DIR", missing.string()}}));
  m.ca_file = empty;
  expect("model.ca_file names " + empty.string() + ", which holds no PEM certificate", key_env());
}

TEST_CASE("SSL_CERT_FILE is honoured as the trust store") {
  FakeUpstream server(Script{});
  server.start_tls(0, 1, pki().localhost.cert, pki().localhost.key);
  auto m = model_at(server.base_url());
  m.ca_file.clear();
  auto client = gate::net::make_http_client(m, key_env({{"SSL_CERT_FILE", pki().ca_file.string()}}), fast());
  int attempts = 0;
  CHECK(client->send(call_for(m, "hi"), attempts).status == 200);
}

TEST_CASE("a server that accepts and never answers hits the idle deadline, and is retried") {
  RawTlsServer server([](auto&, const std::atomic<bool>& stop) { nap(stop, 1500); });
  auto m = model_at(server.base_url());
  m.max_retries = 1;
  HttpOptions o = fast();
  o.read_idle_timeout_s = 0.15;
  auto client = gate::net::make_http_client(m, key_env(), o);
  int attempts = 0;
  auto start = std::chrono::steady_clock::now();
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1200));
  CHECK(attempts == 2);
  CHECK(r.status == 0);
  CHECK(r.body == "timeout: no data from localhost:" + m.base_url.substr(18, 5) + " for 0.15 s");
  CHECK(gate::model::parse_response("openai", r).bucket == Bucket::timeout);
}

TEST_CASE("a server that trickles a byte at a time hits the total deadline") {
  RawTlsServer server([](ssl::stream<tcp::socket>& s, const std::atomic<bool>& stop) {
    std::string head = ok_head(k_ok_body.size()) + k_ok_body;
    for (std::size_t i = 0; i < head.size() && !stop; ++i) {
      asio::write(s, asio::buffer(&head[i], 1));
      nap(stop, 50);
    }
  });
  auto m = model_at(server.base_url());
  m.timeout_s = 0.4;
  m.max_retries = 0;
  HttpOptions o = fast();
  o.read_idle_timeout_s = 0.3; // each byte comes well within it
  auto client = gate::net::make_http_client(m, key_env(), o);
  int attempts = 0;
  auto start = std::chrono::steady_clock::now();
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(900));
  CHECK(attempts == 1);
  CAPTURE(r.body);
  CHECK(r.body.rfind("timeout: no complete response from localhost:", 0) == 0);
  CHECK(r.body.find("within 0.4 s") != std::string::npos);
}

TEST_CASE("a close without close_notify after a complete body is a success") {
  RawTlsServer server([](ssl::stream<tcp::socket>& s, const std::atomic<bool>&) {
    std::string res = ok_head(k_ok_body.size()) + k_ok_body;
    asio::write(s, asio::buffer(res));
  });
  auto m = model_at(server.base_url());
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 1);
  CHECK(r.status == 200);
  CHECK(gate::model::parse_response("openai", r).text == "fine");
  // The pooled connection is dead now; the next call replaces it quietly.
  r = client->send(call_for(m, "again"), attempts);
  CHECK(r.status == 200);
  CHECK(attempts == 1);
}

TEST_CASE("the same close mid-body is a retryable network error, never a short body") {
  RawTlsServer server([](ssl::stream<tcp::socket>& s, const std::atomic<bool>&) {
    std::string res = ok_head(k_ok_body.size()) + k_ok_body.substr(0, k_ok_body.size() / 2);
    asio::write(s, asio::buffer(res));
  });
  auto m = model_at(server.base_url());
  m.max_retries = 2;
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 3);
  CHECK(server.connections() == 3);
  CHECK(r.status == 0);
  CHECK(r.body.rfind("connection: localhost:", 0) == 0);
  CHECK(r.body.find("closed the connection mid-response") != std::string::npos);
}

TEST_CASE("a 200 MiB streamed response stops at the 64 MiB limit and is not retried") {
  std::atomic<std::uint64_t> sent{0};
  RawTlsServer server([&sent](ssl::stream<tcp::socket>& s, const std::atomic<bool>& stop) {
    asio::write(s, asio::buffer(std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")));
    std::string chunk = "100000\r\n" + std::string(1 << 20, 'x') + "\r\n"; // 0x100000 = 1 MiB
    for (int i = 0; i < 200 && !stop; ++i) {
      asio::write(s, asio::buffer(chunk));
      sent += 1 << 20;
    }
  });
  auto m = model_at(server.base_url());
  m.timeout_s = 5;
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 1);
  CHECK(r.status == 0);
  CHECK(r.body == "response exceeds limit: body over 64 MiB from localhost:" + m.base_url.substr(18, 5));
  // The client closed once over the limit: the server could not push all
  // 200 MiB (socket buffers hold a few MiB at most).
  CHECK(sent < (100ull << 20));
}

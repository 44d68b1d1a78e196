// Faults of RELIABILITY.md 19, 22, 25 and 30 through the real client.
#include <doctest.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include <gate/model/api.hpp>
#include <gate/net/http_client.hpp>
#include <gate/util/atomic_file.hpp>
#include <tests/support/fake_upstream.hpp>
#include <tests/support/test_certs.hpp>

using gate::model::ApiResponse;
using gate::model::Bucket;
using gate::testing::FakeUpstream;
using gate::testing::Fault;
using gate::testing::Script;

namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;

constexpr const char* k_key_env = "GATE_TEST_FAULTS_KEY";
constexpr const char* k_key = "sk-faults-canary-271828";

gate::config::ModelConfig model_at(const std::string& base_url) {
  gate::config::ModelConfig m;
  m.name = "fake-model";
  m.api_key_env = k_key_env;
  m.base_url = base_url;
  m.timeout_s = 5;
  m.max_retries = 3;
  return m;
}

gate::Environment key_env() { return gate::environment_of({{k_key_env, k_key}}); }

gate::net::HttpOptions fast() {
  gate::net::HttpOptions o;
  o.backoff_base_s = 0.001;
  o.backoff_cap_s = 0.5;
  return o;
}

gate::model::ApiCall call_for(const gate::config::ModelConfig& m, const std::string& q) {
  return {m.provider, gate::model::endpoint_path(m), gate::model::build_request(m, "", {{"user", q}})};
}

// One call to a fake upstream that answers every request with `status`
// and `body`: what came back, in how many attempts, and how many requests
// the server saw.
struct FaultCall {
  ApiResponse response;
  int attempts = 0;
  std::uint64_t requests = 0;
};

FaultCall call_against(int status, const std::string& body) {
  Fault f;
  f.status = status;
  f.times = 10;
  f.body = body;
  Script s;
  s.faults = {f};
  FakeUpstream server(s);
  server.start();
  auto m = model_at(server.base_url());
  auto client = gate::net::make_http_client(m, key_env(), fast());
  FaultCall out;
  out.response = client->send(call_for(m, "hello"), out.attempts);
  out.requests = server.requests();
  return out;
}

// A CONNECT proxy on 127.0.0.1 that tunnels every request to `target_port`
// on 127.0.0.1 whatever host it names, and keeps each request head it got.
class TunnelProxy {
public:
  explicit TunnelProxy(unsigned short target_port) : target_port_(target_port) {
    acceptor_.open(tcp::v4());
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    thread_ = std::thread([this] { serve(); });
  }
  ~TunnelProxy() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket wake(ioc_);
    wake.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
    // Wakes the pipes' blocking reads: the client's pooled connection
    // outlives this proxy.
    for (auto& sock : sockets_)
      sock->shutdown(tcp::socket::shutdown_both, ec);
    for (auto& t : pipes_)
      t.join();
  }
  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  std::vector<std::string> heads() {
    std::lock_guard lock(mutex_);
    return heads_;
  }

private:
  void serve() {
    while (!stop_) {
      auto client = std::make_shared<tcp::socket>(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(*client, ec);
      if (ec || stop_) return;
      std::string head;
      asio::read_until(*client, asio::dynamic_buffer(head), "\r\n\r\n", ec);
      if (ec) continue;
      {
        std::lock_guard lock(mutex_);
        heads_.push_back(head);
      }
      auto upstream = std::make_shared<tcp::socket>(ioc_);
      upstream->connect({asio::ip::make_address("127.0.0.1"), target_port_}, ec);
      if (ec) continue;
      asio::write(*client, asio::buffer(std::string("HTTP/1.1 200 Connection established\r\n\r\n")), ec);
      // Bytes after the head (none: the client waits for the 200) would go first.
      auto pipe = [](std::shared_ptr<tcp::socket> from, std::shared_ptr<tcp::socket> to) {
        char buf[16384];
        boost::system::error_code e;
        for (;;) {
          std::size_t n = from->read_some(asio::buffer(buf), e);
          if (e) break;
          asio::write(*to, asio::buffer(buf, n), e);
          if (e) break;
        }
        to->shutdown(tcp::socket::shutdown_send, e);
      };
      sockets_.push_back(client);
      sockets_.push_back(upstream);
      pipes_.emplace_back(pipe, client, upstream);
      pipes_.emplace_back(pipe, upstream, client);
    }
  }

  unsigned short target_port_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_{ioc_};
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::thread> pipes_;
  std::vector<std::shared_ptr<tcp::socket>> sockets_;
  std::mutex mutex_;
  std::vector<std::string> heads_;
};

} // namespace

TEST_CASE("rel-22: HTTPS through a CONNECT proxy works; Proxy-Authorization reaches the proxy only") {
  auto ca = gate::testing::make_test_ca();
  // The origin's name is known to the proxy only: the client never resolves it.
  auto cert = gate::testing::issue_server_cert(ca, {"upstream.invalid"});
  fs::path dir = fs::temp_directory_path() / ("gate-test-faults-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  gate::write_file_atomically(dir / "ca.pem", ca.cert);
  FakeUpstream server(Script{});
  server.start_tls(0, 2, cert.cert, cert.key);
  TunnelProxy proxy(server.port());

  auto m = model_at("https://upstream.invalid:" + std::to_string(server.port()) + "/v1");
  m.ca_file = dir / "ca.pem";
  const gate::Environment env = gate::environment_of(
      {{k_key_env, k_key},
       {"HTTPS_PROXY", "http://carol:tunnel-secret@127.0.0.1:" + std::to_string(proxy.port())}});
  auto client = gate::net::make_http_client(m, env, fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "through the tunnel"), attempts);
  ApiResponse again = client->send(call_for(m, "and again"), attempts);
  CHECK(r.status == 200);
  CHECK(gate::model::parse_response("openai", r).text == "echo: through the tunnel");
  CHECK(again.status == 200);
  auto heads = proxy.heads();
  REQUIRE(heads.size() == 1); // the tunnel is kept alive for the second call
  CHECK(heads[0].rfind("CONNECT upstream.invalid:" + std::to_string(server.port()) + " HTTP/1.1\r\n", 0) ==
        0);
  CHECK(heads[0].find("Proxy-Authorization: Basic Y2Fyb2w6dHVubmVsLXNlY3JldA==") != std::string::npos);
  CHECK(heads[0].find(k_key) == std::string::npos); // the key travels inside TLS only
  auto log = server.log();
  REQUIRE(log.size() == 2);
  CHECK(log[0].headers.count("proxy-authorization") == 0);
  CHECK(log[0].headers["host"] == "upstream.invalid:" + std::to_string(server.port()));
  CHECK(log[0].headers["authorization"] == std::string("Bearer ") + k_key);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("rel-19: a server whose accept queue is full hits the connect deadline, then the retries") {
  // A listener that never accepts, with its backlog filled: further SYNs
  // are dropped, so a connect hangs until the client gives up.
  asio::io_context ioc;
  tcp::acceptor full(ioc);
  full.open(tcp::v4());
  full.bind({asio::ip::make_address("127.0.0.1"), 0});
  full.listen(0);
  // Non-blocking connects by hand (asio's would wait for each one).
  std::vector<int> fillers;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(full.local_endpoint().port());
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < 8; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    REQUIRE(fd >= 0);
    (void)::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    fillers.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto m = model_at("http://127.0.0.1:" + std::to_string(full.local_endpoint().port()) + "/v1");
  m.max_retries = 1;
  auto o = fast();
  o.connect_timeout_s = 0.3;
  auto client = gate::net::make_http_client(m, key_env(), o);
  int attempts = 0;
  auto start = std::chrono::steady_clock::now();
  ApiResponse r = client->send(call_for(m, "anyone there"), attempts);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(attempts == 2);
  CHECK(r.status == 0);
  CHECK(r.body == "timeout: connecting to 127.0.0.1:" + std::to_string(full.local_endpoint().port()) +
                      " took too long");
  CHECK(gate::model::parse_response("openai", r).bucket == Bucket::timeout);
  CHECK(took >= 0.6); // two attempts of 0.3 s each
  CHECK(took < 4.0);  // far below the 5 s call deadline times two
  for (int fd : fillers)
    ::close(fd);
}

TEST_CASE("rel-25: a spent quota (429 insufficient_quota) is not retried and says so in one line") {
  FaultCall c = call_against(
      429,
      R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.",)"
      R"("type":"insufficient_quota","code":"insufficient_quota"}})");
  const ApiResponse& r = c.response;
  CHECK(c.attempts == 1);
  CHECK(c.requests == 1);
  auto reply = gate::model::parse_response("openai", r);
  // Its own bucket: waiting does not bring a quota back (gate run stops at once).
  CHECK(reply.bucket == Bucket::quota);
  CHECK(reply.error.find("exceeded your current quota") != std::string::npos);
  CHECK(reply.error.find('\n') == std::string::npos);
  REQUIRE(r.attempt_log.size() == 1);
  CHECK(r.attempt_log[0].bucket == "quota");
}

TEST_CASE("rel-30: context overflow in any of its forms is context_length and not retried") {
  const char* bodies[] = {
      R"({"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}})",
      R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}})",
      R"({"error":{"message":"Input exceeds the model's context window","type":"invalid_request_error","code":null}})"};
  for (const char* body : bodies) {
    CAPTURE(body);
    FaultCall c = call_against(400, body);
    CHECK(c.attempts == 1);
    CHECK(c.requests == 1);
    CHECK(gate::model::parse_response("openai", c.response).bucket == Bucket::context_length);
  }
}

TEST_CASE("model.requests_per_minute paces the calls of every worker together") {
  FakeUpstream server(Script{});
  server.start();
  auto m = model_at(server.base_url());
  // 1,200/min is 20 a second with a burst of one second's refill (20):
  // of 30 calls from 3 threads, the last 10 wait 50 ms each in turn, so
  // the whole takes at least 10 * 0.05 = 0.5 s (less the refill during the
  // first burst, a few ms).
  m.requests_per_minute = 1200;
  auto client = gate::net::make_http_client(m, key_env(), fast());
  client->expect_workers(3);
  std::atomic<int> ok{0};
  std::atomic<int> waited{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        int attempts = 0;
        ApiResponse r = client->send(call_for(m, "paced"), attempts);
        if (r.status == 200) ++ok;
        if (!r.attempt_log.empty() && r.attempt_log[0].wait_ms > 10) ++waited;
      }
    });
  for (auto& t : threads)
    t.join();
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(ok == 30);
  CHECK(took >= 0.45);
  // The waits are recorded with the attempts that had them.
  CHECK(waited >= 5);
}

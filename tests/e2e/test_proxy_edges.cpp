// End-to-end: `gate proxy` at its edges (issue 21 item 6): request
// smuggling through two Host headers, encoded dot segments, oversized
// targets and bodies, clients that hang up mid-call, and body-less GETs.
#include <doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "sdk/proxy_child.hpp"
#include <tests/support/fake_upstream.hpp>

namespace fs = std::filesystem;
namespace asio = boost::asio;
namespace http = boost::beast::http;
using namespace gate::e2e;

namespace {

constexpr const char* k_key = "sk-edges-canary-3c1d5e7f9a0b";
const std::string k_chat = R"({"model":"m","messages":[{"role":"user","content":"say hi"}]})";

struct Proxy {
  gate::testing::FakeUpstream upstream;
  TempDir tmp;
  std::map<std::string, std::string> env{{"GATE_PROXY_TEST_KEY", k_key}};
  std::string out;
  unsigned short port = 0;
  Child child;

  Proxy(const gate::testing::Script& script, const std::string& mode, std::vector<std::string> extra = {})
      : upstream((gate::testing::clear_network_env(), script)) {
    upstream.start(0, 4);
    copy_demo(tmp.path());
    write_config(tmp.path(), upstream.base_url());
    child = start_proxy(tmp.path(), mode, env, out, port, extra);
    REQUIRE(port != 0);
  }
  ~Proxy() {
    if (child.pid > 0) stop(child);
  }
  std::string host() const { return "127.0.0.1:" + std::to_string(port); }
};

struct Answer {
  int status = 0; // 0: no HTTP answer (reset, closed)
  std::string body;
  std::string error;
};

// Sends `head` (request line and headers, CRLF-terminated, without the
// blank line) and `body` as given, then reads one response.
Answer raw_exchange(unsigned short port, const std::string& head, const std::string& body = "") {
  asio::io_context io;
  asio::ip::tcp::socket sock(io);
  sock.connect({asio::ip::make_address("127.0.0.1"), port});
  Answer a;
  boost::system::error_code ec;
  asio::write(sock, asio::buffer(head + "\r\n"), ec);
  if (!ec && !body.empty()) asio::write(sock, asio::buffer(body), ec);
  if (ec) a.error = "write: " + ec.message();
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(sock, buf, res, ec);
  if (ec) {
    a.error += " read: " + ec.message();
    return a;
  }
  a.status = static_cast<int>(res.result_int());
  a.body = res.body();
  return a;
}

std::string post_head(const Proxy& p, const std::string& target, std::size_t length) {
  return "POST " + target + " HTTP/1.1\r\nHost: " + p.host() +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(length) + "\r\n";
}

std::string get_head(const Proxy& p, const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: " + p.host() + "\r\n";
}

} // namespace

TEST_CASE("rel-07: a request with two Host headers is a 400 and causes no upstream call") {
  Proxy p(gate::testing::Script{}, "record");
  const std::string head = "POST /t/a/r/0/chat/completions HTTP/1.1\r\nHost: " + p.host() +
                           "\r\nHost: api.openai.com\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(k_chat.size()) + "\r\n";
  Answer a = raw_exchange(p.port, head, k_chat);
  INFO(a.error);
  CHECK(a.status == 400);
  CHECK(a.body.find("more than one Host header") != std::string::npos);
  CHECK(p.upstream.requests() == 0);
  // One Host is still fine.
  CHECK(raw_exchange(p.port, post_head(p, "/t/a/r/0/chat/completions", k_chat.size()), k_chat).status == 200);
  CHECK(p.upstream.requests() == 1);
}

TEST_CASE("rel-07: percent-encoded dot segments are refused before the upstream sees them") {
  Proxy p(gate::testing::Script{}, "record");
  for (const char* target :
       {"/t/a/r/0/%2e%2e/%2e%2e/%2e%2e/admin/chat/completions", "/%2E%2E/v2/chat/completions",
        "/t/a/r/0/.%2e/chat/completions", "/t/a/r/0/..%2fchat/completions", "/t/a/r/0/%252e%252e/x",
        "/t/a/r/0/chat%5c..%5c..%5cx"}) {
    CAPTURE(target);
    Answer a = raw_exchange(p.port, post_head(p, target, k_chat.size()), k_chat);
    CHECK(a.status == 400);
  }
  CHECK(p.upstream.requests() == 0);
  // An encoded letter is the same path, forwarded below the base URL.
  CHECK(raw_exchange(p.port, post_head(p, "/t/a/r/0/chat/%63ompletions", k_chat.size()), k_chat).status ==
        200);
  REQUIRE(p.upstream.requests() == 1);
  CHECK(p.upstream.log().at(0).target == "/v1/chat/completions");
}

TEST_CASE("a 20 KB request target is a 431 and a 65 MiB body a 413, not a connection reset") {
  Proxy p(gate::testing::Script{}, "record");
  Answer long_target = raw_exchange(p.port, get_head(p, "/t/a/r/0/" + std::string(20 * 1024, 'x')));
  INFO(long_target.error);
  CHECK(long_target.status == 431);

  const std::string big(65u << 20, ' ');
  Answer big_body = raw_exchange(p.port, post_head(p, "/t/a/r/0/chat/completions", big.size()), big);
  INFO(big_body.error);
  CHECK(big_body.status == 413);
  CHECK(p.upstream.requests() == 0);
  // The proxy still serves.
  CHECK(raw_exchange(p.port, post_head(p, "/t/a/r/0/chat/completions", k_chat.size()), k_chat).status == 200);
}

TEST_CASE("clients that hang up while their call is recorded cancel the upstream call and free the threads") {
  gate::testing::Script slow;
  slow.latency_ms = 1500;
  Proxy p(slow, "record", {"--threads", "2"});
  // 20 clients send a call that takes the upstream 1.5 s and leave after
  // 100 ms. Were their calls kept, two threads would need 15 s for them.
  std::vector<std::thread> leavers;
  for (int i = 0; i < 20; ++i)
    leavers.emplace_back([&p, i] {
      asio::io_context io;
      asio::ip::tcp::socket sock(io);
      sock.connect({asio::ip::make_address("127.0.0.1"), p.port});
      const std::string body =
          R"({"model":"m","messages":[{"role":"user","content":"leaver )" + std::to_string(i) + R"("}]})";
      asio::write(sock, asio::buffer(post_head(p, "/t/a/r/0/chat/completions", body.size()) + "\r\n" + body));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    });
  for (auto& t : leavers)
    t.join();
  const auto start = std::chrono::steady_clock::now();
  Answer a = raw_exchange(p.port, post_head(p, "/t/a/r/0/chat/completions", k_chat.size()), k_chat);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(a.status == 200);
  CAPTURE(took);
  CHECK(took < 4.5); // its own 1.5 s, plus at most one leaver's call that had not been cancelled yet
  // Nothing of the abandoned calls was recorded: one entry, the answered call's.
  std::size_t entries = 0;
  for (const auto& f : files_below(p.tmp.path() / "proxy-cache"))
    entries += f.extension() == ".entry" ? 1 : 0;
  CHECK(entries == 1);
}

TEST_CASE("GET .../models is recorded and replayed like any call, so models.list() works in replay-only") {
  Proxy p(gate::testing::Script{}, "record");
  Answer scoped = raw_exchange(p.port, get_head(p, "/t/a/r/0/models"));
  Answer session = raw_exchange(p.port, get_head(p, "/models"));
  CHECK(scoped.status == 200);
  CHECK(session.status == 200);
  CHECK(scoped.body.find("\"data\"") != std::string::npos);
  CHECK(p.upstream.requests() == 2);

  stop(p.child);
  p.upstream.stop();
  p.out.clear(); // read_port looks for the new "listening on" line
  p.child = start_proxy(p.tmp.path(), "replay-only", p.env, p.out, p.port);
  REQUIRE(p.port != 0);
  Answer scoped_again = raw_exchange(p.port, get_head(p, "/t/a/r/0/models"));
  CHECK(scoped_again.status == 200);
  CHECK(scoped_again.body == scoped.body);
  Answer session_again = raw_exchange(p.port, get_head(p, "/models"));
  CHECK(session_again.status == 200);
  CHECK(session_again.body == session.body);
  // A GET that was never recorded is a replay-only miss like a POST.
  Answer other = raw_exchange(p.port, get_head(p, "/t/b/r/0/models"));
  CHECK(other.status == 404);
  CHECK(other.body.find("replay-only cache miss") != std::string::npos);
}

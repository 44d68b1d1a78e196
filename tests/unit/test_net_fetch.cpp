#include <doctest.h>

#include <arpa/inet.h>
#include <cstdlib>
#include <filesystem>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include <gate/net/fetch.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <tests/support/fake_upstream.hpp>
#include <tests/support/test_certs.hpp>

using gate::net::fetch;
using gate::net::FetchRequest;
using gate::testing::FakeUpstream;
using gate::testing::Script;

namespace {

namespace fs = std::filesystem;

std::string origin(const FakeUpstream& s) { return "http://127.0.0.1:" + std::to_string(s.port()); }

std::string header(const gate::model::ApiResponse& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

} // namespace

TEST_CASE("fetch: a GET with a query and custom headers") {
  FakeUpstream server(Script{});
  server.start();
  FetchRequest r;
  r.url = origin(server) + "/v1/models?per_page=2&page=1";
  r.headers = {{"accept", "application/vnd.github+json"}, {"x-github-api-version", "2022-11-28"}};
  auto res = fetch(r, gate::Environment{});
  CHECK(res.status == 200);
  CHECK(res.body.find("\"fake-model\"") != std::string::npos);
  CHECK(header(res, "content-type").find("json") != std::string::npos);
  CHECK(res.latency_ms > 0);
  auto log = server.log();
  REQUIRE(log.size() == 1);
  CHECK(log[0].method == "GET");
  CHECK(log[0].target == "/v1/models?per_page=2&page=1");
  CHECK(log[0].headers["accept"] == "application/vnd.github+json");
  CHECK(log[0].headers["x-github-api-version"] == "2022-11-28");
  CHECK(log[0].headers["host"] == "127.0.0.1:" + std::to_string(server.port()));
  CHECK(log[0].body.empty());
}

TEST_CASE("fetch: POST and PATCH carry their body; a 404 comes back as is, once") {
  FakeUpstream server(Script{});
  server.start();
  FetchRequest post;
  post.method = "POST";
  post.url = origin(server) + "/v1/chat/completions";
  post.headers = {{"content-type", "application/json"}};
  post.body = R"({"model":"m","messages":[{"role":"user","content":"hello there"}]})";
  auto res = fetch(post, gate::Environment{});
  CHECK(res.status == 200);
  CHECK(res.body.find("echo: hello there") != std::string::npos);

  FetchRequest patch = post;
  patch.method = "PATCH";
  patch.body = R"({"body":"updated comment"})";
  res = fetch(patch, gate::Environment{});
  CHECK(res.status == 405); // the fake answers only POST there

  FetchRequest missing;
  missing.url = origin(server) + "/repos/o/r/issues/comments/7";
  res = fetch(missing, gate::Environment{});
  CHECK(res.status == 404);
  CHECK(res.body.find("no route for /repos/o/r/issues/comments/7") != std::string::npos);

  auto log = server.log();
  REQUIRE(log.size() == 3); // no retry of the 404 or 405
  CHECK(log[0].method == "POST");
  CHECK(log[0].body == post.body);
  CHECK(log[0].headers["content-length"] == std::to_string(post.body.size()));
  CHECK(log[1].method == "PATCH");
  CHECK(log[1].body == R"({"body":"updated comment"})");
  CHECK(log[2].method == "GET");
  // One thread, one origin: the keep-alive pool served all three.
  CHECK(server.connections() == 1);
}

TEST_CASE("fetch: https:// to a plain-http server says so, naming host:port and the fix") {
  // A plain HTTP server answers the ClientHello with a 400, as any does.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  std::thread plain([listener] {
    const int c = ::accept(listener, nullptr, nullptr);
    if (c < 0) return;
    char buf[512];
    (void)::read(c, buf, sizeof buf);
    const std::string answer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)::write(c, answer.data(), answer.size());
    ::close(c);
  });
  FetchRequest r;
  r.url = "https://127.0.0.1:" + port + "/v1/models";
  auto res = fetch(r, gate::Environment{});
  plain.join();
  ::close(listener);
  CHECK(res.status == 0);
  CHECK(res.body == "tls: the server at 127.0.0.1:" + port +
                        " answered plain HTTP to a TLS handshake: use http:// (and allow it with "
                        "GATE_ALLOW_HTTP=127.0.0.1 unless it is loopback)");
}

TEST_CASE("fetch: https verified against ca_file; untrusted is a tls error, not an HTTP answer") {
  auto ca = gate::testing::make_test_ca();
  auto cert = gate::testing::issue_server_cert(ca, {"localhost"}, {"127.0.0.1"});
  fs::path dir = fs::temp_directory_path() / ("gate-test-fetch-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  gate::write_file_atomically(dir / "ca.pem", ca.cert);
  FakeUpstream server(Script{});
  server.start_tls(0, 2, cert.cert, cert.key);
  FetchRequest r;
  r.url = "https://localhost:" + std::to_string(server.port()) + "/v1/models";
  r.ca_file = (dir / "ca.pem").string();
  auto res = fetch(r, gate::Environment{});
  CHECK(res.status == 200);
  CHECK(res.body.find("fake-model") != std::string::npos);

  auto other_ca = gate::testing::make_test_ca("another CA");
  gate::write_file_atomically(dir / "other.pem", other_ca.cert);
  r.ca_file = (dir / "other.pem").string();
  res = fetch(r, gate::Environment{});
  CHECK(res.status == 0);
  CHECK(res.body.rfind("tls: ", 0) == 0);
  CHECK(server.requests() == 1);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST_CASE("fetch: no answer is status 0 with the reason; bad requests are refused before sending") {
  FakeUpstream server(Script{});
  server.start();
  unsigned short port = server.port();
  server.stop();
  FetchRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(port) + "/x";
  r.timeout_s = 2;
  auto res = fetch(r, gate::Environment{});
  CHECK(res.status == 0);
  CHECK(res.body.rfind("connection: cannot connect to 127.0.0.1:", 0) == 0);

  r.url = "http://api.example.com/x";
  try {
    fetch(r, gate::Environment{});
    FAIL("plain http to a remote host was allowed");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::cannot_run);
    CHECK(std::string(e.what()).find("would send the request in clear text") != std::string::npos);
  }
  for (const char* bad : {"ftp://h/x", "http://127.0.0.1/a b", "http://127.0.0.1/x#frag", "no-scheme"}) {
    CAPTURE(bad);
    r.url = bad;
    CHECK_THROWS_AS(fetch(r, gate::Environment{}), gate::Error);
  }
  r.url = "http://127.0.0.1:1/x";
  r.method = "BREW";
  CHECK_THROWS_AS(fetch(r, gate::Environment{}), gate::Error);
  r.method = "GET";
  r.headers = {{"x-evil", "a\r\nInjected: 1"}};
  CHECK_THROWS_AS(fetch(r, gate::Environment{}), gate::Error);
}

TEST_CASE("fetch: a registered token echoed back is redacted") {
  // Registered for the rest of the process, and its last 8 characters are
  // redacted too: a tail that no other test's text contains.
  const std::string token = "ghp_canaryFetchToken_qzvxkwyr";
  gate::register_secret(token);
  gate::testing::Fault echo;
  echo.status = 401;
  echo.body = R"({"message":"Bad credentials for )" + token + R"("})";
  echo.headers = {{"x-echo", token}};
  Script s;
  s.faults = {echo};
  FakeUpstream server(s);
  server.start();
  FetchRequest r;
  r.method = "POST";
  r.url = origin(server) + "/v1/chat/completions";
  r.headers = {{"authorization", "Bearer " + token}};
  r.body = R"({"messages":[{"role":"user","content":"x"}]})";
  auto res = fetch(r, gate::Environment{});
  CHECK(res.status == 401);
  CHECK(server.log().at(0).headers["authorization"] == "Bearer " + token);
  CHECK(res.body.find(token) == std::string::npos);
  CHECK(header(res, "x-echo").find(token) == std::string::npos);
}

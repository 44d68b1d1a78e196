#include <doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <string>

#include "harness.hpp"
#include "sdk/proxy_child.hpp"
#include <tests/support/fake_upstream.hpp>

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using namespace gate::e2e;

namespace {

constexpr const char* k_canary = "sk-proxy-canary-5f1e9a7c3b2d";

struct Answer {
  int status = 0;
  std::string content_type, body;
};

// One raw HTTP/1.1 exchange, so the test controls Host and the target form.
Answer send(unsigned short port, const std::string& method, const std::string& target,
            const std::string& host, const std::string& body) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> req{method == "GET" ? http::verb::get : http::verb::post, target, 11};
  req.set(http::field::host, host);
  req.set(http::field::authorization, "Bearer dummy-agent-key");
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  http::write(sock, req);
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(sock, buf, res);
  return {static_cast<int>(res.result_int()), std::string(res[http::field::content_type]), res.body()};
}

const std::string k_plain = R"({"model":"m","messages":[{"role":"user","content":"say hi"}]})";
const std::string k_stream = R"({"model":"m","stream":true,"messages":[{"role":"user","content":"say hi"}]})";
const std::string k_other = R"({"model":"m","messages":[{"role":"user","content":"something else"}]})";

} // namespace

TEST_CASE("gate proxy records, then replays byte for byte with the upstream gone") {
  gate::testing::clear_network_env();
  gate::testing::Script script;
  script.rules.push_back({"say hi", {"first answer", "second answer", "third answer"}});
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  copy_demo(tmp.path());
  write_config(tmp.path(), upstream.base_url());
  const std::map<std::string, std::string> env{{"GATE_PROXY_TEST_KEY", k_canary}};

  std::string rec_out;
  unsigned short port = 0;
  Child rec = start_proxy(tmp.path(), "record", env, rec_out, port);
  REQUIRE(port != 0);
  const std::string host = "127.0.0.1:" + std::to_string(port);
  const std::string chat = "/t/task-1/r/0/chat/completions";

  std::vector<Answer> recorded = {
      send(port, "POST", chat, host, k_plain), send(port, "POST", chat, host, k_plain),
      send(port, "POST", chat, host, k_stream), send(port, "POST", "/chat/completions", host, k_plain)};
  for (const auto& a : recorded) {
    CHECK(a.status == 200);
    CHECK(a.body.find(k_canary) == std::string::npos);
  }
  // The same request twice in one run: two answers, in order.
  CHECK(recorded[0].body.find("first answer") != std::string::npos);
  CHECK(recorded[1].body.find("second answer") != std::string::npos);
  CHECK(recorded[2].content_type.find("text/event-stream") == 0);
  CHECK(recorded[2].body.find("data: ") != std::string::npos);
  CHECK(send(port, "GET", "/models", host, "").status == 200);

  const std::uint64_t before = upstream.requests();
  {
    Answer bad_host = send(port, "POST", chat, "evil.example", k_plain);
    CHECK(bad_host.status == 403);
    Answer bad_port = send(port, "POST", chat, "127.0.0.1:1", k_plain);
    CHECK(bad_port.status == 403);
    Answer absolute = send(port, "POST", "http://api.openai.com/v1/chat/completions", host, k_plain);
    CHECK(absolute.status == 403);
    CHECK(upstream.requests() == before);
  }
  // The real key went upstream; the agent's dummy key did not.
  bool saw_key = false;
  for (const auto& l : upstream.log()) {
    auto it = l.headers.find("authorization");
    if (it != l.headers.end() && it->second == std::string("Bearer ") + k_canary) saw_key = true;
    CHECK((it == l.headers.end() || it->second.find("dummy-agent-key") == std::string::npos));
  }
  CHECK(saw_key);
  Result r1 = stop(rec);
  CHECK(r1.exit_code == 143);
  upstream.stop();

  std::string rep_out;
  unsigned short port2 = 0;
  Child rep = start_proxy(tmp.path(), "replay-only", env, rep_out, port2);
  REQUIRE(port2 != 0);
  const std::string host2 = "localhost:" + std::to_string(port2);
  std::vector<Answer> replayed = {
      send(port2, "POST", chat, host2, k_plain), send(port2, "POST", chat, host2, k_plain),
      send(port2, "POST", chat, host2, k_stream), send(port2, "POST", "/chat/completions", host2, k_plain)};
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    CAPTURE(i);
    CHECK(replayed[i].status == recorded[i].status);
    CHECK(replayed[i].content_type == recorded[i].content_type);
    CHECK(replayed[i].body == recorded[i].body);
  }
  // A third identical request was never recorded: a miss naming the key.
  Answer miss = send(port2, "POST", chat, host2, k_plain);
  CHECK(miss.status == 404);
  CHECK(miss.body.find("replay-only cache miss") != std::string::npos);
  Answer miss2 = send(port2, "POST", chat, host2, k_other);
  CHECK(miss2.status == 404);
  Result r2 = stop(rep);
  CHECK(r2.err.find("replay-only cache miss") != std::string::npos);

  // The canary key is in no file and no output.
  for (const auto& f : files_below(tmp.path())) {
    CAPTURE(f);
    CHECK(slurp(f).find(k_canary) == std::string::npos);
  }
  for (const std::string* text : {&rec_out, &rep_out, &r1.out, &r1.err, &r2.out, &r2.err})
    CHECK(text->find(k_canary) == std::string::npos);
}

TEST_CASE("gate proxy speaks Anthropic's auth upstream and replays a recorded message") {
  gate::testing::clear_network_env();
  gate::testing::FakeUpstream upstream(gate::testing::Script{});
  upstream.start();
  TempDir tmp;
  copy_demo(tmp.path());
  write_config(tmp.path(), "http://127.0.0.1:" + std::to_string(upstream.port()), "anthropic");
  const std::map<std::string, std::string> env{{"GATE_PROXY_TEST_KEY", k_canary}};
  const std::string body = R"({"max_tokens":16,"messages":[{"role":"user","content":"ping"}],"model":"m"})";

  std::string out;
  unsigned short port = 0;
  Child first = start_proxy(tmp.path(), "replay", env, out, port);
  REQUIRE(port != 0);
  Answer a = send(port, "POST", "/v1/messages", "127.0.0.1:" + std::to_string(port), body);
  CHECK(a.status == 200);
  CHECK(a.body.find("echo: ping") != std::string::npos);
  const std::vector<gate::testing::RequestLog> log = upstream.log(); // a copy: log() returns by value
  REQUIRE(log.size() == 1);
  const auto& h = log[0].headers;
  CHECK(h.count("x-api-key") == 1);
  CHECK((h.count("x-api-key") == 1 && h.at("x-api-key") == k_canary));
  CHECK(h.count("authorization") == 0); // the agent's dummy bearer stays behind
  CHECK(h.count("anthropic-version") == 1);
  stop(first);

  // A fresh proxy in replay mode answers the same first request from the cache.
  std::string out2;
  Child second = start_proxy(tmp.path(), "replay", env, out2, port);
  REQUIRE(port != 0);
  Answer b = send(port, "POST", "/v1/messages", "127.0.0.1:" + std::to_string(port), body);
  CHECK(b.body == a.body);
  CHECK(upstream.requests() == 1);
  stop(second);
  for (const auto& f : files_below(tmp.path()))
    CHECK(slurp(f).find(k_canary) == std::string::npos);
}

TEST_CASE("gate proxy refuses a port out of range") {
  TempDir tmp;
  copy_demo(tmp.path());
  write_config(tmp.path(), "http://127.0.0.1:9/v1");
  Result r = run_gate({"proxy", "--config", "gate.yaml", "--port", "70000"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--port") != std::string::npos);
}

TEST_CASE("gate proxy on a port already taken exits 3 naming the address") {
  TempDir tmp;
  copy_demo(tmp.path());
  write_config(tmp.path(), "http://127.0.0.1:9/v1");
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor taken(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const std::string port = std::to_string(taken.local_endpoint().port());
  Result r = run_gate({"proxy", "--config", "gate.yaml", "--port", port}, tmp.path());
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("cannot bind 127.0.0.1:" + port) != std::string::npos);
}

// agent/tap: the agents' endpoint in front of the proxy: per-scope tool
// calls (plain and streamed answers), usage, and replay-only misses.
#include <doctest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <filesystem>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

#include <gate/agent/tap.hpp>
#include <gate/cache/store.hpp>
#include <gate/proxy/route.hpp>
#include <gate/util/json.hpp>
#include <gate/util/sha256.hpp>
#include <tests/support/temp_dir.hpp>

#include "fake_model_client.hpp"

namespace fs = std::filesystem;
using namespace gate::agent;

namespace {

gate::config::Config config_for(const fs::path& cache,
                                gate::config::CacheMode mode = gate::config::CacheMode::replay_only) {
  gate::config::Config cfg;
  cfg.model.provider = "openai";
  cfg.model.api_key_env = "GATE_TAP_TEST_NO_KEY";
  cfg.cache.dir = cache;
  cfg.model.base_url = "http://127.0.0.1:9/v1"; // never reached: no key is set
  cfg.cache.mode = mode;
  cfg.concurrency = 1; // the tap's fewest threads, 2
  return cfg;
}

const std::string k_request = R"({"messages":[{"content":"hi","role":"user"}],"model":"m"})";

// Records `body` as the answer to k_request in `scope` (occurrence 0).
void record(const fs::path& cache, const std::string& scope, const std::string& body,
            const std::string& type) {
  gate::proxy::Target t = *gate::proxy::parse_target(scope + "/chat/completions");
  const std::string canonical = gate::json::canonical(boost::json::parse(k_request));
  gate::cache::Entry e;
  e.key = gate::proxy::request_key("openai", t, canonical, 0);
  e.provider = "openai";
  e.path = t.scope_path;
  e.request = canonical;
  e.headers = {{"content-type", type}};
  e.body = body;
  e.recorded_at = "2026-01-01T00:00:00Z";
  e.route = "{}";
  gate::cache::Store(cache).put(e);
}

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

// A connection to the tap that gives up on a read after 20 s instead of
// hanging the test (a failure, not a timing).
struct Client {
  boost::asio::io_context io;
  tcp::socket sock{io};
  boost::beast::flat_buffer buf;
  explicit Client(unsigned short port) {
    sock.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    timeval tv{20, 0};
    ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  int post(const std::string& target, const std::string& body) {
    http::request<http::string_body> req{http::verb::post, target, 11};
    req.set(http::field::host, "127.0.0.1:" + std::to_string(sock.remote_endpoint().port()));
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    http::write(sock, req);
    http::response<http::string_body> res;
    boost::system::error_code ec;
    http::read(sock, buf, res, ec);
    return ec ? -1 : static_cast<int>(res.result_int());
  }
};

} // namespace

TEST_CASE("task ids become one percent-encoded path segment") {
  CHECK(encode_segment("plain-id_1.x~") == "plain-id_1.x~");
  CHECK(encode_segment("a b/c") == "a%20b%2Fc");
  CHECK(encode_segment("..") == "%2E%2E");
  CHECK(encode_segment("é") == "%C3%A9");
}

TEST_CASE("tool calls and usage of a scope's answers, plain and streamed") {
  gate::testing::TempDir c;
  record(
      c.path(), "/t/task%201/r/0",
      R"({"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,)"
      R"("tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]},)"
      R"("finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14}})",
      "application/json");
  record(
      c.path(), "/t/task%201/r/1",
      "data: "
      "{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,"
      "\"delta\":"
      "{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":"
      "{\"name\":\"write_answer\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n"
      "data: "
      "{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,"
      "\"delta\":{},"
      "\"finish_reason\":\"tool_calls\"}]}\n\n"
      "data: [DONE]\n\n",
      "text/event-stream");
  Tap tap(config_for(c.path()), gate::Environment{});
  tap.start();
  const std::string host = "127.0.0.1:" + std::to_string(tap.port());
  CHECK(tap.base_url("task 1", 0) == "http://" + host + "/t/task%201/r/0");
  auto r0 = tap.handle("POST", "/t/task%201/r/0/chat/completions", host, {}, k_request);
  CHECK(r0.status == 200);
  auto r1 = tap.handle("POST", "/t/task%201/r/1/chat/completions", host, {}, k_request);
  CHECK(r1.status == 200);
  ScopeLog l0 = tap.take("task 1", 0);
  CHECK(l0.requests == 1);
  REQUIRE(l0.tool_calls.size() == 1);
  CHECK(l0.tool_calls[0].name == "read_file");
  CHECK(l0.tool_calls[0].arguments_sha256 == gate::sha256_hex(R"({"path":"a"})"));
  CHECK(l0.cache_hits == 1);
  CHECK(l0.prompt_tokens == 10);
  CHECK(l0.completion_tokens == 4);
  CHECK(l0.usage_known);
  ScopeLog l1 = tap.take("task 1", 1);
  REQUIRE(l1.tool_calls.size() == 1);
  CHECK(l1.tool_calls[0].name == "write_answer");
  CHECK_FALSE(l1.usage_known); // the stream sent no usage chunk
  // take() empties the scope.
  CHECK(tap.take("task 1", 0).requests == 0);
  tap.stop();
}

TEST_CASE("a replay-only miss is kept with its key; another Host is refused") {
  gate::testing::TempDir c;
  Tap tap(config_for(c.path()), gate::Environment{});
  tap.start();
  const std::string host = "127.0.0.1:" + std::to_string(tap.port());
  auto miss = tap.handle("POST", "/t/t/r/0/chat/completions", host, {}, k_request);
  CHECK(miss.status == 404);
  ScopeLog l = tap.take("t", 0);
  CHECK(l.requests == 1);
  CHECK(l.cache_hits == 0);
  REQUIRE(l.missing_keys.size() == 1);
  gate::proxy::Target t = *gate::proxy::parse_target("/t/t/r/0/chat/completions");
  CHECK(l.missing_keys[0] ==
        gate::proxy::request_key("openai", t, gate::json::canonical(boost::json::parse(k_request)), 0));
  auto refused = tap.handle("POST", "/t/t/r/0/chat/completions", "evil.example:80", {}, k_request);
  CHECK(refused.status == 403);
  auto other_port = tap.handle("POST", "/t/t/r/0/chat/completions", "127.0.0.1:1", {}, k_request);
  CHECK(other_port.status == 403);
  CHECK(tap.take("t", 0).requests == 0); // refused requests are not the agent's
}

TEST_CASE("replay mode: cache hits are told from upstream calls") {
  gate::testing::TempDir c;
  record(c.path(), "/t/a/r/0",
         R"({"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,)"
         R"("message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]})",
         "application/json");
  Tap tap(config_for(c.path(), gate::config::CacheMode::replay), gate::Environment{});
  tap.start();
  const std::string host = "127.0.0.1:" + std::to_string(tap.port());
  CHECK(tap.handle("POST", "/t/a/r/0/chat/completions", host, {}, k_request).status == 200);
  ScopeLog hit = tap.take("a", 0);
  CHECK(hit.requests == 1);
  CHECK(hit.cache_hits == 1);
  // A miss in replay mode goes upstream (here it cannot: no key), so the run
  // is not all hits, and it is not a replay-only miss either.
  CHECK(tap.handle("POST", "/t/a/r/0/chat/completions", host, {}, k_request).status == 502);
  CHECK(tap.handle("POST", "/t/a/r/0/chat/completions", host, {}, "{not json").status == 400);
  ScopeLog mixed = tap.take("a", 0);
  CHECK(mixed.requests == 2);
  CHECK(mixed.cache_hits == 0);
  CHECK(mixed.missing_keys.empty());
  CHECK(mixed.tool_calls.empty());
}

TEST_CASE("served over its port: idle keep-alive connections do not hold its threads") {
  gate::testing::TempDir c;
  Tap tap(config_for(c.path()), gate::Environment{});
  tap.start();
  // Three connections on a tap with two threads; the first two stay open
  // and idle after their answer, as an agent's SDK keeps them.
  Client a(tap.port()), b(tap.port()), d(tap.port());
  CHECK(a.post("/t/k/r/0/chat/completions", k_request) == 404);
  CHECK(b.post("/t/k/r/1/chat/completions", k_request) == 404);
  CHECK(d.post("/t/k/r/2/chat/completions", k_request) == 404);
  CHECK(a.post("/t/k/r/0/chat/completions", k_request) == 404); // the same connection, again
  CHECK(tap.take("k", 0).missing_keys.size() == 2);
  CHECK(tap.take("k", 2).requests == 1);
  tap.stop(); // with connections still open
  tap.stop(); // idempotent
}

TEST_CASE(
    "the tap's upstream calls go through the client it is given; a failed write is in the scope's log") {
  gate::testing::TempDir tmp;
  const fs::path cache = tmp.path() / "cache";
  gate::testing::FakeModelClient client;
  client.answer("hi", gate::testing::openai_answer("tap answer"));
  Tap tap(config_for(cache, gate::config::CacheMode::record), gate::Environment{},
          [&client]() -> gate::model::ModelClient& { return client; });
  const std::string scoped = "/t/a/r/0/chat/completions";
  auto first = tap.handle("POST", scoped, "127.0.0.1:0", {}, k_request);
  CHECK(first.status == 200);
  CHECK(first.body.find("tap answer") != std::string::npos);
  REQUIRE(client.calls() == 1);
  const gate::model::ApiCall sent = client.sent()[0];
  CHECK(sent.path == "/chat/completions");
  CHECK(sent.method == "POST");
  CHECK(sent.pass_through);
  ScopeLog log = tap.take("a", 0);
  CHECK(log.requests == 1);
  CHECK(log.record_error.empty());
  CHECK(log.prompt_tokens == 3);

  // The same request again is occurrence 1; its shard directory is made a
  // symlink, which the store refuses to write through.
  const std::string canonical = gate::json::canonical(boost::json::parse(k_request));
  const std::string second_key =
      gate::proxy::request_key("openai", *gate::proxy::parse_target(scoped), canonical, 1);
  fs::create_directories(tmp.path() / "elsewhere");
  if (!fs::exists(cache / second_key.substr(0, 2)))
    fs::create_directory_symlink(tmp.path() / "elsewhere", cache / second_key.substr(0, 2));
  auto second = tap.handle("POST", scoped, "127.0.0.1:0", {}, k_request);
  CHECK(client.calls() == 2);
  CHECK(second.status == 500);
  log = tap.take("a", 0);
  CHECK(log.record_error.find("symlink") != std::string::npos);
}

#include <doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <string>
#include <vector>

#include <gate/cache/entry.hpp>
#include <gate/proxy/pacing.hpp>

#include "harness.hpp"
#include "sdk/proxy_child.hpp"
#include <tests/support/fake_upstream.hpp>

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using namespace gate::e2e;

namespace {

constexpr const char* k_canary = "sk-proxy-canary-5f1e9a7c3b2d";

using Answer = ProxyAnswer;

Answer send(unsigned short port, const std::string& method, const std::string& target,
            const std::string& host, const std::string& body) {
  return send_to_proxy(port, method, target, host, body);
}

// A fake upstream running a script, and a copy of the demo whose gate.yaml
// points the proxy at it with the canary as its key.
struct Setup {
  gate::testing::FakeUpstream upstream;
  TempDir tmp;
  std::map<std::string, std::string> env{{"GATE_PROXY_TEST_KEY", k_canary}};

  explicit Setup(const gate::testing::Script& script)
      : upstream((gate::testing::clear_network_env(), script)) {
    upstream.start();
    copy_demo(tmp.path());
    write_config(tmp.path(), upstream.base_url());
  }
};

const std::string k_plain = R"({"model":"m","messages":[{"role":"user","content":"say hi"}]})";
const std::string k_stream = R"({"model":"m","stream":true,"messages":[{"role":"user","content":"say hi"}]})";
const std::string k_other = R"({"model":"m","messages":[{"role":"user","content":"something else"}]})";

} // namespace

TEST_CASE("gate proxy records, then replays byte for byte with the upstream gone") {
  gate::testing::Script script;
  script.rules.push_back({"say hi", {"first answer", "second answer", "third answer"}});
  Setup setup(script);
  auto& [upstream, tmp, env] = setup;

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

TEST_CASE("gate proxy refuses a port out of range or a bad --replay-timing with exit 2") {
  TempDir tmp;
  copy_demo(tmp.path());
  write_config(tmp.path(), "http://127.0.0.1:9/v1");
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--port", "70000"}, "--port: expected 0..65535"},
      {{"--replay-timing", "scaled:0"}, "--replay-timing: expected none, recorded or scaled:X"}};
  for (const auto& [args, message] : bad) {
    std::vector<std::string> argv = {"proxy", "--config", "gate.yaml"};
    argv.insert(argv.end(), args.begin(), args.end());
    Result r = run_gate(argv, tmp.path());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(message) != std::string::npos);
  }
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

namespace {

// An answer read as it arrives: when each piece of the body came, in ms
// after the request was written.
struct Timed {
  int status = 0;
  bool chunked = false;
  std::string body;
  std::vector<std::pair<double, std::size_t>> arrivals; // (ms, body bytes so far)
  double done_ms = 0;

  // When the byte before `end` had arrived.
  double arrival_of(std::size_t end) const {
    for (const auto& [ms, bytes] : arrivals)
      if (bytes >= end) return ms;
    return -1;
  }
};

Timed send_timed(unsigned short port, const std::string& target, const std::string& body) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> req{http::verb::post, target, 11};
  req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  Timed t;
  const auto start = std::chrono::steady_clock::now();
  auto since = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  http::write(sock, req);
  http::response_parser<http::string_body> parser;
  auto on_chunk = [&](std::uint64_t, std::string_view data, boost::system::error_code&) {
    t.body.append(data);
    t.arrivals.emplace_back(since(), t.body.size());
    return data.size();
  };
  parser.on_chunk_body(on_chunk);
  boost::beast::flat_buffer buf;
  while (!parser.is_done())
    http::read_some(sock, buf, parser);
  t.done_ms = since();
  t.status = static_cast<int>(parser.get().result_int());
  t.chunked = parser.get().chunked();
  if (!t.chunked) {
    t.body = parser.get().body();
    t.arrivals.emplace_back(t.done_ms, t.body.size());
  }
  return t;
}

// The cache entry whose body holds `needle`.
gate::cache::Entry entry_with(const fs::path& dir, const std::string& needle) {
  for (const auto& f : files_below(dir)) {
    auto r = gate::cache::decode(slurp(f), "");
    if (r.entry && r.entry->body.find(needle) != std::string::npos) return *r.entry;
  }
  FAIL("no cache entry holds " << needle);
  return {};
}

} // namespace

TEST_CASE("gate proxy --replay-timing replays a stream event by event at the recorded times") {
  gate::testing::Script script;
  script.rules.push_back({"count", {"one two three four five"}});
  script.latency_ms = 150;
  script.event_gap_ms = 80;
  Setup setup(script);
  auto& [upstream, tmp, env] = setup;
  const std::string chat = "/t/pace/r/0/chat/completions";
  const std::string streamed =
      R"({"model":"m","stream":true,"messages":[{"role":"user","content":"count"}]})";
  const std::string plain = R"({"model":"m","messages":[{"role":"user","content":"count"}]})";

  std::string out;
  unsigned short port = 0;
  Child rec = start_proxy(tmp.path(), "record", env, out, port);
  REQUIRE(port != 0);
  const Timed rec_stream = send_timed(port, chat, streamed);
  const Timed rec_plain = send_timed(port, chat, plain);
  stop(rec);
  upstream.stop();
  REQUIRE(rec_stream.status == 200);
  REQUIRE(rec_plain.status == 200);

  // The upstream sent event i no sooner than 150 + 80 i ms after the
  // request reached it, and the proxy's clock started before that.
  const gate::cache::Entry stream_entry = entry_with(tmp.path() / "proxy-cache", "data: [DONE]");
  const std::vector<std::size_t> ends = gate::proxy::event_ends(stream_entry.body);
  REQUIRE(ends.size() >= 5);
  REQUIRE(stream_entry.event_ms.size() == ends.size());
  for (std::size_t i = 0; i < ends.size(); ++i) {
    CAPTURE(i);
    CHECK(stream_entry.event_ms[i] >= 150 + 80.0 * static_cast<double>(i) - 1);
  }
  for (const auto& f : files_below(tmp.path() / "proxy-cache"))
    CHECK(slurp(f).find(k_canary) == std::string::npos);
  const gate::cache::Entry plain_entry = entry_with(tmp.path() / "proxy-cache", "chat.completion\"");
  CHECK(plain_entry.event_ms.empty());
  CHECK(plain_entry.latency_ms >= 150);

  for (double scale : {1.0, 2.0}) {
    CAPTURE(scale);
    std::string out2;
    Child rep = start_proxy(tmp.path(), "replay-only", env, out2, port,
                            {"--replay-timing", scale == 1 ? "recorded" : "scaled:2"});
    REQUIRE(port != 0);
    CHECK(out2.find(scale == 1 ? "replay timing recorded" : "replay timing scaled:2") != std::string::npos);
    const Timed s = send_timed(port, chat, streamed);
    const Timed p = send_timed(port, chat, plain);
    stop(rep);
    CHECK(s.status == 200);
    CHECK(s.chunked);
    CHECK(s.body == rec_stream.body);
    // The proxy sends event i at (its arrival + scale x event_ms[i]): never
    // sooner, whatever the load on this machine.
    for (std::size_t i = 0; i < ends.size(); ++i) {
      CAPTURE(i);
      CHECK(s.arrival_of(ends[i]) >= scale * stream_entry.event_ms[i]);
    }
    CHECK(p.body == rec_plain.body);
    CHECK(p.done_ms >= scale * plain_entry.latency_ms);
  }

  // none (the default): the recorded bytes at once, as one plain body.
  std::string out3;
  Child fast = start_proxy(tmp.path(), "replay-only", env, out3, port);
  REQUIRE(port != 0);
  CHECK(out3.find("replay timing none") != std::string::npos);
  const Timed s = send_timed(port, chat, streamed);
  stop(fast);
  CHECK(s.status == 200);
  CHECK_FALSE(s.chunked);
  CHECK(s.body == rec_stream.body);
}

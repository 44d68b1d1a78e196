#include <doctest.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/proxy/route.hpp>
#include <gate/proxy/server.hpp>
#include <gate/util/error.hpp>
#include <gate/util/time.hpp>

#include "../support/fake_upstream.hpp"

namespace fs = std::filesystem;

namespace {

// A cache directory of its own, removed at the end.
struct ScratchCache {
  fs::path dir = fs::temp_directory_path() / ("gate-proxy-unit-" + std::to_string(::getpid()));
  ~ScratchCache() { fs::remove_all(dir); }
};

gate::config::Config replay_only(const fs::path& dir) {
  gate::config::Config cfg;
  cfg.model.name = "m";
  cfg.model.base_url = "http://127.0.0.1:9/v1"; // never called: every case here is answered locally
  cfg.model.api_key_env = "GATE_PROXY_UNIT_UNSET_KEY";
  cfg.cache.dir = dir;
  cfg.cache.mode = gate::config::CacheMode::replay_only;
  return cfg;
}

const std::string k_body = R"({"messages":[],"model":"m"})"; // canonical: keys sorted

} // namespace

TEST_CASE("replay-only: hits in occurrence order, then a 404 naming the missing key") {
  ScratchCache scratch;
  gate::config::Config cfg = replay_only(scratch.dir);
  gate::cache::Store store(scratch.dir);
  auto target = *gate::proxy::parse_target("/t/a/r/0/chat/completions");
  for (int occurrence = 0; occurrence < 2; ++occurrence) {
    gate::cache::Entry e;
    e.key = gate::proxy::request_key("openai", target, k_body, occurrence);
    e.provider = "openai";
    e.path = target.scope_path;
    e.replica = occurrence;
    e.request = k_body;
    e.body = "answer " + std::to_string(occurrence);
    e.recorded_at = gate::utc_now_iso();
    store.put(e);
  }
  gate::proxy::Server server(cfg, gate::Environment{});
  // The body is canonicalised before keying: whitespace does not matter.
  const std::string spaced = R"({ "model": "m", "messages": [] })";
  auto r0 = server.handle("POST", "/t/a/r/0/chat/completions", "127.0.0.1:0", {}, spaced);
  auto r1 = server.handle("POST", "/t/a/r/0/chat/completions", "127.0.0.1:0", {}, k_body);
  auto r2 = server.handle("POST", "/t/a/r/0/chat/completions", "127.0.0.1:0", {}, k_body);
  CHECK(r0.body == "answer 0");
  CHECK(r1.body == "answer 1");
  CHECK(r2.status == 404);
  CHECK(r2.body.find(gate::proxy::request_key("openai", target, k_body, 2)) != std::string::npos);
  // Another run of the same task has its own counter (and nothing recorded).
  CHECK(server.handle("POST", "/t/a/r/1/chat/completions", "127.0.0.1:0", {}, k_body).status == 404);
}

TEST_CASE("requests refused before any cache or upstream work") {
  ScratchCache scratch;
  gate::proxy::Server server(replay_only(scratch.dir), gate::Environment{});
  CHECK(server.handle("POST", "/chat/completions", "api.openai.com", {}, k_body).status == 403);
  CHECK(server.handle("POST", "http://api.openai.com/chat/completions", "127.0.0.1:0", {}, k_body).status ==
        403);
  CHECK(server.handle("POST", "/chat/completions", "127.0.0.1:0", {}, "{not json").status == 400);
  CHECK(server.handle("POST", "/chat/../models", "127.0.0.1:0", {}, k_body).status == 400);
  CHECK(server.handle("POST", "/chat/%2e%2e/models", "127.0.0.1:0", {}, k_body).status == 400);
  CHECK(server.handle("DELETE", "/chat/completions", "127.0.0.1:0", {}, "").status == 405);
  // A GET is looked up like any call: never recorded, so a replay-only miss.
  auto listed = server.handle("GET", "/models", "127.0.0.1:0", {}, "");
  CHECK(listed.status == 404);
  CHECK(listed.body.find("replay-only cache miss") != std::string::npos);
  // No key in the environment: recording a GET explains instead of calling.
  gate::config::Config rec = replay_only(scratch.dir);
  rec.cache.mode = gate::config::CacheMode::record;
  gate::proxy::Server recorder(rec, gate::Environment{});
  auto models = recorder.handle("GET", "/models", "127.0.0.1:0", {}, "");
  CHECK(models.status == 502);
  CHECK(models.body.find("GATE_PROXY_UNIT_UNSET_KEY") != std::string::npos);
}

TEST_CASE("the observer sees each scoped request: hit, miss, and nothing else") {
  ScratchCache scratch;
  gate::config::Config cfg = replay_only(scratch.dir);
  auto target = *gate::proxy::parse_target("/t/a/r/0/chat/completions");
  gate::cache::Entry e;
  e.key = gate::proxy::request_key("openai", target, k_body, 0);
  e.provider = "openai";
  e.path = target.scope_path;
  e.request = k_body;
  e.body = "answer";
  e.recorded_at = gate::utc_now_iso();
  gate::cache::Store(scratch.dir).put(e);

  struct Seen {
    std::string task, run, method, key, body;
    int status;
    bool hit, missed;
  };
  std::mutex m;
  std::vector<Seen> seen;
  gate::proxy::Server server(cfg, gate::Environment{});
  server.observe([&](const gate::proxy::Observation& o) {
    std::lock_guard lock(m);
    seen.push_back(
        {o.target.task, o.target.run, o.method, o.key, o.reply->body, o.status, o.cache_hit, o.missed});
    CHECK(*o.request_body == k_body);
  });
  server.handle("POST", "/t/a/r/0/chat/completions", "127.0.0.1:0", {}, k_body);
  server.handle("POST", "/t/a/r/0/chat/completions", "127.0.0.1:0", {}, k_body);
  server.handle("POST", "/chat/completions", "127.0.0.1:0", {}, k_body); // session scope: not observed
  server.handle("POST", "/t/a/r/0/chat/completions", "evil.example", {}, k_body); // refused: not observed
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].task == "a");
  CHECK(seen[0].run == "0");
  CHECK(seen[0].method == "POST");
  CHECK(seen[0].status == 200);
  CHECK(seen[0].hit);
  CHECK_FALSE(seen[0].missed);
  CHECK(seen[0].key == e.key);
  CHECK(seen[0].body == "answer");
  CHECK(seen[1].status == 404);
  CHECK_FALSE(seen[1].hit);
  CHECK(seen[1].missed);
  CHECK(seen[1].key == gate::proxy::request_key("openai", target, k_body, 1));
}

TEST_CASE("start binds a free port; stop is idempotent") {
  ScratchCache scratch;
  gate::proxy::Server server(replay_only(scratch.dir), gate::Environment{});
  server.stop(); // never started
  server.start(0, 1);
  CHECK(server.port() != 0);
  gate::proxy::Server second(replay_only(scratch.dir), gate::Environment{});
  CHECK_THROWS_AS(second.start(server.port(), 1), gate::Error);
  server.stop();
  server.stop();
}

namespace {

// The environment the proxy's own client is made with: the upstream key only.
gate::Environment upstream_key() {
  return gate::environment_of({{"GATE_PROXY_UNIT_KEY", "proxy-unit-key-qZ8kVw3TxLmR"}});
}

gate::config::Config recording(const fs::path& dir, const std::string& base_url) {
  gate::config::Config cfg = replay_only(dir);
  cfg.model.base_url = base_url;
  cfg.model.api_key_env = "GATE_PROXY_UNIT_KEY";
  cfg.model.max_retries = 2;
  cfg.cache.mode = gate::config::CacheMode::record;
  return cfg;
}

const std::string k_chat = R"({"messages":[{"content":"hi","role":"user"}],"model":"m"})";
const std::string k_streamed = R"({"messages":[{"content":"hi","role":"user"}],"model":"m","stream":true})";

// One recorded call of `body` through the proxy to an upstream that answers
// `answer` after one `fault`: what the agent got, how many requests the
// upstream saw, and what the cache holds.
struct AfterFault {
  gate::proxy::Reply reply;
  std::uint64_t upstream_requests = 0;
  gate::cache::Lookup recorded;
};

AfterFault call_after(gate::testing::Fault fault, const std::string& answer, const std::string& body) {
  ScratchCache scratch;
  gate::testing::Script script;
  script.rules = {{"", {answer}}};
  fault.times = 1;
  script.faults = {std::move(fault)};
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  gate::proxy::Server server(recording(scratch.dir, upstream.base_url()), upstream_key());
  AfterFault out;
  out.reply = server.handle("POST", "/t/a/r/0/chat/completions", "127.0.0.1:0", {}, body);
  out.upstream_requests = upstream.requests();
  auto target = *gate::proxy::parse_target("/t/a/r/0/chat/completions");
  out.recorded = gate::cache::Store(scratch.dir).get(gate::proxy::request_key("openai", target, body, 0));
  return out;
}

} // namespace

TEST_CASE(
    "upstream calls retry as gate run's do: a 503 is retried, the agent gets the answer, it is recorded") {
  gate::testing::Fault f;
  f.status = 503;
  AfterFault r = call_after(f, "fine", k_chat);
  CHECK(r.upstream_requests == 2);
  CHECK(r.reply.status == 200);
  CHECK(r.reply.body.find("fine") != std::string::npos);
  CHECK(r.recorded.entry);
}

TEST_CASE(
    "a stream cut by an error event is retried before any byte reaches the agent; only the answer is kept") {
  gate::testing::Fault f;
  f.status = 529;
  f.stream = "error";
  AfterFault r = call_after(f, "streamed fine", k_streamed);
  CHECK(r.upstream_requests == 2);
  CHECK(r.reply.status == 200);
  CHECK(r.reply.content_type.find("text/event-stream") == 0);
  // The bytes as the upstream sent them, not assembled: the agent's SDK reads the events.
  CHECK(r.reply.body.find("data: [DONE]") != std::string::npos);
  CHECK(r.reply.body.find("partial answer") == std::string::npos);
  REQUIRE(r.recorded.entry);
  CHECK(r.recorded.entry->body == r.reply.body);
  // One time per event of the attempt that answered.
  CHECK(r.recorded.entry->event_ms.size() == gate::proxy::event_ends(r.reply.body).size());
}

TEST_CASE("a chat completion stream cut before its end marker is retried; the agent gets the whole stream") {
  gate::testing::Fault f;
  f.stream = "cut";
  AfterFault r = call_after(f, "whole answer", k_streamed);
  CHECK(r.upstream_requests == 2);
  CHECK(r.reply.status == 200);
  CHECK(r.reply.body.find("data: [DONE]") != std::string::npos);
  CHECK(r.reply.body.find("partial answer") == std::string::npos);
}

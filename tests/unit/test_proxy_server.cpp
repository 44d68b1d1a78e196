#include <doctest.h>

#include <filesystem>
#include <mutex>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/proxy/route.hpp>
#include <gate/proxy/server.hpp>
#include <gate/util/error.hpp>
#include <gate/util/time.hpp>

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

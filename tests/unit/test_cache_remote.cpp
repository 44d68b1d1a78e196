// cache/remote: the shared second level behind a cache directory
// (cache.remote), through a fake store of entry bytes: read-through with
// verification, write-back, and a remote that fails never failing a lookup.
// The HTTP side (cli/remote_cache) is reached on a closed port for its
// messages; nginx itself is in tests/e2e/test_remote_cache.cpp.
#include <doctest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include <gate/cache/remote.hpp>
#include <gate/cache/store.hpp>
#include <gate/cli/remote_cache.hpp>
#include <gate/proxy/server.hpp>
#include <gate/replay/policy.hpp>
#include <gate/util/environment.hpp>
#include <gate/util/error.hpp>

#include "../support/fake_upstream.hpp"
#include "../support/temp_dir.hpp"
#include "fake_model_client.hpp"

namespace fs = std::filesystem;
using gate::cache::RemoteReply;

namespace {

// Entry bytes by key, and every request made, for the assertions.
struct FakeRemote : gate::cache::RemoteStorage {
  std::map<std::string, std::string> entries;
  std::vector<std::string> asked; // "GET <key>", "PUT <key>"
  bool down = false;

  RemoteReply get(const std::string& key) override {
    asked.push_back("GET " + key);
    RemoteReply r;
    if (down) {
      r.error = "connection: refused";
      return r;
    }
    auto it = entries.find(key);
    r.outcome = it == entries.end() ? RemoteReply::Outcome::absent : RemoteReply::Outcome::found;
    if (it != entries.end()) r.bytes = it->second;
    return r;
  }
  RemoteReply put(const std::string& key, std::string_view bytes) override {
    asked.push_back("PUT " + key);
    RemoteReply r;
    if (down) {
      r.error = "connection: refused";
      return r;
    }
    entries[key] = std::string(bytes);
    r.outcome = RemoteReply::Outcome::found;
    return r;
  }
  std::string where() const override { return "http://cache.test/gate"; }
};

gate::cache::Entry entry(const std::string& answer, int replica = 0) {
  gate::cache::Entry e;
  e.provider = "openai";
  e.path = "/chat/completions";
  e.replica = replica;
  e.request = R"({"q":")" + answer + R"("})";
  e.key = gate::cache::make_key(e.provider, e.path, e.request, replica);
  e.body = R"({"answer":")" + answer + R"("})";
  e.recorded_at = "2026-01-01T00:00:00Z";
  return e;
}

struct Levels {
  gate::testing::TempDir tmp;
  gate::cache::Store store{tmp.path() / "cache"};
  FakeRemote* fake = nullptr;
  std::shared_ptr<gate::cache::Remote> remote;
  Levels() {
    auto f = std::make_unique<FakeRemote>();
    fake = f.get();
    remote = std::make_shared<gate::cache::Remote>(std::move(f));
    store.set_remote(remote);
  }
};

} // namespace

TEST_CASE("an entry's path is the same at both levels: <key[0:2]>/<key>.entry") {
  const std::string key(64, 'a');
  CHECK(gate::cache::entry_path(key) == "aa/" + key + ".entry");
  gate::testing::TempDir tmp;
  gate::cache::Store local(tmp.path());
  CHECK(local.path_for(key) == tmp.path() / gate::cache::entry_path(key));
}

TEST_CASE(
    "a remote hit is verified, served with its exact bytes and kept locally; the next lookup is local") {
  Levels l;
  const gate::cache::Entry e = entry("4");
  const std::string bytes = gate::cache::encode(e);
  l.fake->entries[e.key] = bytes;

  gate::cache::Lookup got = l.store.get(e.key);
  REQUIRE(got.entry);
  CHECK(got.entry->body == e.body);
  CHECK(got.bytes == bytes);
  CHECK(got.corrupt_reason.empty());
  CHECK(got.local_write_error.empty());
  CHECK(fs::exists(l.store.path_for(e.key)));
  // Only the entry's path was asked for, nothing of the request.
  CHECK(l.fake->asked == std::vector<std::string>{"GET " + e.key});

  gate::cache::Store alone(l.store.root()); // the directory without its remote
  CHECK(alone.get(e.key).bytes == bytes);
  CHECK(l.store.get(e.key).entry);
  CHECK(l.fake->asked.size() == 1); // served from the directory now
  const gate::cache::RemoteCounts c = l.remote->counts();
  CHECK(c.hits == 1);
  CHECK(c.misses == 0);
  CHECK(gate::cache::counts_text(c) == "remote cache: 1 hit, 0 misses, 0 puts");
}

TEST_CASE("absent at both levels is a plain miss; a put writes the directory and the remote") {
  Levels l;
  const gate::cache::Entry e = entry("5");
  gate::cache::Lookup got = l.store.get(e.key);
  CHECK_FALSE(got.entry);
  CHECK(got.corrupt_reason.empty());
  l.store.put(e);
  CHECK(l.fake->entries.at(e.key) == gate::cache::encode(e));
  CHECK(gate::cache::Store(l.store.root()).get(e.key).entry);
  CHECK(gate::cache::counts_text(l.remote->counts()) == "remote cache: 0 hits, 1 miss, 1 put");
}

TEST_CASE("a remote entry with a flipped byte is a miss naming it, never served and never written locally") {
  Levels l;
  const gate::cache::Entry e = entry("6");
  std::string bytes = gate::cache::encode(e);
  const std::size_t at = bytes.find("\"6\"") + 1;
  bytes[at] = '7'; // the answer changed, the checksum not
  l.fake->entries[e.key] = bytes;

  gate::cache::Lookup got = l.store.get(e.key);
  CHECK_FALSE(got.entry);
  CHECK(got.bytes.empty());
  CHECK(got.corrupt_reason ==
        "http://cache.test/gate/" + gate::cache::entry_path(e.key) + ": checksum mismatch");
  CHECK_FALSE(fs::exists(l.store.path_for(e.key)));
  CHECK(l.remote->counts().rejected == 1);

  // Through the policy: replay-only, it is the run's miss with the warning.
  gate::replay::Decision d = gate::replay::look_up(&l.store, gate::config::CacheMode::replay_only, e.key);
  CHECK(d.verdict == gate::replay::Verdict::miss);
  CHECK(d.warning.find("treated as a miss") != std::string::npos);
  CHECK(d.warning.find(e.key) != std::string::npos);

  // A valid entry stored under another key is not that key's answer.
  const gate::cache::Entry other = entry("8");
  l.fake->entries[e.key] = gate::cache::encode(other);
  got = l.store.get(e.key);
  CHECK_FALSE(got.entry);
  CHECK(got.corrupt_reason.find(": key") != std::string::npos);
  CHECK_FALSE(fs::exists(l.store.path_for(e.key)));
}

TEST_CASE("a corrupt local file is replaced by a verified remote entry") {
  Levels l;
  const gate::cache::Entry e = entry("9");
  fs::create_directories(l.store.path_for(e.key).parent_path());
  {
    std::ofstream f(l.store.path_for(e.key));
    f << "gate-cache 1\ntruncated";
  }
  l.fake->entries[e.key] = gate::cache::encode(e);
  gate::cache::Lookup got = l.store.get(e.key);
  REQUIRE(got.entry);
  CHECK(gate::cache::Store(l.store.root()).get(e.key).entry);
}

TEST_CASE("a remote that fails is turned off once; the directory goes on answering and recording") {
  Levels l;
  std::vector<std::string> said;
  l.remote->on_failure([&](const std::string& why) { said.push_back(why); });
  const gate::cache::Entry local = entry("10");
  l.store.put(local); // the remote is up: stored at both levels
  l.fake->down = true;

  const gate::cache::Entry e = entry("11");
  CHECK_FALSE(l.store.get(e.key).entry); // the failure is a miss, never an error
  CHECK(l.store.get(local.key).entry);   // the directory answers
  l.store.put(e);                        // recording goes on
  CHECK(gate::cache::Store(l.store.root()).get(e.key).entry);
  CHECK_FALSE(l.store.get(entry("12").key).entry);

  CHECK(said == std::vector<std::string>{"http://cache.test/gate: connection: refused"});
  CHECK(l.remote->failure() == said[0]);
  // One request failed; the put and the last get were not made.
  CHECK(l.fake->asked.size() == 2);
  const gate::cache::RemoteCounts c = l.remote->counts();
  CHECK(c.failures == 1);
  CHECK(c.skipped == 2);
  CHECK(gate::cache::counts_text(c) ==
        "remote cache: 0 hits, 0 misses, 1 put, 1 failure (then off), 2 requests not made");
}

TEST_CASE("a remote hit is held to the trusted cache exactly as a local one") {
  Levels l;
  const gate::cache::Entry e = entry("13");
  l.fake->entries[e.key] = gate::cache::encode(e);
  gate::testing::TempDir trusted_dir;
  gate::cache::Store trusted(trusted_dir.path());

  gate::replay::Decision d = gate::replay::look_up(&l.store, gate::config::CacheMode::replay, e.key);
  REQUIRE(d.verdict == gate::replay::Verdict::hit);
  CHECK(gate::replay::trust_of(trusted, e.key, d.bytes) == gate::replay::Trust::absent);

  gate::cache::Entry edited = e;
  edited.body = R"({"answer":"14"})";
  trusted.put(edited);
  CHECK(gate::replay::trust_of(trusted, e.key, d.bytes) == gate::replay::Trust::differs);
  fs::remove(trusted.path_for(e.key));
  trusted.put(e);
  CHECK(gate::replay::trust_of(trusted, e.key, d.bytes) == gate::replay::Trust::same);
}

TEST_CASE("gate proxy (and so the agents' tap) shares the remote: one proxy records, another replays it") {
  gate::testing::FakeUpstream upstream(gate::testing::Script{});
  upstream.start();
  auto f = std::make_unique<FakeRemote>();
  FakeRemote* fake = f.get();
  auto remote = std::make_shared<gate::cache::Remote>(std::move(f));
  const std::string body = R"({"messages":[{"content":"what is 2+2?","role":"user"}],"model":"m"})";
  auto ask = [&](const fs::path& dir, gate::config::CacheMode mode, const gate::cache::Store* trusted,
                 gate::replay::Trust* trust) {
    gate::config::Config cfg = gate::testing::fake_client_config(dir, mode, 1);
    cfg.model.base_url = upstream.base_url();
    cfg.model.api_key_env = "";
    gate::proxy::Server server(cfg, gate::environment_of({}));
    server.remote(remote);
    server.trust(trusted);
    server.observe([&](const gate::proxy::Observation& o) { *trust = o.trust; });
    return server.handle("POST", "/t/add/r/0/chat/completions", "127.0.0.1:0", {}, body);
  };
  gate::testing::TempDir a, b, trusted_dir;
  gate::replay::Trust trust = gate::replay::Trust::same;
  const gate::proxy::Reply recorded = ask(a.path(), gate::config::CacheMode::replay, nullptr, &trust);
  REQUIRE(recorded.status == 200);
  CHECK(upstream.requests() == 1);
  REQUIRE(fake->entries.size() == 1);

  gate::cache::Store trusted(trusted_dir.path());
  const gate::proxy::Reply replayed = ask(b.path(), gate::config::CacheMode::replay_only, &trusted, &trust);
  CHECK(replayed.status == 200);
  CHECK(replayed.body == recorded.body);
  CHECK(upstream.requests() == 1);
  CHECK(trust == gate::replay::Trust::absent); // held to the trusted cache like a local hit
  CHECK(remote->counts().hits == 1);
  CHECK(remote->counts().puts == 1);
}

TEST_CASE("cache.remote over HTTP: a server that is not there is one failure whose text holds no token") {
  // A port nothing listens on: bound, then closed.
  unsigned short port = 0;
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = a.local_endpoint().port();
  }
  const std::string token = "gate-cache-canary-5e1f0a9b3c";
  gate::config::CacheConfig c;
  c.remote = "http://127.0.0.1:" + std::to_string(port) + "/team/";
  c.remote_auth_env = "GATE_UNIT_CACHE_TOKEN";
  c.remote_timeout_s = 2;
  auto remote = gate::cli::open_remote(c, gate::environment_of({{c.remote_auth_env, token}}));
  REQUIRE(remote);
  CHECK(remote->where() == "http://127.0.0.1:" + std::to_string(port) + "/team");
  const std::string key(64, 'c');
  CHECK_FALSE(remote->get(key).entry);
  const std::string failure = remote->failure();
  CHECK(failure.find("GET cc/" + key + ".entry: connection:") != std::string::npos);
  CHECK(failure.find(token) == std::string::npos);
  CHECK(gate::cli::remote_failure_text(failure).find("went on from the cache directory") !=
        std::string::npos);

  c.remote.clear();
  CHECK_FALSE(gate::cli::open_remote(c, gate::environment_of({})));

  // A token with a control character is refused up front, without its value.
  c.remote = "http://127.0.0.1:" + std::to_string(port);
  try {
    gate::cli::open_remote(c, gate::environment_of({{c.remote_auth_env, token + "\n"}}));
    FAIL("expected an error");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    CHECK(std::string(e.what()).find(token) == std::string::npos);
  }
}

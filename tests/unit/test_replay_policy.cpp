// replay/policy: the one record/replay policy, driven from both sides that
// use it: the runner (run::execute with a fake ModelClient) and the proxy
// (an in-process proxy::Server forwarding to the fake upstream on
// 127.0.0.1). Each decision is asserted the same way for both.
#include <doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <gate/cache/store.hpp>
#include <gate/proxy/route.hpp>
#include <gate/proxy/server.hpp>
#include <gate/replay/policy.hpp>
#include <gate/run/request.hpp>
#include <gate/run/runner.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/time.hpp>

#include "../support/fake_upstream.hpp"
#include "../support/temp_dir.hpp"
#include "fake_model_client.hpp"

namespace fs = std::filesystem;
using gate::config::CacheMode;
using gate::replay::Verdict;

namespace {

constexpr const char* k_key_var = "GATE_POLICY_UNIT_KEY";
const std::string k_canary = "sk-policy-canary-7f3a9c2e51d84b06";
const std::string k_question = "what is 2+2?";

// The fresh answer both sides get: its text echoes the key, and it comes
// with headers the allow-list keeps and headers it drops.
gate::model::ApiResponse fresh_answer() {
  gate::model::ApiResponse r = gate::testing::openai_answer("your key is " + k_canary + "; 2+2 is 4");
  r.headers = {{"content-type", "application/json"},
               {"x-request-id", "req-policy-1"},
               {"set-cookie", "session=abc"},
               {"openai-organization", "org-policy"}};
  return r;
}

// What either side must have stored for fresh_answer().
void check_recorded(const gate::cache::Entry& e) {
  const std::vector<std::pair<std::string, std::string>> kept{{"content-type", "application/json"},
                                                              {"x-request-id", "req-policy-1"}};
  CHECK(e.headers == kept);
  CHECK(e.status == 200);
  CHECK(e.body.find("2+2 is 4") != std::string::npos);
  CHECK(e.body.find(k_canary) == std::string::npos);
  CHECK(e.body.find("[REDACTED]") != std::string::npos);
  CHECK_FALSE(gate::contains_secret(gate::cache::encode(e)));
}

// The key the proxy's own client is made with, known for redaction as the
// real client makes it known.
struct KeyEnv {
  KeyEnv() { gate::register_secret(k_canary); }
};

// The proxy's configuration differs from the runner's fake one in where it
// sends calls and the key it sends.
gate::config::Config config_for(const fs::path& cache, CacheMode mode, const std::string& base_url) {
  gate::config::Config cfg = gate::testing::fake_client_config(cache, mode, 1);
  cfg.model.base_url = base_url;
  cfg.model.api_key_env = k_key_var;
  cfg.model.max_retries = 0;
  return cfg;
}

// The runner's side: one task asking k_question, one run.
struct RunnerSide {
  gate::testing::TempDir tmp;
  gate::suite::Suite suite;
  gate::cache::Store store{tmp.path() / "cache"};
  gate::testing::FakeModelClient client;

  RunnerSide() {
    gate::suite::Case c;
    c.id = "add";
    c.input = {{"user", k_question}};
    suite.cases = {c};
    client.answer("", fresh_answer());
  }
  gate::config::Config config(CacheMode mode) const {
    return config_for(tmp.path() / "cache", mode, "http://127.0.0.1:9/v1");
  }
  std::string key() const {
    const auto p = gate::run::prepare(suite.cases[0], config(CacheMode::replay));
    return gate::cache::make_key(p.call.provider, p.call.path, p.hashed_body, 0);
  }
  gate::run::Outcome run(CacheMode mode, const gate::cache::Store* trusted = nullptr) {
    const auto cfg = config(mode);
    gate::run::Inputs in;
    in.trusted = trusted;
    in.suite = &suite;
    in.cases = {&suite.cases[0]};
    in.config = &cfg;
    in.store = &store;
    in.client = [this]() -> gate::model::ModelClient& { return client; };
    return gate::run::execute(in, {});
  }
};

// The proxy's side: the same question from an agent in task "add", run 0,
// forwarded to a fake upstream that answers with fresh_answer().
struct ProxySide {
  gate::testing::TempDir tmp;
  gate::cache::Store store{tmp.path() / "cache"};
  gate::testing::FakeUpstream upstream{script()};
  std::mutex mutex;
  std::vector<gate::proxy::Observation> seen;
  const std::string body = R"({"messages":[{"content":"what is 2+2?","role":"user"}],"model":"m"})";

  static gate::testing::Script script() {
    gate::testing::Script s;
    const auto answer = fresh_answer();
    gate::testing::Fault f;
    f.status = 200;
    f.times = 1000;
    f.body = answer.body;
    f.headers = {answer.headers.begin() + 1, answer.headers.end()}; // the fake sets content-type itself
    s.faults = {f};
    return s;
  }
  ProxySide() { upstream.start(); }
  std::string key() const {
    return gate::proxy::request_key("openai", *gate::proxy::parse_target("/t/add/r/0/chat/completions"), body,
                                    0);
  }
  gate::proxy::Reply ask(CacheMode mode, const gate::cache::Store* trusted = nullptr) {
    gate::proxy::Server server(config_for(tmp.path() / "cache", mode, upstream.base_url()),
                               gate::environment_of({{k_key_var, k_canary}}));
    server.trust(trusted);
    server.observe([this](const gate::proxy::Observation& o) {
      std::lock_guard lock(mutex);
      seen.push_back(o);
    });
    return server.handle("POST", "/t/add/r/0/chat/completions", "127.0.0.1:0", {}, body);
  }
};

// An entry for `key` answering "recorded 4", as either side would read it.
gate::cache::Entry recorded_entry(const std::string& key, const std::string& path) {
  gate::model::ApiResponse r = gate::testing::openai_answer("recorded 4");
  gate::replay::Fresh f;
  f.key = key;
  f.provider = "openai";
  f.path = path;
  f.request = "{}";
  f.response = &r;
  return gate::replay::entry_for(f);
}

// Makes every write of `key` fail: its shard directory is a symlink, which
// the store refuses (a permission would not stop a test run as root).
void break_writes(const gate::cache::Store& store, const std::string& key, const fs::path& elsewhere) {
  fs::create_directories(store.root());
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, store.root() / key.substr(0, 2));
}

} // namespace

TEST_CASE("look_up and records: the decision for every cache mode") {
  gate::testing::TempDir tmp;
  gate::cache::Store store(tmp.path());
  const std::string held = gate::cache::make_key("openai", "/p", "{}", 0);
  const std::string absent = gate::cache::make_key("openai", "/p", "{}", 1);
  store.put(recorded_entry(held, "/p"));
  CHECK(gate::replay::look_up(&store, CacheMode::replay, held).verdict == Verdict::hit);
  CHECK(gate::replay::look_up(&store, CacheMode::replay_only, held).verdict == Verdict::hit);
  CHECK(gate::replay::look_up(&store, CacheMode::record, held).verdict == Verdict::send);
  CHECK(gate::replay::look_up(&store, CacheMode::off, held).verdict == Verdict::send);
  CHECK(gate::replay::look_up(&store, CacheMode::replay, absent).verdict == Verdict::send);
  CHECK(gate::replay::look_up(&store, CacheMode::replay_only, absent).verdict == Verdict::miss);
  CHECK(gate::replay::look_up(nullptr, CacheMode::replay_only, held).verdict == Verdict::miss);
  const auto hit = gate::replay::look_up(&store, CacheMode::replay, held);
  REQUIRE(hit.entry);
  CHECK(hit.entry->body.find("recorded 4") != std::string::npos);
  CHECK(hit.bytes == gate::cache::encode(*hit.entry));
  // A corrupt entry is a miss that says so.
  { std::ofstream(store.path_for(held), std::ios::app) << "x"; }
  const auto corrupt = gate::replay::look_up(&store, CacheMode::replay_only, held);
  CHECK(corrupt.verdict == Verdict::miss);
  CHECK(corrupt.warning.find("corrupt cache entry treated as a miss: ") == 0);

  CHECK(gate::replay::records(&store, CacheMode::replay, true));
  CHECK(gate::replay::records(&store, CacheMode::record, true));
  CHECK_FALSE(gate::replay::records(&store, CacheMode::off, true));
  CHECK_FALSE(gate::replay::records(&store, CacheMode::record, false));
  CHECK_FALSE(gate::replay::records(nullptr, CacheMode::record, true));
}

TEST_CASE(
    "record: both sides store the fresh answer with the allow-listed headers only and the key redacted") {
  KeyEnv env;
  RunnerSide runner;
  gate::run::Outcome out = runner.run(CacheMode::record);
  CHECK(out.complete);
  CHECK(runner.client.calls() == 1);
  auto from_runner = runner.store.get(runner.key());
  REQUIRE(from_runner.entry);
  check_recorded(*from_runner.entry);
  CHECK(out.tasks[0].runs[0].answer.find(k_canary) == std::string::npos);

  ProxySide proxy;
  gate::proxy::Reply r = proxy.ask(CacheMode::record);
  CHECK(r.status == 200);
  CHECK(proxy.upstream.requests() == 1);
  CHECK(r.body.find(k_canary) == std::string::npos); // the agent never sees the key either
  auto from_proxy = proxy.store.get(proxy.key());
  REQUIRE(from_proxy.entry);
  check_recorded(*from_proxy.entry);
  // The upstream got the real key from the proxy, as the runner's client sends it.
  CHECK(proxy.upstream.log().at(0).headers.at("authorization") == "Bearer " + k_canary);
}

TEST_CASE("hit: both sides answer from the cache and make no upstream call") {
  KeyEnv env;
  RunnerSide runner;
  runner.store.put(recorded_entry(runner.key(), "/chat/completions"));
  gate::run::Outcome out = runner.run(CacheMode::replay);
  CHECK(runner.client.calls() == 0);
  CHECK(out.tasks[0].runs[0].cache_hit);
  CHECK(out.tasks[0].runs[0].answer == "recorded 4");

  ProxySide proxy;
  proxy.store.put(recorded_entry(proxy.key(), "/t/add/r/0/chat/completions"));
  gate::proxy::Reply r = proxy.ask(CacheMode::replay);
  CHECK(proxy.upstream.requests() == 0);
  CHECK(r.status == 200);
  CHECK(r.body.find("recorded 4") != std::string::npos);
  CHECK(r.content_type == "application/json");
  REQUIRE(proxy.seen.size() == 1);
  CHECK(proxy.seen[0].cache_hit);
}

TEST_CASE(
    "replay-only miss: neither side calls the upstream; both name the key; the run's error is cache_miss") {
  KeyEnv env;
  RunnerSide runner;
  gate::run::Outcome out = runner.run(CacheMode::replay_only);
  CHECK(runner.client.calls() == 0);
  REQUIRE(out.misses.size() == 1);
  CHECK(out.misses[0].key == runner.key());
  CHECK(out.tasks[0].runs[0].error == gate::replay::k_miss_error);

  ProxySide proxy;
  gate::proxy::Reply r = proxy.ask(CacheMode::replay_only);
  CHECK(proxy.upstream.requests() == 0);
  CHECK(r.status == 404);
  CHECK(r.body.find(proxy.key()) != std::string::npos);
  REQUIRE(proxy.seen.size() == 1);
  CHECK(proxy.seen[0].missed);
  CHECK(proxy.seen[0].key == proxy.key());
}

TEST_CASE("a failed write is never a warning: the runner ends the run, the proxy withholds the answer") {
  KeyEnv env;
  RunnerSide runner;
  break_writes(runner.store, runner.key(), runner.tmp.path() / "elsewhere");
  gate::run::Outcome out = runner.run(CacheMode::record);
  CHECK(runner.client.calls() == 1);
  CHECK_FALSE(out.complete);
  CHECK(out.fatal_code == gate::Exit::cannot_run);
  CHECK(out.fatal.find("symlink") != std::string::npos);
  CHECK(fs::is_empty(runner.tmp.path() / "elsewhere"));

  ProxySide proxy;
  break_writes(proxy.store, proxy.key(), proxy.tmp.path() / "elsewhere");
  gate::proxy::Reply r = proxy.ask(CacheMode::record);
  CHECK(proxy.upstream.requests() == 1);
  CHECK(r.status == 500);
  CHECK(r.body.find("could not be recorded") != std::string::npos);
  CHECK(r.body.find("2+2 is 4") == std::string::npos);
  REQUIRE(proxy.seen.size() == 1);
  CHECK(proxy.seen[0].record_error.find("symlink") != std::string::npos);
  CHECK(fs::is_empty(proxy.tmp.path() / "elsewhere"));
}

TEST_CASE("trusted cache: both sides hold a hit to it: the same bytes, absent, or other bytes") {
  KeyEnv env;
  using gate::replay::Trust;
  gate::testing::TempDir trusted_dir;
  gate::cache::Store trusted(trusted_dir.path());

  RunnerSide runner;
  const gate::cache::Entry entry = recorded_entry(runner.key(), "/chat/completions");
  runner.store.put(entry);
  gate::run::Outcome absent = runner.run(CacheMode::replay_only, &trusted);
  REQUIRE(absent.untrusted.size() == 1);
  CHECK(absent.untrusted[0].task_id == "add");
  CHECK(absent.untrusted[0].key == runner.key());
  CHECK(absent.tampered.empty());
  trusted.put(entry);
  gate::run::Outcome same = runner.run(CacheMode::replay_only, &trusted);
  CHECK(same.untrusted.empty());
  CHECK(same.tampered.empty());
  gate::cache::Entry edited = entry;
  edited.body.replace(edited.body.find("recorded 4"), 10, "recorded 5");
  runner.store.put(edited);
  gate::run::Outcome differs = runner.run(CacheMode::replay_only, &trusted);
  REQUIRE(differs.tampered.size() == 1);
  CHECK(differs.tampered[0].key == runner.key());
  CHECK(differs.untrusted.empty());

  ProxySide proxy;
  const gate::cache::Entry agent_entry = recorded_entry(proxy.key(), "/t/add/r/0/chat/completions");
  proxy.store.put(agent_entry);
  std::vector<Trust> seen;
  for (int step = 0; step < 3; ++step) {
    if (step == 1) trusted.put(agent_entry);
    if (step == 2) {
      gate::cache::Entry e = agent_entry;
      e.body.replace(e.body.find("recorded 4"), 10, "recorded 5");
      proxy.store.put(e);
    }
    proxy.seen.clear();
    CHECK(proxy.ask(CacheMode::replay_only, &trusted).status == 200);
    REQUIRE(proxy.seen.size() == 1);
    seen.push_back(proxy.seen[0].trust);
  }
  CHECK(seen == std::vector<Trust>{Trust::absent, Trust::same, Trust::differs});
  // Without a trusted cache nothing is held to it.
  proxy.seen.clear();
  proxy.ask(CacheMode::replay_only);
  CHECK(proxy.seen.at(0).trust == Trust::same);
  CHECK(proxy.upstream.requests() == 0);
}

TEST_CASE("vouch: a differing hit the remote served leaves the cache directory; a local one stays") {
  using gate::replay::Trust;
  gate::testing::TempDir trusted_dir, local_dir;
  gate::cache::Store trusted(trusted_dir.path()), local(local_dir.path());
  const std::string key(64, 'a');
  gate::cache::Entry entry = recorded_entry(key, "/chat/completions");
  trusted.put(entry);
  entry.body.replace(entry.body.find("recorded 4"), 10, "recorded 5");
  local.put(entry);
  gate::replay::Decision hit = gate::replay::look_up(&local, CacheMode::replay_only, key);
  REQUIRE(hit.verdict == gate::replay::Verdict::hit);
  CHECK(hit.remote.empty());
  // The branch's own entry: refused by the caller, left for its author.
  CHECK(gate::replay::vouch(trusted, local, key, hit) == Trust::differs);
  CHECK(local.get(key).entry.has_value());
  // The same bytes from a shared cache: look_up copied them here; removed.
  hit.remote = "http://cache.internal/gate";
  CHECK(gate::replay::vouch(trusted, local, key, hit) == Trust::differs);
  CHECK_FALSE(local.get(key).entry.has_value());
  // A remote hit the trusted cache does not hold is only listed: kept.
  const std::string other(64, 'b');
  local.put(recorded_entry(other, "/chat/completions"));
  hit = gate::replay::look_up(&local, CacheMode::replay_only, other);
  hit.remote = "http://cache.internal/gate";
  CHECK(gate::replay::vouch(trusted, local, other, hit) == Trust::absent);
  CHECK(local.get(other).entry.has_value());
}

#include <doctest.h>

#include <atomic>
#include <boost/json/parse.hpp>
#include <cstdlib>
#include <thread>

#include <gate/model/api.hpp>
#include <gate/model/stream.hpp>
#include <gate/net/http_client.hpp>
#include <tests/support/fake_upstream.hpp>

using gate::model::ApiCall;
using gate::model::ApiResponse;
using gate::model::Bucket;
using gate::net::HttpOptions;
using gate::testing::FakeUpstream;
using gate::testing::Fault;
using gate::testing::Script;

namespace {

constexpr const char* k_key_env = "GATE_TEST_STREAM_KEY";

gate::Environment key_env() { return gate::environment_of({{k_key_env, "sk-test-stream-0000"}}); }

HttpOptions fast() {
  HttpOptions o;
  o.backoff_base_s = 0.001;
  o.backoff_cap_s = 0.5;
  return o;
}

gate::config::ModelConfig model_for(const FakeUpstream& server, const std::string& provider) {
  gate::config::ModelConfig m;
  m.provider = provider;
  m.name = "fake-model";
  m.api_key_env = k_key_env;
  m.base_url =
      provider == "anthropic" ? "http://127.0.0.1:" + std::to_string(server.port()) : server.base_url();
  m.timeout_s = 5;
  m.max_retries = 2;
  return m;
}

ApiCall call_for(const gate::config::ModelConfig& m, const std::string& question, bool stream) {
  ApiCall c{m.provider, gate::model::endpoint_path(m),
            gate::model::build_request(m, "", {{"user", question}})};
  if (stream) {
    c.body = gate::model::with_streaming(m.provider, c.body);
    c.stream = true;
  }
  return c;
}

} // namespace

TEST_CASE("rel-29: a streamed call gives the same reply and usage as a plain one, both providers") {
  for (const char* provider : {"openai", "anthropic"}) {
    CAPTURE(provider);
    FakeUpstream server(Script{});
    server.start();
    auto m = model_for(server, provider);
    auto client = gate::net::make_http_client(m, key_env(), fast());
    int attempts = 0;
    ApiResponse plain = client->send(call_for(m, "count the words in this sentence", false), attempts);
    ApiResponse streamed = client->send(call_for(m, "count the words in this sentence", true), attempts);
    CHECK(attempts == 1);
    REQUIRE(streamed.status == 200);
    auto a = gate::model::parse_response(provider, plain);
    auto b = gate::model::parse_response(provider, streamed);
    CHECK(b.bucket == Bucket::none);
    CHECK(b.text == a.text);
    CHECK(b.text == "echo: count the words in this sentence");
    CHECK(b.finish_reason == a.finish_reason);
    REQUIRE(a.usage.has_value());
    REQUIRE(b.usage.has_value());
    CHECK(b.usage->prompt_tokens == a.usage->prompt_tokens);         // 6 words + 3 = 9
    CHECK(b.usage->completion_tokens == a.usage->completion_tokens); // 7 words + 1 = 8
    CHECK(b.usage->prompt_tokens == 9);
    CHECK(b.usage->completion_tokens == 8);
    // The assembled form is the provider's plain JSON: what the cache stores.
    CHECK(boost::json::parse(streamed.body).is_object());
    REQUIRE(streamed.ttft_ms.has_value());
    CHECK(*streamed.ttft_ms >= 0);
    CHECK(*streamed.ttft_ms <= streamed.latency_ms);
    CHECK_FALSE(plain.ttft_ms.has_value());
    REQUIRE(streamed.attempt_log.size() == 1);
    CHECK(streamed.attempt_log[0].status == 200);
    CHECK(streamed.attempt_log[0].bucket.empty());
    auto log = server.log();
    REQUIRE(log.size() == 2);
    CHECK(log[1].headers["accept"] == "text/event-stream");
    CHECK(log[1].body.find("\"stream\":true") != std::string::npos);
    CHECK((log[1].body.find("\"include_usage\":true") != std::string::npos) ==
          (std::string(provider) == "openai"));
  }
}

TEST_CASE("rel-27: a 200 followed by an error event fails the attempt, which is retried") {
  for (const char* provider : {"openai", "anthropic"}) {
    CAPTURE(provider);
    Fault f;
    f.status = 529; // overloaded: retryable
    f.stream = "error";
    Script s;
    s.faults = {f};
    FakeUpstream server(s);
    server.start();
    auto m = model_for(server, provider);
    auto client = gate::net::make_http_client(m, key_env(), fast());
    int attempts = 0;
    ApiResponse r = client->send(call_for(m, "hello", true), attempts);
    CHECK(attempts == 2);
    CHECK(server.requests() == 2);
    CHECK(r.status == 200);
    CHECK(gate::model::parse_response(provider, r).text == "echo: hello");
    REQUIRE(r.attempt_log.size() == 2);
    CHECK(r.attempt_log[0].status != 200);
    CHECK_FALSE(r.attempt_log[0].bucket.empty());
    CHECK(r.attempt_log[1].bucket.empty());
  }
}

TEST_CASE("rel-27: a mid-stream error that retrying cannot fix is not retried") {
  Fault f;
  f.status = 400;
  f.stream = "error";
  f.body = "";
  Script s;
  s.faults = {f};
  FakeUpstream server(s);
  server.start();
  auto m = model_for(server, "openai");
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hello", true), attempts);
  CHECK(attempts == 1);
  CHECK(r.status / 100 == 4);
  CHECK(gate::model::parse_response("openai", r).bucket != Bucket::none);
}

TEST_CASE("rel-28: a stream that ends without its end marker is a failed, retried attempt") {
  for (const char* provider : {"openai", "anthropic"}) {
    CAPTURE(provider);
    Fault f;
    f.stream = "cut";
    f.times = 5;
    Script s;
    s.faults = {f};
    FakeUpstream server(s);
    server.start();
    auto m = model_for(server, provider);
    m.max_retries = 1;
    auto client = gate::net::make_http_client(m, key_env(), fast());
    int attempts = 0;
    ApiResponse r = client->send(call_for(m, "hello", true), attempts);
    CHECK(attempts == 2);
    CHECK(r.status == 0);
    CHECK(r.body.rfind("connection: stream ended without", 0) == 0);
    auto reply = gate::model::parse_response(provider, r);
    CHECK(reply.bucket == Bucket::connection);
    CHECK_FALSE(reply.usage.has_value());
    REQUIRE(r.attempt_log.size() == 2);
    CHECK(r.attempt_log[1].bucket == "connection");
  }
}

TEST_CASE("a server that ignores stream:true and answers JSON is read as usual") {
  // The fake streams whenever asked; a call flagged stream with a plain body
  // reaches it as a plain request.
  FakeUpstream server(Script{});
  server.start();
  auto m = model_for(server, "openai");
  auto client = gate::net::make_http_client(m, key_env(), fast());
  ApiCall c = call_for(m, "plain please", false);
  c.stream = true;
  int attempts = 0;
  ApiResponse r = client->send(c, attempts);
  CHECK(r.status == 200);
  CHECK(gate::model::parse_response("openai", r).text == "echo: plain please");
  CHECK_FALSE(r.ttft_ms.has_value());
}

TEST_CASE("rel-26: a 429 storm with 50 workers: the pool slows down, requests stay bounded, all finish") {
  // Every request in the first 300 ms gets 429 with retry-after-ms 100.
  // Left alone, 50 workers would each retry every 100 ms: about
  // 50 * (300 / 100 + 1) = 200 requests in the storm. The shared limiter
  // pauses the whole pool for the server's delay and halves the calls in
  // flight per overload: 50, then 25, 12, 6 at about 100 ms steps = 93.
  Fault storm;
  storm.status = 429;
  storm.during_ms = 300;
  storm.headers = {{"retry-after-ms", "100"}};
  Script s;
  s.faults = {storm};
  FakeUpstream server(s);
  server.start(0, 4);
  auto m = model_for(server, "openai");
  m.max_retries = 6;
  auto client = gate::net::make_http_client(m, key_env(), fast());
  constexpr int workers = 50;
  client->expect_workers(workers);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  std::atomic<int> rate_limited_attempts{0};
  for (int i = 0; i < workers; ++i)
    threads.emplace_back([&, i] {
      int attempts = 0;
      ApiResponse r = client->send(call_for(m, "task " + std::to_string(i), false), attempts);
      if (r.status == 200) ++ok;
      for (const auto& a : r.attempt_log)
        if (a.bucket == "rate_limit") ++rate_limited_attempts;
    });
  for (auto& t : threads)
    t.join();
  CHECK(ok == workers);
  auto total = server.requests();
  CAPTURE(total);
  CAPTURE(rate_limited_attempts.load());
  // Every request beyond the 50 successes was a 429 the workers saw.
  CHECK(total == static_cast<std::uint64_t>(workers + rate_limited_attempts));
  // Bounded well below what 50 independent workers would send.
  CHECK(rate_limited_attempts <= 120);
  MESSAGE("429 storm: " << rate_limited_attempts.load() << " rate-limited attempts, " << total
                        << " requests");
}

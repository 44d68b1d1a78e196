#include <doctest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include <gate/model/api.hpp>
#include <gate/net/http_client.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/version.hpp>
#include <tests/support/fake_upstream.hpp>

using gate::model::ApiCall;
using gate::model::ApiResponse;
using gate::model::Bucket;
using gate::net::HttpOptions;
using gate::testing::FakeUpstream;
using gate::testing::Script;

namespace {

constexpr const char* k_canary = "sk-canary-7f3a9b1c2d4e5f60";
constexpr const char* k_key_env = "GATE_TEST_NET_KEY";

// The environment clients are made with: the test key only.
gate::Environment key_env() { return gate::environment_of({{k_key_env, k_canary}}); }

// Retry tests wait milliseconds, not seconds.
HttpOptions fast() {
  HttpOptions o;
  o.backoff_base_s = 0.001;
  o.backoff_cap_s = 0.5;
  return o;
}

gate::config::ModelConfig model_for(const FakeUpstream& server, const std::string& provider = "openai") {
  gate::config::ModelConfig m;
  m.provider = provider;
  m.name = "fake-model";
  m.api_key_env = k_key_env;
  m.key_alias = "test";
  // Anthropic base URLs carry no version; the fake serves both under any prefix.
  m.base_url =
      provider == "anthropic" ? "http://127.0.0.1:" + std::to_string(server.port()) : server.base_url();
  m.timeout_s = 5;
  m.max_retries = 3;
  return m;
}

ApiCall call_for(const gate::config::ModelConfig& m, const std::string& question) {
  return {m.provider, gate::model::endpoint_path(m), gate::model::build_request(m, "", {{"user", question}})};
}

bool mentions_secret(const ApiResponse& r) {
  if (r.body.find(k_canary) != std::string::npos || r.body.find("5f60") != std::string::npos) return true;
  for (const auto& [k, v] : r.headers)
    if (gate::contains_secret(k) || gate::contains_secret(v)) return true;
  return gate::contains_secret(r.body);
}

Script script_from(const std::string& json) { return gate::testing::parse_script(json); }

} // namespace

TEST_CASE("fake upstream scripts are read strictly") {
  auto s = script_from(R"({"latency_ms":5,"rules":[{"match":"a","answers":["x","y"]}],
    "faults":[{"status":429,"times":2,"headers":{"retry-after":"1"},"close":false}]})");
  CHECK(s.latency_ms == 5);
  REQUIRE(s.rules.size() == 1);
  CHECK(s.rules[0].answers.size() == 2);
  REQUIRE(s.faults.size() == 1);
  CHECK(s.faults[0].status == 429);
  CHECK(s.faults[0].times == 2);
  CHECK(s.faults[0].match == "");
  s = script_from(R"({"prefix":"/v1","models":["a","b"],
    "faults":[{"status":529,"stream":"error"},{"status":429,"during_ms":300}]})");
  CHECK(s.prefix == "/v1");
  CHECK(s.models == std::vector<std::string>{"a", "b"});
  REQUIRE(s.faults.size() == 2);
  CHECK(s.faults[0].stream == "error");
  CHECK(s.faults[1].during_ms == 300);
  s = script_from(
      R"({"azure_api_version":"2024-10-21","no_usage":true,"reject_seed":true,"error_style":"gemini"})");
  CHECK(s.azure_api_version == "2024-10-21");
  CHECK(s.no_usage);
  CHECK(s.reject_seed);
  CHECK(s.error_style == "gemini");
  for (const char* bad : {R"({"faults":[{"stream":"cutt"}]})", R"({"models":[1]})", R"({"prefix":3})",
                          R"({"error_style":"google"})", R"({"no_usage":1})"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(gate::testing::parse_script(bad), gate::Error);
  }
  for (const char* bad : {R"({"rulez":[]})", R"({"rules":[{"answers":[]}]})", R"({"faults":[{"status":99}]})",
                          R"({"faults":[{"status":"500"}]})", R"({"latency_ms":-1})", "[1,"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(gate::testing::parse_script(bad), gate::Error);
  }
}

TEST_CASE("parse_url") {
  auto u = gate::net::parse_url("http://127.0.0.1:8080/v1/");
  CHECK(u.scheme == "http");
  CHECK(u.host == "127.0.0.1");
  CHECK(u.port == "8080");
  CHECK(u.path_prefix == "/v1");
  u = gate::net::parse_url("HTTPS://api.openai.com/v1");
  CHECK(u.scheme == "https");
  CHECK(u.port == "443");
  u = gate::net::parse_url("http://localhost");
  CHECK(u.port == "80");
  CHECK(u.path_prefix == "");
  u = gate::net::parse_url("http://[::1]:9000/x");
  CHECK(u.host == "[::1]");
  CHECK(u.port == "9000");
  for (const char* bad : {"127.0.0.1:80", "ftp://h/", "http://", "http://h:0", "http://h:70000", "http://h:x",
                          "http://user:pw@h/", "http://h/v1?key=1", "http://h/a b", "http://[::1/"}) {
    CAPTURE(bad);
    try {
      gate::net::parse_url(bad);
      FAIL("accepted");
    } catch (const gate::Error& e) {
      CHECK(e.code() == gate::Exit::bad_input);
      CHECK(std::string(e.what()).find("base URL") != std::string::npos);
    }
  }
}

TEST_CASE("retry policy by status and server hints") {
  for (int s : {408, 409, 429, 500, 502, 503, 504, 529})
    CHECK(gate::net::retryable_response(s, {}, ""));
  for (int s : {200, 400, 401, 403, 404, 422, 501})
    CHECK_FALSE(gate::net::retryable_response(s, {}, ""));
  CHECK_FALSE(gate::net::retryable_response(503, {{"x-should-retry", "false"}}, ""));
  CHECK(gate::net::retryable_response(400, {{"x-should-retry", "true"}}, ""));
  CHECK_FALSE(gate::net::retryable_response(429, {}, R"({"error":{"code":"insufficient_quota"}})"));
}

TEST_CASE("server delay from retry-after-ms, seconds, an HTTP date or garbage") {
  auto now = std::chrono::system_clock::from_time_t(784111777); // Sun, 06 Nov 1994 08:49:37 GMT
  CHECK(gate::net::server_delay_s({{"retry-after-ms", "250"}}, now) == doctest::Approx(0.25)); // 250/1000
  CHECK(gate::net::server_delay_s({{"retry-after", "2"}}, now) == doctest::Approx(2.0));
  CHECK(gate::net::server_delay_s({{"retry-after", " 1.5 "}}, now) == doctest::Approx(1.5));
  // ms wins over seconds when both are sent.
  CHECK(gate::net::server_delay_s({{"retry-after", "9"}, {"retry-after-ms", "100"}}, now) ==
        doctest::Approx(0.1));
  // 08:50:07 - 08:49:37 = 30 s.
  CHECK(gate::net::server_delay_s({{"retry-after", "Sun, 06 Nov 1994 08:50:07 GMT"}}, now) ==
        doctest::Approx(30));
  // A date in the past means "now".
  CHECK(gate::net::server_delay_s({{"retry-after", "Sun, 06 Nov 1994 08:00:00 GMT"}}, now) ==
        doctest::Approx(0));
  CHECK_FALSE(gate::net::server_delay_s({{"retry-after", "soon"}}, now).has_value());
  CHECK_FALSE(gate::net::server_delay_s({{"retry-after", "-3"}}, now).has_value());
  CHECK_FALSE(gate::net::server_delay_s({{"retry-after", "1e999"}}, now).has_value());
  CHECK_FALSE(gate::net::server_delay_s({}, now).has_value());
}

TEST_CASE("exponential backoff with jitter, capped") {
  HttpOptions o; // base 0.5 s, cap 8 s
  // attempt 0: d = 0.5 * 2^0 = 0.5; u = 0 -> 0.5 * 0.5 = 0.25; u = 1 -> 0.5.
  CHECK(gate::net::backoff_delay_s(o, 0, 0.0) == doctest::Approx(0.25));
  CHECK(gate::net::backoff_delay_s(o, 0, 1.0) == doctest::Approx(0.5));
  // attempt 2: d = 0.5 * 4 = 2; u = 0.5 -> 2 * 0.75 = 1.5.
  CHECK(gate::net::backoff_delay_s(o, 2, 0.5) == doctest::Approx(1.5));
  // attempt 5: 0.5 * 32 = 16 > cap 8; u = 0.25 -> 8 * 0.625 = 5.
  CHECK(gate::net::backoff_delay_s(o, 5, 0.25) == doctest::Approx(5.0));
  CHECK(gate::net::backoff_delay_s(o, 1000, 1.0) == doctest::Approx(8.0));
}

TEST_CASE("a plain OpenAI call: headers, body and usage") {
  FakeUpstream server(Script{});
  server.start();
  auto m = model_for(server);
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "what is two plus two"), attempts);
  CHECK(attempts == 1);
  CHECK(r.status == 200);
  CHECK(r.latency_ms > 0);
  auto reply = gate::model::parse_response("openai", r);
  CHECK(reply.bucket == Bucket::none);
  CHECK(reply.text == "echo: what is two plus two");
  REQUIRE(reply.usage.has_value());
  CHECK(reply.usage->prompt_tokens == 8);     // 5 words + 3
  CHECK(reply.usage->completion_tokens == 7); // "echo:" + 5 words = 6, + 1

  auto log = server.log();
  REQUIRE(log.size() == 1);
  CHECK(log[0].method == "POST");
  CHECK(log[0].target == "/v1/chat/completions");
  CHECK(log[0].body == call_for(m, "what is two plus two").body);
  CHECK(log[0].headers["host"] == "127.0.0.1:" + std::to_string(server.port()));
  CHECK(log[0].headers["content-type"] == "application/json");
  CHECK(log[0].headers["user-agent"] == std::string("gate/") + gate::k_version);
  CHECK(log[0].headers["authorization"] == std::string("Bearer ") + k_canary);
  CHECK(log[0].headers.count("x-api-key") == 0);
  bool content_type_kept = false;
  for (const auto& [k, v] : r.headers)
    content_type_kept = content_type_kept || (k == "content-type");
  CHECK(content_type_kept);
}

TEST_CASE("a plain Anthropic call: x-api-key, version header, /v1/messages") {
  FakeUpstream server(Script{});
  server.start();
  auto m = model_for(server, "anthropic");
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hello"), attempts);
  CHECK(r.status == 200);
  auto reply = gate::model::parse_response("anthropic", r);
  CHECK(reply.bucket == Bucket::none);
  CHECK(reply.text == "echo: hello");
  REQUIRE(reply.usage.has_value());
  CHECK(reply.usage->prompt_tokens == 4);     // "hello" = 1 word + 3
  CHECK(reply.usage->completion_tokens == 3); // "echo: hello" = 2 words + 1
  // The top-level system prompt counts as prompt words too: 2 + 1 + 3 = 6.
  ApiCall with_system{"anthropic", "/v1/messages",
                      gate::model::build_request(m, "Be brief.", {{"user", "hello"}})};
  reply = gate::model::parse_response("anthropic", client->send(with_system, attempts));
  REQUIRE(reply.usage.has_value());
  CHECK(reply.usage->prompt_tokens == 6);
  auto log = server.log();
  REQUIRE(log.size() == 2);
  CHECK(log[0].target == "/v1/messages");
  CHECK(log[0].headers["x-api-key"] == k_canary);
  CHECK(log[0].headers["anthropic-version"] == "2023-06-01");
  CHECK(log[0].headers.count("authorization") == 0);
}

TEST_CASE("an Azure call carries the key in api-key; a caller's api-key header is refused") {
  Script s;
  s.azure_api_version = "2024-10-21";
  FakeUpstream server(s);
  server.start();
  auto m = model_for(server, "azure");
  m.base_url = "http://127.0.0.1:" + std::to_string(server.port()) + "/openai";
  m.api_version = "2024-10-21";
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hello"), attempts);
  CHECK(r.status == 200);
  CHECK(gate::model::parse_response("openai", r).text == "echo: hello");
  auto log = server.log();
  REQUIRE(log.size() == 1);
  CHECK(log[0].target == "/openai/deployments/fake-model/chat/completions?api-version=2024-10-21");
  CHECK(log[0].headers["api-key"] == k_canary);
  CHECK(log[0].headers.count("authorization") == 0);
  ApiCall smuggled = call_for(m, "hello");
  smuggled.headers = {{"api-key", "other"}};
  CHECK_THROWS_AS(client->send(smuggled, attempts), gate::Error);
}

TEST_CASE("keep-alive: one thread's calls share one connection") {
  FakeUpstream server(script_from(R"({"rules":[{"match":"","answers":["a","b","c"]}]})"));
  server.start();
  auto m = model_for(server);
  auto client = gate::net::make_http_client(m, key_env(), fast());
  std::vector<std::string> answers;
  for (int i = 0; i < 5; ++i) {
    int attempts = 0;
    ApiResponse r = client->send(call_for(m, "same question"), attempts);
    CHECK(attempts == 1);
    answers.push_back(gate::model::parse_response("openai", r).text);
  }
  CHECK(server.requests() == 5);
  CHECK(server.connections() == 1);
  // The same body five times: occurrences 0..4 cycle through the answers.
  CHECK(answers == std::vector<std::string>{"a", "b", "c", "a", "b"});
}

TEST_CASE("a pooled connection the server dropped is replaced without an extra attempt") {
  FakeUpstream first(Script{});
  first.start();
  unsigned short port = first.port();
  auto m = model_for(first);
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  CHECK(client->send(call_for(m, "one"), attempts).status == 200);
  first.stop(); // closes the pooled connection from the server side
  FakeUpstream second(Script{});
  second.start(port);
  ApiResponse r = client->send(call_for(m, "two"), attempts);
  CHECK(r.status == 200);
  CHECK(attempts == 1);
  CHECK(second.requests() == 1);
}

TEST_CASE("many threads share one client") {
  FakeUpstream server(Script{});
  server.start(0, 4);
  auto m = model_for(server);
  auto client = gate::net::make_http_client(m, key_env(), fast());
  std::atomic<int> ok{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        int attempts = 0;
        auto r = client->send(call_for(m, "q" + std::to_string(t) + "-" + std::to_string(i)), attempts);
        auto reply = gate::model::parse_response("openai", r);
        if (reply.text == "echo: q" + std::to_string(t) + "-" + std::to_string(i)) ++ok;
      }
    });
  for (auto& w : workers)
    w.join();
  CHECK(ok == 20);
  CHECK(server.requests() == 20);
  CHECK(server.connections() == 4); // one per worker thread
}

TEST_CASE("429 with Retry-After: 0 is retried after a backoff: the server's delay is a lower bound") {
  FakeUpstream server(script_from(R"({"faults":[{"status":429,"times":1,"headers":{"retry-after":"0"}}]})"));
  server.start();
  auto m = model_for(server);
  auto client = gate::net::make_http_client(
      m, key_env()); // default backoff: 0.5 s * (0.5 + 0.5 u) before the first retry
  int attempts = 0;
  auto start = std::chrono::steady_clock::now();
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= std::chrono::milliseconds(250));
  CHECK(took < std::chrono::milliseconds(1500));
  CHECK(attempts == 2);
  CHECK(r.status == 200);
  CHECK(server.requests() == 2);
  CHECK(gate::model::parse_response("openai", r).text == "echo: hi");
  REQUIRE(r.attempt_log.size() == 2);
  CHECK(r.attempt_log[1].wait_ms >= 250);
}

namespace {

// One call through a fresh client against a server running `script`.
ApiResponse call_once(const std::string& script, int max_retries, const HttpOptions& o, int& attempts) {
  FakeUpstream server(script_from(script));
  server.start();
  auto m = model_for(server);
  m.max_retries = max_retries;
  return gate::net::make_http_client(m, key_env(), o)->send(call_for(m, "hi"), attempts);
}

} // namespace

TEST_CASE("rel-23: 429s do not spend max_retries; they are retried on a time budget of their own") {
  const std::string zero = R"(,"headers":{"retry-after":"0"}}]})";
  auto o = fast();
  o.backoff_base_s = 0.01;
  // Six 429s in a row with max_retries 1: the old policy gave up after two.
  int attempts = 0;
  ApiResponse r = call_once(R"({"faults":[{"status":429,"times":6)" + zero, 1, o, attempts);
  CHECK(r.status == 200);
  CHECK(attempts == 7);
  REQUIRE(r.attempt_log.size() == 7);
  // The backoff grows although the server says 0: 0.01 * 2^n * (0.5 .. 1).
  for (std::size_t i = 1; i < 7; ++i) {
    CAPTURE(i);
    CHECK(r.attempt_log[i].wait_ms >= 0.01 * 1000 * std::ldexp(1.0, static_cast<int>(i) - 1) * 0.5 - 1);
  }
  CHECK(r.attempt_log[6].wait_ms >= 150); // 0.01 * 32 * 0.5 s

  // A 429 that never ends gives up once the budget is spent, not before.
  o.backoff_cap_s = 0.05;
  o.rate_limit_budget_s = 0.6;
  auto start = std::chrono::steady_clock::now();
  ApiResponse lost = call_once(R"({"faults":[{"status":429,"times":1000)" + zero, 0, o, attempts);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(lost.status == 429);
  CHECK(attempts >= 10);
  CHECK(took >= 0.5);
  CHECK(took < 2.0);
  CHECK(gate::model::parse_response("openai", lost).bucket == Bucket::rate_limit);

  // Other failures still stop at max_retries.
  ApiResponse failed = call_once(R"({"faults":[{"status":503,"times":10}]})", 1, fast(), attempts);
  CHECK(failed.status == 503);
  CHECK(attempts == 2);
}

TEST_CASE("rel-25: a spent quota in either provider's words is a 429 that is not retried") {
  for (
      const char* body :
      {R"({"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}})",
       R"({"error":{"message":"Billing hard limit has been reached","type":"invalid_request_error","code":"billing_hard_limit_reached"}})",
       R"({"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low"}})"}) {
    CAPTURE(body);
    CHECK_FALSE(gate::net::retryable_response(429, {}, body));
  }
  CHECK_FALSE(gate::net::retryable_response(429, {{"x-should-retry", "false"}}, "{}"));
  CHECK(gate::net::retryable_response(429, {}, R"({"error":{"type":"rate_limit_error"}})"));
}

TEST_CASE("401 is not retried") {
  FakeUpstream server(script_from(R"({"faults":[{"status":401,"times":5}]})"));
  server.start();
  auto m = model_for(server);
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 1);
  CHECK(r.status == 401);
  CHECK(server.requests() == 1);
  CHECK(gate::model::parse_response("openai", r).bucket == Bucket::auth);
}

TEST_CASE("500 is retried up to max_retries, then returned") {
  FakeUpstream server(script_from(R"({"faults":[{"status":500,"times":10}]})"));
  server.start();
  auto m = model_for(server);
  m.max_retries = 2;
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 3); // the first try + 2 retries
  CHECK(r.status == 500);
  CHECK(server.requests() == 3);
  CHECK(gate::model::parse_response("openai", r).bucket == Bucket::server);
}

TEST_CASE(
    "x-should-retry: false and a wait above model.max_retry_after_s stop the retries, with the reason") {
  FakeUpstream server(script_from(R"({"faults":[
    {"match":"hint","status":503,"times":5,"headers":{"x-should-retry":"false"}},
    {"match":"long","status":429,"times":5,"headers":{"retry-after":"30"}},
    {"match":"busy","status":529,"times":5,"headers":{"retry-after":"30"}}]})"));
  server.start();
  auto m = model_for(server);
  CHECK(m.max_retry_after_s == 60); // as the official SDKs wait
  m.max_retry_after_s = 20;
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  CHECK(client->send(call_for(m, "hint"), attempts).status == 503);
  CHECK(attempts == 1);
  ApiResponse r = client->send(call_for(m, "long"), attempts);
  CHECK(r.status == 429);
  CHECK(attempts == 1);
  auto reply = gate::model::parse_response("openai", r);
  CHECK(reply.bucket == Bucket::rate_limit);
  CHECK(reply.error.find("retry-after 30") != std::string::npos);
  CHECK(reply.error.find("not retried: the server asked to wait 30 s (Retry-After), above "
                         "model.max_retry_after_s (20 s)") != std::string::npos);
  // Anthropic's overloaded 529 alike.
  ApiResponse busy = client->send(call_for(m, "busy"), attempts);
  CHECK(busy.status == 529);
  CHECK(attempts == 1);
  CHECK(gate::model::parse_response("openai", busy).error.find("above model.max_retry_after_s") !=
        std::string::npos);
}

TEST_CASE("a Retry-After within model.max_retry_after_s is waited out, above the backoff's own cap") {
  FakeUpstream server(script_from(R"({"faults":[
    {"match":"wait","status":503,"times":1,"headers":{"retry-after":"1"}},
    {"match":"limited","status":429,"times":1,"headers":{"retry-after":"1"}}]})"));
  server.start();
  auto m = model_for(server);
  m.max_retry_after_s = 1.5;
  // fast(): gate's own backoff never waits more than 0.5 s; the server's ask is honoured.
  auto client = gate::net::make_http_client(m, key_env(), fast());
  for (const char* q : {"wait", "limited"}) {
    CAPTURE(q);
    int attempts = 0;
    const auto start = std::chrono::steady_clock::now();
    ApiResponse r = client->send(call_for(m, q), attempts);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(r.status == 200);
    CHECK(attempts == 2);
    CHECK(waited >= 1.0);
    CHECK(r.gave_up.empty());
  }
}

TEST_CASE("a dropped connection is retried") {
  FakeUpstream server(script_from(R"({"faults":[{"close":true,"times":1}]})"));
  server.start();
  auto m = model_for(server);
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(r.status == 200);
  CHECK(attempts == 2);
  CHECK(server.requests() == 2);
}

TEST_CASE("connection refused gives status 0 after the retries") {
  unsigned short port = 0;
  {
    FakeUpstream gone(Script{});
    gone.start();
    port = gone.port();
  } // nothing listens on the port any more
  gate::config::ModelConfig m;
  m.name = "fake-model";
  m.api_key_env = k_key_env;
  m.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  m.max_retries = 1;
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 2);
  CHECK(r.status == 0);
  CHECK(r.body.rfind("connection: cannot connect to 127.0.0.1:" + std::to_string(port), 0) == 0);
  CHECK(gate::model::parse_response("openai", r).bucket == Bucket::connection);
}

TEST_CASE("a server slower than the deadline is a timeout") {
  FakeUpstream server(script_from(R"({"latency_ms":3000})"));
  server.start();
  auto m = model_for(server);
  m.timeout_s = 0.2;
  m.max_retries = 0;
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  auto start = std::chrono::steady_clock::now();
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  CHECK(attempts == 1);
  CHECK(r.status == 0);
  CHECK(r.body.rfind("timeout:", 0) == 0);
  CHECK(r.latency_ms >= 150);
  CHECK(gate::model::parse_response("openai", r).bucket == Bucket::timeout);
}

TEST_CASE("oversized response headers exceed the limit and are not retried") {
  // Three 30 KiB fields (one field value is limited to 64 KiB on the server side) = 90 KiB > 64 KiB.
  std::string big(30 * 1024, 'h');
  FakeUpstream server(script_from(R"({"faults":[{"status":200,"times":5,"headers":{"x-big-1":")" + big +
                                  R"(","x-big-2":")" + big + R"(","x-big-3":")" + big + R"("}}]})"));
  server.start();
  auto m = model_for(server);
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse r = client->send(call_for(m, "hi"), attempts);
  CHECK(attempts == 1);
  CHECK(r.status == 0);
  CHECK(r.body.rfind("response exceeds limit:", 0) == 0);
}

TEST_CASE("a missing key, or plain http to a remote host, cannot run") {
  gate::config::ModelConfig m;
  m.name = "x";
  m.base_url = "http://127.0.0.1:9/v1";
  m.api_key_env = "GATE_TEST_NET_MISSING";
  m.key_alias = "ci-key";
  try {
    gate::net::make_http_client(m, key_env());
    FAIL("no error");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::cannot_run);
    CHECK(std::string(e.what()) ==
          "no API key: environment variable GATE_TEST_NET_MISSING is not set (key alias ci-key); for a local "
          "server that takes no key, set model.api_key_env: null");
  }
  CHECK_THROWS_AS(gate::net::make_http_client(m, gate::environment_of({{"GATE_TEST_NET_MISSING", ""}})),
                  gate::Error);
  m.api_key_env = k_key_env;
  m.base_url = "http://api.example.com/v1";
  try {
    gate::net::make_http_client(m, key_env());
    FAIL("no error");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::cannot_run);
    CHECK(std::string(e.what()) ==
          "plain http:// to api.example.com would send the API key in clear text; use https://, or list the "
          "host in the environment variable GATE_ALLOW_HTTP (comma-separated)");
  }
  // Listed hosts (any case, spaces around commas) and loopback are allowed.
  CHECK(gate::net::make_http_client(
            m, gate::environment_of(
                   {{k_key_env, k_canary}, {"GATE_ALLOW_HTTP", "gw.internal, API.example.com"}})) != nullptr);
  for (const char* url : {"http://localhost:9/v1", "http://127.8.9.10:9", "http://[::1]:9/v1"}) {
    m.base_url = url;
    CHECK(gate::net::make_http_client(m, key_env()) != nullptr);
  }
}

TEST_CASE("the canary key is sent but never comes back in a response or error") {
  // The server echoes the key in an error body, a header and an answer.
  std::string key = k_canary;
  FakeUpstream server(
      script_from(R"({"rules":[{"match":"leak","answers":["your key is )" + key +
                  R"("]}],"faults":[{"match":"fail","status":400,"times":1,"body":"bad key )" + key +
                  R"(","headers":{"x-echo":")" + key + R"("}}]})"));
  server.start();
  auto m = model_for(server);
  auto client = gate::net::make_http_client(m, key_env(), fast());
  int attempts = 0;
  ApiResponse ok = client->send(call_for(m, "leak please"), attempts);
  ApiResponse bad = client->send(call_for(m, "fail please"), attempts);
  CHECK(ok.status == 200);
  CHECK(bad.status == 400);
  for (const auto& r : {ok, bad}) {
    CHECK_FALSE(mentions_secret(r));
    auto reply = gate::model::parse_response("openai", r);
    CHECK_FALSE(gate::contains_secret(reply.text));
    CHECK_FALSE(gate::contains_secret(reply.error));
    CHECK(reply.text.find(k_canary) == std::string::npos);
  }
  CHECK(gate::model::parse_response("openai", ok).text == "your key is [REDACTED]");
  auto log = server.log();
  REQUIRE(log.size() == 2);
  for (auto& entry : log)
    CHECK(entry.headers["authorization"] == std::string("Bearer ") + k_canary);
}

#include <doctest.h>

#include <gate/cache/store.hpp>
#include <gate/proxy/route.hpp>

using gate::proxy::host_allowed;
using gate::proxy::origin_form;
using gate::proxy::parse_target;
using gate::proxy::request_key;

TEST_CASE("a /t/<task>/r/<run>/ path is scoped to that task and run") {
  auto t = parse_target("/t/fix-bug/r/2/chat/completions");
  REQUIRE(t);
  CHECK(t->task == "fix-bug");
  CHECK(t->run == "2");
  CHECK(t->upstream_path == "/chat/completions");
  CHECK(t->scope_path == "/t/fix-bug/r/2/chat/completions");

  auto bare = parse_target("/t/a/r/0");
  REQUIRE(bare);
  CHECK(bare->upstream_path == "/");
}

TEST_CASE("other paths belong to the session") {
  auto t = parse_target("/v1/messages");
  REQUIRE(t);
  CHECK(t->task.empty());
  CHECK(t->run.empty());
  CHECK(t->upstream_path == "/v1/messages");
  CHECK(t->scope_path == "/v1/messages");
}

TEST_CASE("unusable paths are refused") {
  CHECK_FALSE(parse_target(""));
  CHECK_FALSE(parse_target("chat/completions"));
  CHECK_FALSE(parse_target("/chat/completions?x=1"));
  CHECK_FALSE(parse_target("/t/a/r/0/../../models"));
  CHECK_FALSE(parse_target("/t//r/0/chat/completions"));
  CHECK_FALSE(parse_target("/t/a/r//chat/completions"));
  CHECK_FALSE(parse_target("/t/a/x/0/chat/completions"));
}

TEST_CASE("percent-encoded dot segments are decoded first and refused like plain ones") {
  for (const char* path : {"/t/a/r/0/%2e%2e/%2e%2e/models", "/t/a/r/0/%2E%2E/x", "/t/a/r/0/.%2e/x",
                           "/t/a/r/0/%2e./x", "/%2e%2e/v2/chat/completions", "/t/a/r/0/%2e/x",
                           "/t/%2e%2e/r/0/x", "/t/a/r/0/..%2fx", "/t/a/r/0/%2F..", "/t/a/r/0/a%5c..%5cx",
                           "/t/a/r/0/a\\..\\x", "/t/a/r/0/%252e%252e/x", "/t/a/r/0/%2", "/t/a/r/0/%zz"}) {
    CAPTURE(path);
    CHECK_FALSE(parse_target(path));
  }
  // Escapes of unreserved characters are the same path; others are kept.
  auto t = parse_target("/t/a/r/0/chat/%63ompletions%20x");
  REQUIRE(t);
  CHECK(t->upstream_path == "/chat/completions%20x");
  CHECK(t->scope_path == "/t/a/r/0/chat/completions%20x");
}

TEST_CASE("only this proxy's own address is an acceptable Host") {
  CHECK(host_allowed("127.0.0.1:8080", 8080));
  CHECK(host_allowed("localhost:8080", 8080));
  CHECK(host_allowed("127.0.0.1", 8080));
  CHECK_FALSE(host_allowed("127.0.0.1:8081", 8080));
  CHECK_FALSE(host_allowed("api.openai.com", 8080));
  CHECK_FALSE(host_allowed("evil.example:8080", 8080));
  CHECK_FALSE(host_allowed("127.0.0.1.evil.example:8080", 8080));
  CHECK_FALSE(host_allowed("", 8080));
}

TEST_CASE("an absolute-form target is accepted only for this proxy") {
  CHECK(origin_form("/chat/completions", 9) == std::optional<std::string>("/chat/completions"));
  CHECK(origin_form("http://127.0.0.1:9/v1/messages", 9) == std::optional<std::string>("/v1/messages"));
  CHECK(origin_form("http://localhost:9", 9) == std::optional<std::string>("/"));
  CHECK_FALSE(origin_form("http://api.openai.com/v1/chat/completions", 9));
  CHECK_FALSE(origin_form("http://127.0.0.1:10/x", 9));
  CHECK_FALSE(origin_form("http://user@127.0.0.1:9/x", 9));
  CHECK_FALSE(origin_form("https://127.0.0.1:9/x", 9));
  CHECK_FALSE(origin_form("api.openai.com:443", 9));
}

TEST_CASE("the key separates scope, body and occurrence") {
  auto run0 = *parse_target("/t/a/r/0/chat/completions");
  auto run1 = *parse_target("/t/a/r/1/chat/completions");
  auto session = *parse_target("/chat/completions");
  const std::string body = R"({"model":"m"})";
  CHECK(request_key("openai", run0, body, 0) ==
        gate::cache::make_call_key("openai", "/t/a/chat/completions", body, "0", 0));
  CHECK(request_key("openai", session, body, 3) ==
        gate::cache::make_call_key("openai", "/chat/completions", body, "", 3));
  CHECK(request_key("openai", run0, body, 0) != request_key("openai", run0, body, 1));
  CHECK(request_key("openai", run0, body, 0) != request_key("openai", run1, body, 0));
  CHECK(request_key("openai", run0, body, 0) != request_key("openai", session, body, 0));
  CHECK(request_key("openai", run0, body, 0) != request_key("anthropic", run0, body, 0));
  CHECK(request_key("openai", session, body, 0).size() == 64);
}

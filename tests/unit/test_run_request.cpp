// run/request: refuse_shared_keys, the check that cache.ignore has not made
// different tasks' requests one cache key (issue 21, item 7).
#include <doctest.h>

#include <gate/cache/store.hpp>
#include <gate/run/request.hpp>
#include <gate/util/error.hpp>

using gate::run::PreparedRequest;

namespace {

gate::suite::Case case_of(const std::string& id, gate::suite::Kind kind = gate::suite::Kind::plain) {
  gate::suite::Case c;
  c.id = id;
  c.kind = kind;
  return c;
}

PreparedRequest request_of(const std::string& fingerprint, const std::string& body) {
  PreparedRequest p;
  p.fingerprint = fingerprint;
  p.call.body = body;
  return p;
}

} // namespace

TEST_CASE("different requests with one fingerprint are refused naming the first two tasks") {
  const auto a = case_of("a"), b = case_of("b\n"), c = case_of("c");
  const std::vector<const gate::suite::Case*> cases{&a, &b, &c};
  const std::vector<PreparedRequest> prepared{request_of("f1", "{\"messages\":1}"), request_of("f2", "{}"),
                                              request_of("f1", "{\"messages\":2}")};
  CHECK_THROWS_WITH_AS(gate::run::refuse_shared_keys(cases, prepared),
                       doctest::Contains("cache.ignore makes tasks \"a\" and \"c\" share one cache key"),
                       gate::Error);
  // The id is quoted as JSON: a newline in it cannot start a new line.
  const std::vector<PreparedRequest> with_b{request_of("f1", "{\"messages\":1}"), request_of("f1", "{}"),
                                            request_of("f3", "{}")};
  CHECK_THROWS_WITH_AS(gate::run::refuse_shared_keys(cases, with_b), doctest::Contains("\"a\" and \"b\\n\""),
                       gate::Error);
}

TEST_CASE("identical requests may share a key, and agent cases are not compared") {
  const auto a = case_of("a"), b = case_of("b"), agent = case_of("x", gate::suite::Kind::agent);
  const std::vector<const gate::suite::Case*> cases{&a, &b, &agent};
  CHECK_NOTHROW(gate::run::refuse_shared_keys(
      cases, {request_of("f1", "{\"same\":1}"), request_of("f1", "{\"same\":1}"), request_of("f1", "")}));
}

TEST_CASE("resend: a recorded request is sent again as recorded, under its own fingerprint") {
  gate::cache::Entry e;
  e.provider = "openai";
  e.path = "/chat/completions";
  e.request = R"({"messages":[{"content":"q v1","role":"user"}],"model":"m","user":"u"})";
  gate::config::Config cfg;
  PreparedRequest p = gate::run::resend(e, cfg);
  CHECK(p.call.provider == "openai");
  CHECK(p.call.path == "/chat/completions");
  CHECK(p.call.body == e.request);
  CHECK_FALSE(p.call.stream);
  CHECK(p.hashed_body == e.request);
  CHECK(p.fingerprint == gate::cache::make_fingerprint(e.provider, e.path, e.request));
  // Streaming as the config asks; the fingerprint is of the plain form.
  cfg.model.stream = true;
  cfg.model.max_tokens = 64;
  p = gate::run::resend(e, cfg);
  CHECK(p.call.stream);
  CHECK(p.call.body.find("\"stream\":true") != std::string::npos);
  CHECK(p.call.max_tokens == 64);
  CHECK(p.fingerprint == gate::cache::make_fingerprint(e.provider, e.path, e.request));
  // cache.ignore applies as to any request.
  cfg.cache.ignore = {"/user"};
  p = gate::run::resend(e, cfg);
  CHECK(p.hashed_body.find("\"user\":\"u\"") == std::string::npos);
  CHECK(p.call.body.find("\"user\":\"u\"") != std::string::npos); // still sent
}

// End-to-end: `gate doctor` against the fake upstream, one fault at a time.
#include <doctest.h>

#include <filesystem>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;
using gate::testing::FakeUpstream;
using gate::testing::Fault;
using gate::testing::Script;

namespace {

const std::string k_canary = "sk-canary-d0c70r-5e1f2a3b4c";
constexpr const char* k_env = "GATE_DOCTOR_TEST_KEY";

// A minimal gate.yaml pointing at `base_url`.
fs::path write_config(const TempDir& dir, const std::string& base_url,
                      const std::string& model = "fake-model", const std::string& provider = "openai") {
  fs::create_directories(dir.path() / "suite");
  spit(dir.path() / "gate.yaml", "suite:\n  path: suite\nmodel:\n  provider: " + provider +
                                     "\n  base_url: " + base_url + "\n  api_key_env: " + k_env +
                                     "\n  key_alias: doctor-alias\n  name: " + model + "\n");
  return dir.path() / "gate.yaml";
}

Result doctor(const fs::path& config, const std::string& key) {
  return run_gate({"doctor", "--config", config.string()}, config.parent_path(),
                  {{k_env, key}, {"HTTP_PROXY", ""}, {"http_proxy", ""}});
}

std::string origin(const FakeUpstream& s) { return "http://127.0.0.1:" + std::to_string(s.port()); }

bool has_line(const std::string& out, const std::string& verdict, const std::string& check,
              const std::string& text) {
  std::size_t at = 0;
  while ((at = out.find(verdict, at)) != std::string::npos) {
    std::size_t end = out.find('\n', at);
    std::string l = out.substr(at, end - at);
    if ((at == 0 || out[at - 1] == '\n') && l.find(" " + check) != std::string::npos &&
        l.find(text) != std::string::npos)
      return true;
    at = end;
  }
  return false;
}

void no_canary(const Result& r) {
  CHECK(r.out.find(k_canary) == std::string::npos);
  CHECK(r.err.find(k_canary) == std::string::npos);
  CHECK(r.out.find(k_canary.substr(k_canary.size() - 8)) == std::string::npos);
}

} // namespace

TEST_CASE("doctor: every check passes and the completion comes back: exit 0") {
  FakeUpstream server(Script{});
  server.start();
  TempDir dir;
  auto r = doctor(write_config(dir, server.base_url()), k_canary);
  CAPTURE(r.out);
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(has_line(r.out, "ok", "key",
                 "$GATE_DOCTOR_TEST_KEY (key alias doctor-alias) is set (" + std::to_string(k_canary.size()) +
                     " characters)"));
  CHECK(has_line(r.out, "ok", "proxy", "none set"));
  CHECK(has_line(r.out, "ok", "dns", "127.0.0.1"));
  CHECK(has_line(r.out, "ok", "tcp", "connected to 127.0.0.1:"));
  CHECK(has_line(r.out, "ok", "http", "plain http to 127.0.0.1"));
  CHECK(has_line(r.out, "ok", "completion", "HTTP 200"));
  CHECK(has_line(r.out, "ok", "completion", "echo: Reply with the single word OK."));
  no_canary(r);
  // The key went upstream, where it belongs.
  auto log = server.log();
  REQUIRE(!log.empty());
  CHECK(log.back().headers["authorization"] == "Bearer " + k_canary);
}

TEST_CASE("doctor: a missing key fails before any completion: exit 3") {
  FakeUpstream server(Script{});
  server.start();
  TempDir dir;
  auto r = doctor(write_config(dir, server.base_url()), "");
  CAPTURE(r.out);
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "FAIL", "key", "$GATE_DOCTOR_TEST_KEY (key alias doctor-alias) is not set"));
  CHECK(has_line(r.out, "skip", "completion", "no usable key"));
  for (const auto& l : server.log())
    CHECK(l.target.find("completions") == std::string::npos);
}

TEST_CASE("doctor: a placeholder key or one with whitespace is flagged, never shown") {
  FakeUpstream server(Script{});
  server.start();
  TempDir dir;
  auto config = write_config(dir, server.base_url());
  auto r = doctor(config, "YOUR_API_KEY");
  CHECK(has_line(r.out, "warn", "key", "looks like a placeholder"));
  CHECK(r.out.find("YOUR_API_KEY") == std::string::npos);
  r = doctor(config, k_canary + "\n");
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "FAIL", "key", "holds whitespace or a line break"));
  no_canary(r);
}

TEST_CASE("doctor: 401 names the variable and the alias, not the key") {
  Fault f;
  f.status = 401;
  f.times = 10;
  f.body = R"({"error":{"message":"Incorrect API key provided: )" + k_canary +
           R"(","type":"invalid_request_error"}})";
  Script s;
  s.faults = {f};
  FakeUpstream server(s);
  server.start();
  TempDir dir;
  auto r = doctor(write_config(dir, server.base_url()), k_canary);
  CAPTURE(r.out);
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "FAIL", "completion", "auth"));
  CHECK(has_line(r.out, "hint", "key", "$GATE_DOCTOR_TEST_KEY (key alias doctor-alias) was refused"));
  no_canary(r);
}

TEST_CASE("doctor: a 404 from a base URL missing /v1 says the one that works") {
  Script s;
  s.prefix = "/v1";
  FakeUpstream server(s);
  server.start();
  TempDir dir;
  auto r = doctor(write_config(dir, origin(server)), k_canary);
  CAPTURE(r.out);
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "FAIL", "completion", "not_found"));
  CHECK(has_line(r.out, "hint", "base_url", "but " + origin(server) + "/v1 works"));
  no_canary(r);
}

TEST_CASE("doctor: a 404 from a base URL with a /v1 too many says the one that works") {
  Script s;
  s.prefix = "/api";
  FakeUpstream server(s);
  server.start();
  TempDir dir;
  // Neither /api/v1 (given) nor ... /api works: the fake serves /api/chat/completions.
  auto r = doctor(write_config(dir, origin(server) + "/api/v1"), k_canary);
  CAPTURE(r.out);
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "hint", "base_url", "but " + origin(server) + "/api works"));
  // A base URL where neither form works says so.
  r = doctor(write_config(dir, origin(server) + "/elsewhere"), k_canary);
  CHECK(has_line(r.out, "hint", "base_url", "nor under " + origin(server) + "/elsewhere/v1"));
}

TEST_CASE("doctor: an unknown model lists the models the endpoint offers") {
  Script s;
  s.models = {"model-b", "model-a"};
  FakeUpstream server(s);
  server.start();
  TempDir dir;
  auto r = doctor(write_config(dir, server.base_url(), "no-such-model"), k_canary);
  CAPTURE(r.out);
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "FAIL", "model", "does not know model \"no-such-model\""));
  CHECK(has_line(r.out, "info", "models", "the endpoint offers: model-a, model-b"));
  no_canary(r);
}

TEST_CASE("doctor: nothing listening is a tcp failure: exit 3") {
  unsigned short port = 0;
  {
    FakeUpstream server(Script{});
    server.start();
    port = server.port();
  }
  TempDir dir;
  auto r = doctor(write_config(dir, "http://127.0.0.1:" + std::to_string(port) + "/v1"), k_canary);
  CAPTURE(r.out);
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "FAIL", "tcp", "cannot connect to 127.0.0.1:"));
  CHECK(has_line(r.out, "skip", "completion", "no connection"));
}

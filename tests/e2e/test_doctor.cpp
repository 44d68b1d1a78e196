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
// `extra` holds more model lines (indented by two), after the key variable.
fs::path write_config(const TempDir& dir, const std::string& base_url,
                      const std::string& model = "fake-model", const std::string& provider = "openai",
                      const std::string& extra = "") {
  fs::create_directories(dir.path() / "suite");
  spit(dir.path() / "gate.yaml", "suite:\n  path: suite\nmodel:\n  provider: " + provider +
                                     "\n  base_url: " + base_url + "\n  api_key_env: " + k_env + "\n" +
                                     extra + "  key_alias: doctor-alias\n  name: " + model + "\n");
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
  CHECK(has_line(r.out, "FAIL", "tcp", "is the server running? (ollama serve, vllm serve, llama-server)"));
  CHECK(has_line(r.out, "skip", "completion", "no connection"));
}

TEST_CASE("doctor: azure deployment URLs: the api-key header, the api-version; exit 0") {
  Script s = gate::testing::azure_script("2024-10-21", {"gpt4o-prod"});
  FakeUpstream server(s);
  server.start();
  TempDir dir;
  const std::string base = origin(server) + "/openai";
  auto r = doctor(write_config(dir, base, "gpt4o-prod", "azure", "  api_version: 2024-10-21\n"), k_canary);
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(
      has_line(r.out, "ok", "azure",
               "deployment URL " + base + "/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21"));
  CHECK(has_line(r.out, "ok", "completion", "HTTP 200"));
  const auto log = server.log();
  REQUIRE(log.size() == 2);
  CHECK(log[0].target == "/openai/models?api-version=2024-10-21");
  for (const auto& l : log) {
    CHECK(l.headers.at("api-key") == k_canary);
    CHECK(l.headers.count("authorization") == 0);
  }
  no_canary(r);
}

TEST_CASE(
    "doctor: azure: a deployment not found names it and the api-version; a wrong api-version is hinted") {
  Script s = gate::testing::azure_script("2024-10-21", {"gpt4o-prod"});
  FakeUpstream server(s);
  server.start();
  TempDir dir;
  const std::string base = origin(server) + "/openai";
  auto r = doctor(write_config(dir, base, "gpt4o-typo", "azure", "  api_version: 2024-10-21\n"), k_canary);
  CAPTURE(r.out);
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "FAIL", "deployment",
                 "Azure has no deployment \"gpt4o-typo\" (model.name) at " + base +
                     " with api-version 2024-10-21"));
  r = doctor(write_config(dir, base, "gpt4o-prod", "azure", "  api_version: 2023-01-01\n"), k_canary);
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "hint", "version", "check model.api_version is one Azure serves"));
  // The v1 API under a base URL without /openai/v1 is flagged before any call.
  r = doctor(write_config(dir, base, "gpt4o-prod", "azure"), k_canary);
  CHECK(has_line(r.out, "warn", "azure", "whose base URL ends in /openai/v1"));
  r = doctor(write_config(dir, base + "/v1", "gpt4o-prod", "azure"), k_canary);
  CHECK(r.exit_code == 0);
  CHECK(has_line(r.out, "ok", "azure", "the v1 API"));
  no_canary(r);
}

TEST_CASE("doctor: gemini's OpenAI-compatible endpoint; a bad key in Google's error array is auth") {
  Script s;
  s.prefix = "/v1beta/openai";
  s.error_style = "gemini";
  FakeUpstream server(s);
  server.start();
  TempDir dir;
  auto r =
      doctor(write_config(dir, origin(server) + "/v1beta/openai", "gemini-2.5-flash", "gemini"), k_canary);
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(has_line(r.out, "ok", "completion", "HTTP 200"));
  CHECK(server.log().back().headers.at("authorization") == "Bearer " + k_canary);

  s.faults = {gate::testing::gemini_bad_key()};
  FakeUpstream refusing(s);
  refusing.start();
  r = doctor(write_config(dir, origin(refusing) + "/v1beta/openai", "gemini-2.5-flash", "gemini"), k_canary);
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "FAIL", "completion", "auth"));
  CHECK(has_line(r.out, "FAIL", "completion", "API key not valid"));
  no_canary(r);
}

TEST_CASE("doctor: a local server needs no key with model.api_key_env null; a refused seed is hinted") {
  Script s;
  s.error_style = "ollama";
  s.no_usage = true;
  s.reject_seed = true;
  FakeUpstream server(s);
  server.start();
  TempDir dir;
  fs::create_directories(dir.path() / "suite");
  const std::string yaml = "suite:\n  path: suite\nmodel:\n  base_url: " + server.base_url() +
                           "\n  api_key_env: null\n  name: llama3.2\n";
  spit(dir.path() / "gate.yaml", yaml);
  auto r = doctor(dir.path() / "gate.yaml", "");
  CAPTURE(r.out);
  CHECK(r.exit_code == 0);
  CHECK(has_line(r.out, "ok", "key", "none needed: model.api_key_env is null, so no key is sent"));
  CHECK(has_line(r.out, "ok", "completion", "no usage reported"));
  for (const auto& l : server.log())
    CHECK(l.headers.count("authorization") == 0);

  // The variable unset for a loopback server: the way out is named.
  r = doctor(write_config(dir, server.base_url()), "");
  CHECK(has_line(r.out, "hint", "key", "set model.api_key_env: null"));

  spit(dir.path() / "gate.yaml", yaml + "  seed: 7\n");
  r = doctor(dir.path() / "gate.yaml", "");
  CHECK(r.exit_code == 3);
  CHECK(has_line(r.out, "FAIL", "completion", "bad_response"));
  CHECK(has_line(r.out, "FAIL", "completion", "Unrecognized request argument supplied: seed"));
  CHECK(has_line(r.out, "hint", "seed", "set model.seed: null"));
}

// End-to-end: gate's own calls to Azure OpenAI (deployment URLs and the v1
// API, plain and streamed), Google's OpenAI-compatible endpoint and a local
// server without a key, each played by the fake upstream with that
// provider's shapes; record, then replay offline with the same report.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;
using gate::testing::FakeUpstream;
using gate::testing::Script;

namespace {

const std::string k_canary = "sk-canary-a2u7e-9c8b7a6f5e4d";

// Two tasks, one of them answered as the script says; suite "providers".
void write_suite(const fs::path& dir) {
  spit(
      dir / "cases.jsonl",
      R"({"id": "capital", "input": "Name the capital of France.", "checks": [{"type": "contains", "value": "Paris"}]})"
      "\n"
      R"({"id": "greet", "input": "Say hello.", "checks": [{"type": "contains", "value": "Bonjour"}]})"
      "\n");
  Result created =
      run_gate({"suite", "create", "suite", "--name", "providers", "--from", "cases.jsonl"}, dir);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
}

// gate.yaml with `model` lines (indented by two) and runs: 2.
void write_config(const fs::path& dir, const std::string& model) {
  spit(dir / "gate.yaml",
       "suite:\n  path: suite\nmodel:\n  name: gpt4o-prod\n" + model + "runs: 2\ncache:\n  dir: cache\n");
}

Result run(const fs::path& dir, const std::string& out, const std::string& mode,
           const std::map<std::string, std::string>& env) {
  return run_gate({"run", "--config", "gate.yaml", "--out", out, "--quiet", "--mode", mode}, dir, env);
}

// Records with the key in `key_env`, replays with no key at all, and
// checks the two reports agree and the key is nowhere; returns the
// recorded report.
boost::json::value record_then_replay(const fs::path& dir, FakeUpstream& upstream,
                                      const std::string& key_env) {
  std::map<std::string, std::string> with_key;
  if (!key_env.empty()) with_key[key_env] = k_canary;
  Result rec = run(dir, "rec", "record", with_key);
  INFO(rec.out << rec.err);
  REQUIRE(fs::exists(dir / "rec" / "report.json"));
  const auto sent = upstream.requests();
  Result rep = run(dir, "rep", "replay-only", {{key_env.empty() ? "GATE_UNUSED" : key_env, ""}});
  INFO(rep.out << rep.err);
  CHECK(rep.exit_code == rec.exit_code);
  CHECK(upstream.requests() == sent); // every answer replayed
  const auto a = read_json(dir / "rec" / "report.json");
  const auto b = read_json(dir / "rep" / "report.json");
  CHECK(outcome_view(a) == outcome_view(b));
  CHECK(a.at("stats").at("overall") == b.at("stats").at("overall"));
  CHECK(a.at("route") == b.at("route"));
  CHECK(no_canary_in(dir, rec.out + rec.err + rep.out + rep.err, k_canary));
  return a;
}

const boost::json::object& first_run(const boost::json::value& report) {
  return report.at("tasks").as_array()[0].at("runs").as_array()[0].as_object();
}

std::string origin(const FakeUpstream& s) { return "http://127.0.0.1:" + std::to_string(s.port()); }

} // namespace

TEST_CASE(
    "azure deployment URLs: api-key header, api-version query; record then replay-only, plain and streamed") {
  for (const bool stream : {false, true}) {
    CAPTURE(stream);
    Script s = gate::testing::azure_script("2024-10-21", {"gpt4o-prod"});
    s.rules = {{"capital", {"The capital of France is Paris."}}};
    FakeUpstream upstream(s);
    upstream.start();
    TempDir tmp;
    const fs::path dir = tmp.path();
    write_suite(dir);
    write_config(dir, "  provider: azure\n  base_url: " + origin(upstream) +
                          "/openai\n  api_version: 2024-10-21\n  stream: " + (stream ? "true" : "false") +
                          "\n");
    const auto report = record_then_replay(dir, upstream, "AZURE_OPENAI_API_KEY");
    CHECK(report.at("stats").at("overall").at("success_rate").as_double() ==
          0.5); // capital passes, greet is an echo
    CHECK(first_run(report).at("error").as_string() == "");
    CHECK(first_run(report).at("usage_known").as_bool());
    CHECK(report.at("route").at("api_version").as_string() == "2024-10-21");
    const auto log = upstream.log();
    REQUIRE(log.size() == 4);
    for (const auto& l : log) {
      CHECK(l.target == "/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21");
      CHECK(l.headers.at("api-key") == k_canary);
      CHECK(l.headers.count("authorization") == 0);
    }

    // Another api-version is another route and another cache key: the
    // recorded answers are not served for it.
    set_yaml(dir / "gate.yaml", "api_version", "2025-01-01-preview");
    Result other = run(dir, "other", "replay-only", {});
    CHECK(other.exit_code == 4);
    CHECK(other.err.find("AZURE_OPENAI_API_KEY") != std::string::npos);
  }
}

TEST_CASE("azure v1 API: chat and responses, streamed; a missing deployment and a missing key are named") {
  Script s = gate::testing::azure_script("2024-10-21", {"gpt4o-prod"}); // the v1 routes take no version
  s.rules = {{"capital", {"Paris, of course: hello."}}};
  FakeUpstream upstream(s);
  upstream.start();
  for (const char* api : {"chat", "responses"}) {
    CAPTURE(api);
    TempDir tmp;
    const fs::path dir = tmp.path();
    write_suite(dir);
    write_config(dir, "  provider: azure\n  api: " + std::string(api) + "\n  base_url: " + origin(upstream) +
                          "/openai/v1\n  stream: true\n");
    const auto report = record_then_replay(dir, upstream, "AZURE_OPENAI_API_KEY");
    CHECK(report.at("stats").at("overall").at("success_rate").as_double() == 0.5);
    CHECK(report.at("route").as_object().count("api_version") == 0);
    const auto last = upstream.log().back();
    CHECK(last.target ==
          (std::string(api) == "chat" ? "/openai/v1/chat/completions" : "/openai/v1/responses"));
    CHECK(last.headers.at("api-key") == k_canary);
  }

  TempDir tmp;
  const fs::path dir = tmp.path();
  write_suite(dir);
  write_config(dir, "  provider: azure\n  base_url: " + origin(upstream) + "/openai/v1\n");
  set_yaml(dir / "gate.yaml", "name", "gpt4o-typo");
  Result r = run(dir, "out", "record", {{"AZURE_OPENAI_API_KEY", k_canary}});
  CHECK(r.exit_code == 3); // every run errored: nothing to judge
  const auto report = read_json(dir / "out" / "report.json");
  CHECK(first_run(report).at("error").as_string() == "not_found");
  CHECK(std::string(first_run(report).at("error_message").as_string()).find("deployment") !=
        std::string::npos);
  r = run(dir, "out2", "record", {{"AZURE_OPENAI_API_KEY", ""}});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("AZURE_OPENAI_API_KEY is not set") != std::string::npos);
}

TEST_CASE("azure content filter: an answer stopped by the filter is judged by the checks, not an error") {
  Script s = gate::testing::azure_script("2024-10-21", {});
  gate::testing::Rule filtered{"capital", {""}};
  filtered.finish_reason = "content_filter";
  s.rules = {filtered};
  FakeUpstream upstream(s);
  upstream.start();
  TempDir tmp;
  const fs::path dir = tmp.path();
  write_suite(dir);
  write_config(dir,
               "  provider: azure\n  base_url: " + origin(upstream) + "/openai\n  api_version: 2024-10-21\n");
  Result r = run(dir, "out", "record", {{"AZURE_OPENAI_API_KEY", k_canary}});
  INFO(r.out << r.err);
  const auto report = read_json(dir / "out" / "report.json");
  const auto& run0 = first_run(report);
  CHECK(run0.at("error").as_string() == "");
  CHECK(run0.at("answer").as_string() == "");
  CHECK_FALSE(run0.at("passed").as_bool());
}

TEST_CASE("gemini: no usage is n/a, not 0; its array of errors lands in the right bucket, readable") {
  Script s;
  s.error_style = "gemini";
  s.no_usage = true;
  s.prefix = "/v1beta/openai";
  s.rules = {{"capital", {"Paris."}}};
  FakeUpstream upstream(s);
  upstream.start();
  TempDir tmp;
  const fs::path dir = tmp.path();
  write_suite(dir);
  write_config(dir, "  provider: gemini\n  base_url: " + origin(upstream) + "/v1beta/openai\n");
  const auto report = record_then_replay(dir, upstream, "GEMINI_API_KEY");
  CHECK(upstream.log().front().headers.at("authorization") == "Bearer " + k_canary);
  CHECK(upstream.log().front().target == "/v1beta/openai/chat/completions");
  CHECK(first_run(report).at("error").as_string() == "");
  CHECK_FALSE(first_run(report).at("usage_known").as_bool());
  CHECK(report.at("tasks").as_array()[0].at("stats").at("usage_missing").as_bool());

  // Google answers a bad key with a 400 and an array of errors.
  s.faults = {gate::testing::gemini_bad_key()};
  FakeUpstream refusing(s);
  refusing.start();
  write_config(dir, "  provider: gemini\n  base_url: " + origin(refusing) + "/v1beta/openai\n");
  Result r = run(dir, "refused", "record", {{"GEMINI_API_KEY", k_canary}});
  CHECK(r.exit_code == 3);
  const auto refused = read_json(dir / "refused" / "report.json");
  CHECK(first_run(refused).at("error").as_string() == "auth");
  CHECK(first_run(refused).at("error_message").as_string() ==
        "HTTP 400: API key not valid. Please pass a valid API key.");
  CHECK(first_run(refused).at("attempts").as_int64() == 1); // an auth error is not retried
  CHECK(no_canary_in(dir, r.out + r.err, k_canary));
}

TEST_CASE(
    "a local server without a key: model.api_key_env null sends none; seed refused and Ollama's errors") {
  Script s;
  s.error_style = "ollama";
  s.no_usage = true;
  s.reject_seed = true;
  s.rules = {{"capital", {"Paris."}}};
  FakeUpstream upstream(s);
  upstream.start();
  TempDir tmp;
  const fs::path dir = tmp.path();
  write_suite(dir);

  // Without null, the unset variable stops the run, with the way out.
  write_config(dir, "  base_url: " + upstream.base_url() + "\n");
  Result r = run(dir, "out", "record", {});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("OPENAI_API_KEY is not set") != std::string::npos);
  CHECK(r.err.find("set model.api_key_env: null") != std::string::npos);
  CHECK(upstream.requests() == 0);

  write_config(dir, "  base_url: " + upstream.base_url() + "\n  api_key_env: null\n");
  const auto report = record_then_replay(dir, upstream, "");
  for (const auto& l : upstream.log()) {
    CHECK(l.headers.count("authorization") == 0);
    CHECK(l.headers.count("api-key") == 0);
  }
  CHECK(report.at("stats").at("overall").at("success_rate").as_double() == 0.5);
  CHECK_FALSE(first_run(report).at("usage_known").as_bool());
  CHECK(report.at("route").at("key_alias").as_string() == "default");

  // A miss says how to record it, with no key to set.
  set_yaml(dir / "gate.yaml", "name", "llama3.2");
  r = run(dir, "missed", "replay-only", {});
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("To record them, run: gate run --config gate.yaml --mode replay") != std::string::npos);

  // A server that wants a key after all: auth, saying none was sent.
  Script locked = s;
  gate::testing::Fault unauthorized;
  unauthorized.status = 401;
  unauthorized.times = 100;
  locked.faults = {unauthorized};
  FakeUpstream locked_server(locked);
  locked_server.start();
  write_config(dir, "  base_url: " + locked_server.base_url() + "\n  api_key_env: null\n");
  r = run(dir, "locked", "record", {});
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("no key sent: model.api_key_env is null") != std::string::npos);

  // The seed the server refuses: a readable bad_response, never dropped silently.
  write_config(dir, "  base_url: " + upstream.base_url() + "\n  api_key_env: null\n  seed: 7\n");
  r = run(dir, "seeded", "record", {});
  const auto seeded = read_json(dir / "seeded" / "report.json");
  CHECK(first_run(seeded).at("error").as_string() == "bad_response");
  CHECK(first_run(seeded).at("error_message").as_string() ==
        "HTTP 400: Unrecognized request argument supplied: seed");
}

// End-to-end: the code under test never sees a secret gate knows of. An
// agent command, a `script` check and the generated python runner each dump
// their whole environment into a file; neither the model key nor the shared
// cache's token (canaries, also copied under another name) appears in any
// file, nor in gate's output, in any encoding a body can carry it (issue 31
// item 1, RELIABILITY 39).
#include <doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "harness.hpp"
#include <gate/util/redact.hpp>
#include <tests/support/fake_upstream.hpp>

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

// '/', '+' and '=' change under JSON and URL encoding.
const std::string k_model_key = "sk-model/canary+e2e=9d41c7a0";
const std::string k_cache_token = "tok-cache/canary+e2e=5be83f12";

std::string url_encoded(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// The secret as a body can carry it: plain, JSON-escaped ("\/"), URL-encoded,
// and 12 base64 characters of key bytes only at each of the 3 alignments.
std::vector<std::string> encodings(const std::string& secret) {
  std::string json_escaped;
  for (char c : secret)
    json_escaped += c == '/' ? std::string("\\/") : std::string(1, c);
  return {secret,
          json_escaped,
          url_encoded(secret),
          secret.substr(secret.size() - 8),
          gate::base64_encode(secret).substr(0, 12),
          gate::base64_encode("a" + secret).substr(4, 12),
          gate::base64_encode("ab" + secret).substr(4, 12)};
}

// "" when clean, else where a canary was found.
std::string leak_below(const fs::path& dir, const std::string& printed) {
  for (const std::string& secret : {k_model_key, k_cache_token})
    for (const std::string& e : encodings(secret)) {
      for (const auto& f : files_below(dir))
        if (slurp(f).find(e) != std::string::npos) return e + " in " + f.string();
      if (printed.find(e) != std::string::npos) return e + " in gate's output";
    }
  return "";
}

const std::map<std::string, std::string> secret_env(const fs::path& dir) {
  return {{"GATE_CANARY_MODEL_KEY", k_model_key},
          {"GATE_CANARY_CACHE_TOKEN", k_cache_token},
          // A copy under another name is stripped by its value.
          {"GATE_CANARY_COPY", "Bearer " + k_cache_token},
          {"TMPDIR", (dir / "tmpdir").string()}};
}

// The model and cache blocks every run here uses: the key and the token by
// name, and a shared cache nothing listens at (the run goes on without it).
std::string secret_yaml(const std::string& base_url) {
  return "model:\n  provider: openai\n  base_url: " + base_url +
         "\n  api_key_env: GATE_CANARY_MODEL_KEY\n  name: m\nruns: 1\ncache:\n  dir: cache\n"
         "  mode: record\n  remote: http://127.0.0.1:9/cache\n  remote_auth_env: GATE_CANARY_CACHE_TOKEN\n";
}

} // namespace

TEST_CASE("an agent command and a script check see neither the model key nor the cache token") {
  gate::testing::clear_network_env();
  gate::testing::FakeUpstream upstream(
      gate::testing::parse_script(R"({"rules": [{"match": "hello", "answers": ["hi there"]}]})"));
  upstream.start();
  TempDir tmp;
  const fs::path dir = tmp.path();
  fs::create_directories(dir / "suite/fx");
  fs::create_directories(dir / "tmpdir");
  spit(dir / "suite/fx/notes.txt", "n\n");
  const std::string dumps = (dir / "dumps").string();
  fs::create_directories(dumps);
  spit(dir / "cases.jsonl",
       R"({"id":"agent-env","kind":"agent","input":"x","agent":{"command":["sh","-c","env > )" + dumps +
           R"(/agent.txt"],"fixture":"fx","timeout":20},"checks":[{"type":"exit_code"}]})"
           "\n"
           R"({"id":"script-env","input":"say hello","checks":[{"type":"script","argv":["sh","-c","env > )" +
           dumps +
           R"(/script.txt; cat > /dev/null; echo fine"]}]})"
           "\n");
  Result created = run_gate({"suite", "create", "suite", "--name", "secrets", "--from", "cases.jsonl"}, dir);
  REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  spit(dir / "gate.yaml", "suite:\n  path: suite\n" + secret_yaml(upstream.base_url()));
  Result r = run_gate({"run", "--config", "gate.yaml", "--out", "out", "--quiet"}, dir, secret_env(dir));
  INFO(r.out << r.err);
  REQUIRE(fs::exists(dir / "out/report.json"));
  // The children ran, and the model got the real key.
  REQUIRE(fs::exists(dir / "dumps/agent.txt"));
  REQUIRE(fs::exists(dir / "dumps/script.txt"));
  CHECK(slurp(dir / "dumps/agent.txt").find("GATE_TASK_ID=agent-env") != std::string::npos);
  CHECK(slurp(dir / "dumps/script.txt").find("PATH=") != std::string::npos);
  REQUIRE(upstream.log().size() == 1);
  CHECK(upstream.log()[0].headers.at("authorization") == "Bearer " + k_model_key);
  CHECK(leak_below(dir, r.out + r.err) == "");
}

TEST_CASE("the generated python runner sees neither the model key nor the cache token") {
  TempDir tmp;
  const fs::path dir = tmp.path();
  if (sh(dir, "command -v python3").exit_code != 0)
    return gate::testing::skip_test("python3 is not on PATH; the runner needs it");
  gate::testing::clear_network_env();
  gate::testing::FakeUpstream upstream(
      gate::testing::parse_script(R"({"rules": [{"match": "hello", "answers": ["hi there"]}]})"));
  upstream.start();
  fs::create_directories(dir / "tmpdir");
  const std::string dump = (dir / "python.txt").string();
  spit(dir / "promptfooconfig.yaml", "prompts: ['{{q}}']\nproviders:\n  - id: openai:chat:m\n    config:\n"
                                     "      apiBaseUrl: " +
                                         upstream.base_url() +
                                         "\ntests:\n  - vars: {q: say hello}\n    assert:\n"
                                         "      - type: python\n        value: \"open('" +
                                         dump +
                                         "', 'w').write(repr(dict(__import__('os').environ))) > 0\"\n");
  Result im = run_gate({"import", "promptfoo", "promptfooconfig.yaml", "--out", "evals"}, dir);
  REQUIRE_MESSAGE(im.exit_code == 0, im.out << im.err);
  // The imported config, with the key and the token gate must keep away.
  std::string yaml = slurp(dir / "evals/gate.yaml");
  for (const auto& edit : std::vector<std::pair<std::string, std::string>>{
           {"api_key_env: OPENAI_API_KEY", "api_key_env: GATE_CANARY_MODEL_KEY"},
           {"runs: 3", "runs: 1"},
           {"cache:\n",
            "cache:\n  remote: http://127.0.0.1:9/cache\n  remote_auth_env: GATE_CANARY_CACHE_TOKEN\n"}}) {
    const std::string& from = edit.first;
    const std::size_t at = yaml.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    yaml.replace(at, from.size(), edit.second);
  }
  spit(dir / "evals/gate.yaml", yaml);
  Result r =
      run_gate({"run", "--config", "evals/gate.yaml", "--out", "out", "--quiet"}, dir, secret_env(dir));
  INFO(r.out << r.err);
  REQUIRE(fs::exists(dir / "out/report.json"));
  REQUIRE(fs::exists(dump));
  CHECK(slurp(dump).find("PATH") != std::string::npos);
  CHECK(leak_below(dir, r.out + r.err) == "");
}

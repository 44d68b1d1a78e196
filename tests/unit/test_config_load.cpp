#include <doctest.h>

#include <gate/config/config.hpp>

#include "test_config_support.hpp"

namespace fs = std::filesystem;
using namespace gate::config;
using gate::config::test::k_minimal;
using gate::config::test::load_error;
using gate::config::test::Scratch;

namespace {

// The layout from the reference, with values that differ from the defaults
// so that each one shows it was read. The line numbers matter: origins.
const std::string k_full = "suite:\n"                                                                     // 1
                           "  path: suites/demo\n"                                                        // 2
                           "  version: v1\n"                                                              // 3
                           "  sha256: 0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\n" // 4
                           "model:\n"                                                                     // 5
                           "  provider: openai\n"                                                         // 6
                           "  base_url: http://127.0.0.1:8080/v1\n"                                       // 7
                           "  api_key_env: GATE_TEST_KEY\n"                                               // 8
                           "  key_alias: team-a\n"                                                        // 9
                           "  name: gpt-4o-mini\n"                       // 10
                           "  temperature: 0.7\n"                        // 11
                           "  top_p: 0.9\n"                              // 12
                           "  seed: -7\n"                                // 13
                           "  max_tokens: 256\n"                         // 14
                           "  timeout: 30.5\n"                           // 15
                           "  max_retries: 0\n"                          // 16
                           "runs: 5\n"                                   // 17
                           "concurrency: 1024\n"                         // 18
                           "token_band_pct: 30\n"                        // 19
                           "include_polluted: true\n"                    // 20
                           "cache:\n"                                    // 21
                           "  dir: /var/cache/gate\n"                    // 22
                           "  mode: replay-only\n"                       // 23
                           "  ignore: [\"/user\", \"/metadata/~1id\"]\n" // 24
                           "thresholds:\n"                               // 25
                           "  max_success_drop_pp: 1.5\n"                // 26
                           "  max_consistency_gap_rise_pp: null\n"       // 27
                           "  max_pass_k_drop_pp: 3\n"                   // 28
                           "  max_token_rise_pct: 10\n"                  // 29
                           "  max_p95_latency_rise_pct: 20\n"            // 30
                           "  max_error_rate_rise_pp: 1e0\n"             // 31
                           "  max_new_failures: 0\n"                     // 32
                           "  alpha: 0.5\n"                              // 33
                           "baseline: baselines/demo.json\n"             // 34
                           "outputs:\n"                                  // 35
                           "  dir: out\n"                                // 36
                           "  json: r.json\n"                            // 37
                           "  markdown: null\n"                          // 38
                           "  junit: \"\"\n";                            // 39

} // namespace

TEST_CASE("a full valid file sets every key and records the line it came from") {
  Scratch s;
  const fs::path file = s.write("gate.yaml", k_full);
  const Config c = load(file);
  CHECK(c.file == file);
  CHECK(c.suite == s.dir / "suites/demo");
  CHECK(c.suite_version == "v1");
  CHECK(c.suite_sha256 == "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  CHECK(c.model.provider == "openai");
  CHECK(c.model.base_url == "http://127.0.0.1:8080/v1");
  CHECK(c.model.api_key_env == "GATE_TEST_KEY");
  CHECK(c.model.key_alias == "team-a");
  CHECK(c.model.name == "gpt-4o-mini");
  CHECK(c.model.temperature == 0.7);
  CHECK(c.model.top_p == 0.9);
  CHECK(c.model.seed == -7);
  CHECK(c.model.max_tokens == 256);
  CHECK(c.model.timeout_s == 30.5);
  CHECK(c.model.max_retries == 0);
  CHECK(c.runs == 5);
  CHECK(c.concurrency == 1024);
  CHECK(c.token_band_pct == 30.0);
  CHECK(c.include_polluted);
  CHECK(c.cache.dir == "/var/cache/gate");
  CHECK(c.cache.mode == CacheMode::replay_only);
  CHECK(c.cache.mode_set);
  CHECK(c.cache.ignore == std::vector<std::string>{"/user", "/metadata/~1id"});
  CHECK(c.thresholds.max_success_drop_pp == 1.5);
  CHECK_FALSE(c.thresholds.max_consistency_gap_rise_pp.has_value());
  CHECK(c.thresholds.max_pass_k_drop_pp == 3.0);
  CHECK(c.thresholds.max_token_rise_pct == 10.0);
  CHECK(c.thresholds.max_p95_latency_rise_pct == 20.0);
  CHECK(c.thresholds.max_error_rate_rise_pp == 1.0);
  CHECK(c.thresholds.max_new_failures == 0);
  CHECK(c.thresholds.alpha == 0.5);
  CHECK(c.baseline == s.dir / "baselines/demo.json");
  CHECK(c.outputs.dir == s.dir / "out");
  CHECK(c.outputs.json == "r.json");
  CHECK(c.outputs.markdown.empty());
  CHECK(c.outputs.junit.empty());
  CHECK(output_path(c.outputs, c.outputs.json) == s.dir / "out/r.json");
  CHECK(output_path(c.outputs, c.outputs.markdown).empty());

  const std::string f = file.string();
  CHECK(c.origin.at("suite.path") == f + ":2");
  CHECK(c.origin.at("suite.sha256") == f + ":4");
  CHECK(c.origin.at("model.name") == f + ":10");
  CHECK(c.origin.at("runs") == f + ":17");
  CHECK(c.origin.at("cache.mode") == f + ":23");
  CHECK(c.origin.at("thresholds.max_consistency_gap_rise_pp") == f + ":27");
  CHECK(c.origin.at("outputs.junit") == f + ":39");
  // Every key has an origin, from the file here.
  for (const KeyInfo& k : key_table())
    CHECK_MESSAGE(c.origin.contains(k.key), k.key);
}

TEST_CASE("keys the file leaves out keep the defaults of config.hpp, with origin default") {
  Scratch s;
  const fs::path file = s.write("gate.yaml", k_minimal);
  const Config c = load(file);
  const Config d;
  CHECK(c.model.name == "m");
  CHECK(c.origin.at("model.name") == file.string() + ":4");
  CHECK(c.runs == d.runs);
  CHECK(c.model.temperature == d.model.temperature);
  CHECK_FALSE(c.model.top_p.has_value());
  CHECK(c.model.max_tokens == 512);
  CHECK(c.thresholds.max_success_drop_pp == 2.0);
  CHECK_FALSE(c.thresholds.max_pass_k_drop_pp.has_value());
  CHECK(c.thresholds.alpha == 0.05);
  CHECK(c.cache.mode == CacheMode::replay);
  CHECK_FALSE(c.cache.mode_set);
  CHECK(c.baseline.empty());
  CHECK(c.origin.at("runs") == "default");
  CHECK(c.origin.at("thresholds.alpha") == "default");
  for (const KeyInfo& k : key_table())
    CHECK_MESSAGE(c.origin.contains(k.key), k.key);
}

TEST_CASE("relative paths resolve against the config file's directory") {
  Scratch s;
  const fs::path file = s.write("ci/gate.yaml", "suite:\n  path: suites/demo\n"
                                                "model:\n  name: m\n"
                                                "baseline: ../baselines/b.json\n"
                                                "cache:\n  dir: /abs/cache\n");
  const Config c = load(file);
  CHECK(c.suite == s.dir / "ci/suites/demo");
  CHECK(c.baseline == s.dir / "baselines/b.json"); // ".." folded lexically
  CHECK(c.cache.dir == "/abs/cache");              // absolute stays
  CHECK(c.outputs.dir == s.dir / "ci/.gate/out");  // a default path too
  CHECK(c.outputs.json == "report.json");          // names stay relative to outputs.dir
  CHECK(output_path(c.outputs, c.outputs.json) == s.dir / "ci/.gate/out/report.json");
  CHECK(output_path(c.outputs, "/tmp/x.json") == "/tmp/x.json");
  CHECK(c.agent_workdir.empty()); // unset: the system temp directory

  const fs::path with_workdir = s.write("ci/agents.yaml", "suite:\n  path: suites/demo\n"
                                                          "model:\n  name: m\n"
                                                          "agent:\n  workdir: work\n");
  CHECK(load(with_workdir).agent_workdir == s.dir / "ci/work");
  CHECK(load(with_workdir).origin.at("agent.workdir") == with_workdir.string() + ":6");
}

TEST_CASE("anthropic gets its own base URL and key variable unless the file sets them") {
  Scratch s;
  Config c = load(s.write("a.yaml", "suite:\n  path: s\nmodel:\n  provider: anthropic\n  name: claude\n"));
  CHECK(c.model.base_url == "https://api.anthropic.com");
  CHECK(c.model.api_key_env == "ANTHROPIC_API_KEY");
  CHECK(c.origin.at("model.base_url") == "default (provider anthropic)");

  c = load(s.write("b.yaml", "suite:\n  path: s\nmodel:\n  provider: anthropic\n  name: claude\n"
                             "  base_url: http://localhost:9/\n"));
  CHECK(c.model.base_url == "http://localhost:9/");
  CHECK(c.model.api_key_env == "ANTHROPIC_API_KEY");
}

TEST_CASE("azure and gemini: their key variables; azure's endpoint and api-version from the file") {
  Scratch s;
  Config c =
      load(s.write("a.yaml", "suite:\n  path: s\nmodel:\n  provider: azure\n  name: gpt4o-prod\n"
                             "  base_url: https://r.openai.azure.com/openai\n  api_version: 2024-10-21\n"));
  CHECK(c.model.api_key_env == "AZURE_OPENAI_API_KEY");
  CHECK(c.origin.at("model.api_key_env") == "default (provider azure)");
  CHECK(c.model.api_version == "2024-10-21");
  c = load(s.write("v1.yaml", "suite:\n  path: s\nmodel:\n  provider: azure\n  name: gpt-4o mini\n"
                              "  base_url: https://r.openai.azure.com/openai/v1\n"));
  CHECK(c.model.api_version == ""); // the v1 API: the deployment travels in the body, any name
  c = load(s.write("g.yaml", "suite:\n  path: s\nmodel:\n  provider: gemini\n  name: gemini-2.5-flash\n"));
  CHECK(c.model.base_url == "https://generativelanguage.googleapis.com/v1beta/openai");
  CHECK(c.model.api_key_env == "GEMINI_API_KEY");
}

TEST_CASE("model.api_key_env: null is a server that takes no key") {
  Scratch s;
  Config c =
      load(s.write("o.yaml", k_minimal + "  base_url: http://127.0.0.1:11434/v1\n  api_key_env: null\n"));
  CHECK(c.model.api_key_env == "");
  // On CI, nothing is missing: the default mode stays replay.
  resolve_defaults(c, gate::environment_of({{"CI", "true"}}));
  CHECK(c.cache.mode == CacheMode::replay);
  CHECK(c.origin.at("cache.mode") == "default");
}

TEST_CASE("null and empty values, quoting, anchors, BOM and CRLF") {
  Scratch s;
  SUBCASE("null sets optional numbers to not sent; empty sections are allowed") {
    const Config c = load(s.write("g.yaml", k_minimal + "  temperature: null\n  max_tokens: ~\n"
                                                        "cache:\nthresholds:\n  max_success_drop_pp:\n"));
    CHECK_FALSE(c.model.temperature.has_value());
    CHECK_FALSE(c.model.max_tokens.has_value());
    CHECK_FALSE(c.thresholds.max_success_drop_pp.has_value());
    CHECK(c.origin.at("thresholds.max_success_drop_pp") == (s.dir / "g.yaml").string() + ":9");
  }
  SUBCASE("a plain scalar is a string where a string is expected") {
    const Config c = load(s.write("g.yaml", "suite:\n  path: s\n  version: 2\nmodel:\n  name: 'it''s'\n"));
    CHECK(c.suite_version == "2");
    CHECK(c.model.name == "it's");
  }
  SUBCASE("a tab inside a value is not indentation") {
    const Config c = load(s.write("g.yaml", "suite:\n  path: s\nmodel:\n  name: \"a\tb\"   # \tcomment\n"));
    CHECK(c.model.name == "a\tb");
  }
  SUBCASE("anchors and aliases") {
    const Config c = load(s.write("g.yaml", "suite:\n  path: &p s\nmodel:\n  name: *p\n"));
    CHECK(c.model.name == "s");
  }
  SUBCASE("brackets inside quotes do not count as nesting") {
    const std::string deep(200, '[');
    const Config c = load(s.write("g.yaml", "suite:\n  path: s\nmodel:\n  name: \"" + deep + "\"\n"));
    CHECK(c.model.name == deep);
  }
  SUBCASE("a BOM and CRLF line ends") {
    const Config c =
        load(s.write("g.yaml", "\xEF\xBB\xBFsuite:\r\n  path: s\r\nmodel:\r\n  name: m\r\nruns: 7\r\n"));
    CHECK(c.model.name == "m");
    CHECK(c.runs == 7);
    CHECK(c.origin.at("runs") == (s.dir / "g.yaml").string() + ":5");
  }
  SUBCASE("range bounds are inclusive where documented") {
    const Config c = load(s.write("g.yaml", k_minimal + "  temperature: 2\n  top_p: 0\n  max_retries: 20\n"
                                                        "  timeout: 0.001\nruns: 1000\nconcurrency: 1\n"
                                                        "thresholds:\n  alpha: 0.5\n"));
    CHECK(c.model.temperature == 2.0);
    CHECK(c.model.top_p == 0.0);
    CHECK(c.model.max_retries == 20);
    CHECK(c.runs == 1000);
    CHECK(c.concurrency == 1);
    CHECK(c.thresholds.alpha == 0.5);
  }
  SUBCASE("booleans") {
    CHECK_FALSE(load(s.write("g.yaml", k_minimal + "include_polluted: false\n")).include_polluted);
    CHECK(load(s.write("g.yaml", k_minimal + "include_polluted: True\n")).include_polluted);
  }
}

TEST_CASE("a missing file is bad input naming it") {
  Scratch s;
  const fs::path missing = s.dir / "nope.yaml";
  try {
    load(missing);
    FAIL("loaded a missing file");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    CHECK(std::string(e.what()).find(missing.string()) != std::string::npos);
  }
}

TEST_CASE("live-call keys: streaming, shared budgets and the judge") {
  Scratch s;
  const Config d;
  CHECK_FALSE(d.model.stream);
  CHECK_FALSE(d.model.requests_per_minute.has_value());
  CHECK_FALSE(d.model.tokens_per_minute.has_value());
  CHECK(d.judge.model.empty());
  CHECK(d.judge.temperature == 0.0);
  CHECK(d.judge.max_tokens == 256);
  const fs::path file = s.write("gate.yaml", "suite:\n  path: s\nmodel:\n  name: m\n"
                                             "  stream: true\n"             // 5
                                             "  requests_per_minute: 500\n" // 6
                                             "  tokens_per_minute: 2.5e5\n" // 7
                                             "judge:\n"                     // 8
                                             "  model: grader-1\n"          // 9
                                             "  temperature: null\n"        // 10
                                             "  max_tokens: 64\n");         // 11
  const Config c = load(file);
  CHECK(c.model.stream);
  CHECK(c.model.requests_per_minute == 500.0);
  CHECK(c.model.tokens_per_minute == 250000.0);
  CHECK(c.judge.model == "grader-1");
  CHECK_FALSE(c.judge.temperature.has_value());
  CHECK(c.judge.max_tokens == 64);
  CHECK(c.origin.at("model.stream") == file.string() + ":5");
  CHECK(c.origin.at("judge.max_tokens") == file.string() + ":11");
  CHECK(load_error(k_minimal + "  requests_per_minute: 0\n") ==
        "gate.yaml:5:24: model.requests_per_minute: expected a number > 0 or null, got 0");
  CHECK(load_error(k_minimal + "  stream: yes please\n") ==
        "gate.yaml:5:11: model.stream: expected true or false, got \"yes please\"");
  CHECK(load_error(k_minimal + "judge:\n  max_tokens: 8\n") ==
        "gate.yaml:6:15: judge.max_tokens: expected an integer in 16..1000000000, got 8");
}

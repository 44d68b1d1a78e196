#include <doctest.h>

#include <gate/config/config.hpp>

#include "test_config_support.hpp"

using namespace gate::config;
using gate::config::test::k_minimal;
using gate::config::test::load_error;

// k_minimal is four lines (suite:, path, model:, name), so a line appended
// to it is line 5, and an indented one lands in the model section.

TEST_CASE("YAML syntax errors carry yaml-cpp's mark, 1-based") {
  // yaml-cpp notices the unclosed flow map when "runs:" (line 4) cannot be a
  // flow key; its mark is the ':' at column 5.
  CHECK(load_error("suite:\n  path: s\nmodel: {name: m\nruns: 3\n") ==
        "gate.yaml:4:5: YAML syntax error: end of map flow not found");
  // Line 5 " runs: 3" is indented by one space, less than the map above it.
  CHECK(load_error(k_minimal + " runs: 3\n") == "gate.yaml:5:2: YAML syntax error: end of map not found");
  // yaml-cpp 0.8 (Debian 13) names the anchor; 0.7 does not.
  const std::string anchor = load_error("a: *x\n");
  CHECK((anchor == "gate.yaml:1:4: YAML syntax error: the referenced anchor is not defined" ||
         anchor == "gate.yaml:1:4: YAML syntax error: the referenced anchor is not defined: x"));
  // The quote opens at column 9 of "  name: \"m" and never closes; yaml-cpp
  // alone would take "m " as the value.
  CHECK(load_error("suite:\n  path: s\nmodel:\n  name: \"m\n") ==
        "gate.yaml:4:9: quoted string never closed; expected a closing \"");
}

TEST_CASE("a tab in indentation names its line and column") {
  CHECK(load_error(k_minimal + "cache:\n\tdir: x\n") ==
        "gate.yaml:6:1: tab character in indentation; YAML indents with spaces only");
  // Two spaces, then the tab at column 3.
  CHECK(load_error(k_minimal + "cache:\n  \tdir: x\n") ==
        "gate.yaml:6:3: tab character in indentation; YAML indents with spaces only");
}

TEST_CASE("nesting 100,000 levels deep is an error, not a crash") {
  // "runs: " is 6 characters, so the 65th '[' is at column 6 + 65 = 71.
  CHECK(load_error("runs: " + std::string(100000, '[')) ==
        "gate.yaml:1:71: brackets nested deeper than 64 levels; expected a shallow config");
  CHECK(load_error(std::string(100000, '{')) ==
        "gate.yaml:1:65: brackets nested deeper than 64 levels; expected a shallow config");
  // Block nesting is caught by yaml-cpp's own depth guard: "- " 100,000 times.
  std::string dashes;
  for (int i = 0; i < 100000; ++i)
    dashes += "- ";
  const std::string block = load_error("runs:\n  " + dashes + "x\n");
  CHECK(block.starts_with("gate.yaml:2:"));
  CHECK(block.find("nested deeper than") != std::string::npos);
  // And by indentation: 1,000 maps each one space deeper.
  std::string indented;
  for (int i = 0; i < 1000; ++i)
    indented += std::string(static_cast<std::size_t>(i), ' ') + "a:\n";
  CHECK(load_error(indented).find("nested deeper than") != std::string::npos);
}

TEST_CASE("duplicate keys are errors at the second occurrence") {
  CHECK(load_error(k_minimal + "runs: 3\nruns: 4\n") ==
        "gate.yaml:6:1: duplicate key \"runs\" at top level (first at line 5)");
  CHECK(load_error("suite:\n  path: a\n  path: b\nmodel:\n  name: m\n") ==
        "gate.yaml:3:3: duplicate key \"path\" in suite (first at line 2)");
  // A whole section twice.
  CHECK(load_error(k_minimal + "model:\n  seed: 1\n") ==
        "gate.yaml:5:1: duplicate key \"model\" at top level (first at line 3)");
  // In a flow map: the second "path" starts at column 18 of
  // "suite: {path: a, path: b}".
  CHECK(load_error("suite: {path: a, path: b}\nmodel:\n  name: m\n") ==
        "gate.yaml:1:18: duplicate key \"path\" in suite (first at line 1)");
  // Quoting does not make a different key.
  CHECK(load_error(k_minimal + "runs: 3\n\"runs\": 4\n") ==
        "gate.yaml:6:1: duplicate key \"runs\" at top level (first at line 5)");
}

TEST_CASE("a misspelt choice suggests the closest, as a misspelt key does") {
  CHECK(load_error(k_minimal + "  provider: opnai\n")
            .find("model.provider: expected one of openai|anthropic|azure|gemini, got \"opnai\"; "
                  "did you mean \"openai\"?") != std::string::npos);
}

TEST_CASE("unknown keys list the expected ones and suggest the closest") {
  const std::string model_keys =
      "provider, api, family, api_version, base_url, api_key_env, key_alias, name, temperature, top_p, seed, "
      "max_tokens, extra, timeout, max_retries, rate_limit_wait_s, max_retry_after_s, ca_file, stream, "
      "requests_per_minute, "
      "tokens_per_minute";
  const std::string top_keys =
      "suite, model, judge, prompt, runs, concurrency, token_band_pct, include_polluted, pricing, agent, "
      "cache, thresholds, confirm, baseline, outputs";
  // "nmae" -> "name" is two substitutions.
  CHECK(load_error(k_minimal + "  nmae: x\n") ==
        "gate.yaml:5:3: unknown key \"nmae\" in model; expected one of: " + model_keys +
            "; did you mean \"name\"?");
  CHECK(load_error(k_minimal + "run: 3\n") ==
        "gate.yaml:5:1: unknown key \"run\" at top level; expected one of: " + top_keys +
            "; did you mean \"runs\"?");
  // No top-level name is within two edits, but model has the key.
  CHECK(load_error(k_minimal + "temperature: 0\n") ==
        "gate.yaml:5:1: unknown key \"temperature\" at top level; expected one of: " + top_keys +
            "; did you mean \"model.temperature\"?");
  CHECK(load_error(k_minimal + "  runs: 3\n") ==
        "gate.yaml:5:3: unknown key \"runs\" in model; expected one of: " + model_keys +
            "; \"runs\" belongs at top level");
  CHECK(load_error(k_minimal + "zzzzzz: 1\n") ==
        "gate.yaml:5:1: unknown key \"zzzzzz\" at top level; expected one of: " + top_keys);
  // A key that is not a name at all.
  CHECK(load_error(k_minimal + "[a]: 1\n") == "gate.yaml:5:1: expected a key name at top level, got a list");
}

TEST_CASE("wrong types say what was expected, at the value") {
  // "runs: " is 6 characters: the value starts at column 7.
  CHECK(load_error(k_minimal + "runs: three\n") ==
        "gate.yaml:5:7: runs: expected an integer in 1..1000, got \"three\"");
  CHECK(load_error(k_minimal + "runs: 3.5\n") ==
        "gate.yaml:5:7: runs: expected an integer in 1..1000, got \"3.5\"");
  CHECK(load_error(k_minimal + "runs: \"3\"\n") ==
        "gate.yaml:5:7: runs: expected an integer in 1..1000, got \"3\" (quoted, so a string)");
  CHECK(load_error(k_minimal + "runs: 99999999999999999999\n") ==
        "gate.yaml:5:7: runs: expected an integer in 1..1000, got \"99999999999999999999\"");
  CHECK(load_error(k_minimal + "runs: [3]\n") ==
        "gate.yaml:5:7: runs: expected an integer in 1..1000, got a list");
  // "  temperature: " is 15 characters.
  CHECK(load_error(k_minimal + "  temperature: hot\n") ==
        "gate.yaml:5:16: model.temperature: expected a number in 0..2 or null, got \"hot\"");
  CHECK(load_error(k_minimal + "  temperature: .inf\n") ==
        "gate.yaml:5:16: model.temperature: expected a number in 0..2 or null, got \".inf\"");
  CHECK(load_error(k_minimal + "  temperature: 0x1\n") ==
        "gate.yaml:5:16: model.temperature: expected a number in 0..2 or null, got \"0x1\"");
  // "include_polluted: " is 18 characters.
  CHECK(load_error(k_minimal + "include_polluted: yes\n") ==
        "gate.yaml:5:19: include_polluted: expected true or false, got \"yes\"");
  CHECK(load_error(k_minimal + "cache:\n  mode: fast\n") ==
        "gate.yaml:6:9: cache.mode: expected one of replay|replay-only|record|off, got \"fast\"");
  // The Responses API is OpenAI's: with anthropic it names the api line (6).
  CHECK(load_error(k_minimal + "  provider: anthropic\n  api: responses\n") ==
        "gate.yaml:6:3: model.api: provider anthropic speaks only its Messages API; expected chat, or "
        "provider openai for the Responses API");
  CHECK(load_error(k_minimal + "  provider: gemini\n  api: responses\n") ==
        "gate.yaml:6:3: model.api: provider gemini speaks only Chat Completions; expected chat");
  CHECK(load_error(k_minimal + "  api: completions\n") ==
        "gate.yaml:5:8: model.api: expected one of chat|responses, got \"completions\"");
  CHECK(load_error(k_minimal + "  provider: bedrock\n") ==
        "gate.yaml:5:13: model.provider: expected one of openai|anthropic|azure|gemini, got \"bedrock\"");
  // Azure: the endpoint is the user's own; the api-version is Azure's alone
  // and goes into a URL, as does the deployment (model.name) with it.
  CHECK(load_error(k_minimal + "  provider: azure\n") ==
        "gate.yaml:5:3: model.base_url: provider azure needs your resource's endpoint, e.g. "
        "https://NAME.openai.azure.com/openai/v1 (the v1 API), or https://NAME.openai.azure.com/openai with "
        "model.api_version for deployment URLs");
  CHECK(load_error(k_minimal + "  api_version: 2024-10-21\n") ==
        "gate.yaml:5:3: model.api_version: only provider azure takes an api-version; remove it, or set "
        "model.provider: azure");
  CHECK(
      load_error(k_minimal + "  provider: azure\n  base_url: https://r.openai.azure.com/openai\n"
                             "  api_version: 2024-10-21&x=1\n") ==
      "gate.yaml:7:16: model.api_version: expected an Azure api-version such as 2024-10-21 (letters, digits, "
      "- . _), got \"2024-10-21&x=1\"");
  CHECK(load_error("suite:\n  path: suite\nmodel:\n  name: gpt 4/o\n  provider: azure\n"
                   "  base_url: https://r.openai.azure.com/openai\n  api_version: 2024-10-21\n") ==
        "gate.yaml:4:3: model.name: with model.api_version, the name is the Azure deployment in the URL "
        "path; expected letters, digits, - . _, got \"gpt 4/o\"");
  // An implicit null has no position of its own: the key's is used.
  CHECK(load_error(k_minimal + "runs:\n") == "gate.yaml:5:1: runs: expected an integer in 1..1000, got null");
  CHECK(load_error("suite:\n  path: s\nmodel:\n  name:\n") ==
        "gate.yaml:4:3: model.name: expected a string, got null");
  CHECK(load_error("suite:\n  path: s\nmodel:\n  name: \"\"\n") ==
        "gate.yaml:4:9: model.name: expected a non-empty value");
  CHECK(load_error(k_minimal + "runs: !!str 3\n") ==
        "gate.yaml:5:7: YAML tag: gate.yaml takes plain values; quote a value that starts with '!'");
  // "model: gpt-4o" where a section is expected: the value at column 8.
  CHECK(load_error("model: gpt-4o\n") ==
        "gate.yaml:1:8: model: expected a mapping of keys (provider, api, family, api_version, base_url, "
        "api_key_env, key_alias, "
        "name, "
        "temperature, top_p, seed, max_tokens, extra, timeout, max_retries, rate_limit_wait_s, "
        "max_retry_after_s, ca_file, "
        "stream, "
        "requests_per_minute, "
        "tokens_per_minute), got \"gpt-4o\"");
}

TEST_CASE("lists, hashes, URLs and variable names are checked") {
  // "  ignore: " is 10 characters.
  CHECK(load_error(k_minimal + "cache:\n  ignore: /user\n") ==
        "gate.yaml:6:11: cache.ignore: expected a list of strings, got \"/user\"");
  CHECK(load_error(k_minimal + "cache:\n  ignore: [\"/a\", user]\n") ==
        "gate.yaml:6:11: cache.ignore: expected JSON pointers such as \"/user\" (RFC 6901), got \"user\"");
  CHECK(load_error(k_minimal + "cache:\n  ignore: [\"/a~2\"]\n") ==
        "gate.yaml:6:11: cache.ignore: expected JSON pointers such as \"/user\" (RFC 6901), got \"/a~2\"");
  // The nested list is the item at column 12.
  CHECK(load_error(k_minimal + "cache:\n  ignore: [[a]]\n") ==
        "gate.yaml:6:12: cache.ignore: expected a list of strings, got an item that is a list");
  CHECK(load_error("suite:\n  path: s\n  sha256: abc\nmodel:\n  name: m\n") ==
        "gate.yaml:3:11: suite.sha256: expected 64 hex digits (the suite version's sha256), got \"abc\"");
  CHECK(load_error(k_minimal + "  base_url: ftp://x\n") ==
        "gate.yaml:5:13: model.base_url: expected a URL starting with http:// or https://, got \"ftp://x\"");
  CHECK(load_error(k_minimal + "  api_key_env: 1KEY\n") ==
        "gate.yaml:5:16: model.api_key_env: expected an environment variable name (letters, digits, _), got "
        "\"1KEY\"");
}

TEST_CASE("ranges") {
  struct Case {
    std::string line, message;
  };
  // Each line is appended to k_minimal (line 5); the value starts after ": ".
  const std::vector<Case> cases = {
      {"runs: 0", "runs: expected an integer in 1..1000, got 0"},
      {"runs: 1001", "runs: expected an integer in 1..1000, got 1001"},
      {"concurrency: 0", "concurrency: expected an integer in 1..1024, got 0"},
      {"concurrency: 1025", "concurrency: expected an integer in 1..1024, got 1025"},
      {"  temperature: 2.5", "model.temperature: expected a number in 0..2 or null, got 2.5"},
      {"  temperature: -0.1", "model.temperature: expected a number in 0..2 or null, got -0.1"},
      {"  top_p: 1.5", "model.top_p: expected a number in 0..1 or null, got 1.5"},
      {"  timeout: 0", "model.timeout: expected a number > 0, got 0"},
      {"  timeout: -1", "model.timeout: expected a number > 0, got -1"},
      {"  max_retries: 21", "model.max_retries: expected an integer in 0..20, got 21"},
      {"  max_retries: -1", "model.max_retries: expected an integer in 0..20, got -1"},
      {"  max_tokens: 0", "model.max_tokens: expected an integer in 1..1000000000 or null, got 0"},
      {"thresholds: {alpha: 0}", "thresholds.alpha: expected a number > 0 and <= 0.5, got 0"},
      {"thresholds: {alpha: 0.6}", "thresholds.alpha: expected a number > 0 and <= 0.5, got 0.6"},
      {"thresholds: {max_new_failures: -1}",
       "thresholds.max_new_failures: expected an integer >= 0 or null, got -1"},
      {"token_band_pct: 0", "token_band_pct: expected a number > 0, got 0"},
  };
  for (const Case& c : cases) {
    const std::size_t col = c.line.rfind(' ') + 2; // 1-based column of the value
    CHECK(load_error(k_minimal + c.line + "\n") == "gate.yaml:5:" + std::to_string(col) + ": " + c.message);
  }
}

TEST_CASE("empty, non-mapping, multi-document and malformed text") {
  CHECK(load_error("") == "gate.yaml: empty config; expected at least suite.path and model.name");
  CHECK(load_error("# nothing here\n\n") ==
        "gate.yaml: empty config; expected at least suite.path and model.name");
  CHECK(load_error("---\n") == "gate.yaml: empty config; expected at least suite.path and model.name");
  CHECK(load_error("- a\n- b\n") == "gate.yaml:1:1: expected a mapping of keys at top level, got a list");
  CHECK(load_error(k_minimal + "---\nruns: 3\n") == "gate.yaml:6:1: a second YAML document; expected one");
  // "runs: 3" then the NUL at column 8.
  CHECK(load_error(k_minimal + std::string("runs: 3\0\n", 9)) ==
        "gate.yaml:5:8: NUL byte; expected UTF-8 text");
  // "  name: caf" is 11 characters; 0xC3 needs a continuation byte.
  CHECK(load_error("suite:\n  path: s\nmodel:\n  name: caf\xC3(\n") ==
        "gate.yaml:4:12: invalid UTF-8; expected UTF-8 text");
  // Columns count characters: "é" is one.
  CHECK(load_error("suite:\n  path: s\nmodel:\n  name: \xC3\xA9\xC3\xA9\xFF\n") ==
        "gate.yaml:4:11: invalid UTF-8; expected UTF-8 text");
  // Refused while reading, before the pre-scan sees it.
  CHECK(load_error(std::string((1 << 20) + 1, '#')) ==
        "gate.yaml: larger than 1 MiB, the limit for this file");
}

TEST_CASE("required keys") {
  CHECK(load_error("model:\n  name: m\n") == "gate.yaml: missing required key suite.path (suite directory)");
  // The model section exists (line 3) but lacks its name.
  CHECK(load_error("suite:\n  path: s\nmodel:\n  seed: 1\n") ==
        "gate.yaml:3:1: missing required key model.name (model id sent upstream)");
}

TEST_CASE("a URL that carries a secret is refused, and the error never quotes it") {
  using gate::config::credentials_in_url;
  CHECK(credentials_in_url("https://api.example.com/v1") == "");
  CHECK(credentials_in_url("https://api.example.com/v1?api-version=2024-10-21") == "");
  CHECK(credentials_in_url("https://api.example.com/v1?key=sk-abc") == "the query parameter key=");
  CHECK(credentials_in_url("https://x.test/v1?a=1&API_KEY=sk-abc#f") == "the query parameter api_key=");
  CHECK(credentials_in_url("https://x.test/o?sv=1&sig=abc") == "the query parameter sig=");
  CHECK(credentials_in_url("https://user:pw@x.test/v1") == "a user:password@ part");
  CHECK(credentials_in_url("https://x.test/v1/a@b") == ""); // an @ in the path is no credential
  const std::string e =
      load_error(k_minimal + "  base_url: https://api.example.com/v1?key=sk-canary-url-0001\n");
  CHECK(e.find("gate.yaml:5:13: model.base_url: expected a URL without credentials, got one with the query "
               "parameter key=") == 0);
  CHECK(e.find("sk-canary-url-0001") == std::string::npos);
  const std::string remote =
      load_error(k_minimal + "cache:\n  remote: https://tok:sk-canary-url-0002@cache.example.com/c\n");
  CHECK(remote.find("a user:password@ part") != std::string::npos);
  CHECK(remote.find("sk-canary-url-0002") == std::string::npos);
}

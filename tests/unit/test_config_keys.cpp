#include <doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gate/config/config.hpp>

#include "doc_table.hpp"
#include "test_config_support.hpp"

namespace fs = std::filesystem;
using namespace gate::config;
using gate::config::test::Scratch;

using gate::test::cells;
using gate::test::strip_backticks;

namespace {

struct DocRow {
  std::string type, fallback, help;
};

std::map<std::string, DocRow> doc_rows() {
  // This file is tests/unit/; the docs are two levels up.
  const fs::path doc = fs::path(__FILE__).parent_path().parent_path().parent_path() / "README.md";
  std::ifstream in(doc);
  REQUIRE_MESSAGE(in.good(), "cannot read " << doc);
  std::map<std::string, DocRow> rows;
  std::string line;
  bool in_section = false; // only the "Configuration reference" section
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) in_section = line == "## Configuration reference";
    if (!in_section || !line.starts_with("| `")) continue;
    const std::vector<std::string> c = cells(line);
    REQUIRE_MESSAGE(c.size() == 4, line);
    const std::string key = strip_backticks(c[0]);
    CHECK_MESSAGE(!rows.contains(key), "listed twice in README.md: " << key);
    rows[key] = {c[1], strip_backticks(c[2]), c[3]};
  }
  return rows;
}

} // namespace

TEST_CASE("README.md documents exactly the keys of key_table(), with their types and defaults") {
  const std::map<std::string, DocRow> docs = doc_rows();
  std::set<std::string> keys;
  for (const KeyInfo& k : key_table()) {
    keys.insert(k.key);
    auto it = docs.find(k.key);
    if (it == docs.end()) {
      FAIL_CHECK("key missing from README.md: " << k.key);
      continue;
    }
    CHECK_MESSAGE(it->second.type == k.type, k.key);
    CHECK_MESSAGE(it->second.fallback == k.fallback, k.key);
    CHECK_MESSAGE(!it->second.help.empty(), k.key);
  }
  for (const auto& row : docs)
    CHECK_MESSAGE(keys.contains(row.first), "README.md lists an unknown key: " << row.first);
}

TEST_CASE("key_table() names each key once, with a type, a default and help") {
  std::set<std::string> seen;
  for (const KeyInfo& k : key_table()) {
    CHECK_MESSAGE(seen.insert(k.key).second, "twice: " << k.key);
    CHECK_MESSAGE(!k.type.empty(), k.key);
    CHECK_MESSAGE(!k.fallback.empty(), k.key);
    CHECK_MESSAGE(!k.help.empty(), k.key);
  }
  CHECK(key_table().size() == 61);
  CHECK(key_table().front().key == "suite.path");
}

TEST_CASE("types and defaults in the table are what the loader enforces") {
  auto find = [](const std::string& key) {
    for (const KeyInfo& k : key_table())
      if (k.key == key) return k;
    FAIL("no key " << key);
    return KeyInfo{};
  };
  CHECK(find("runs").type == "integer in 1..1000");
  CHECK(find("runs").fallback == "3");
  CHECK(find("thresholds.alpha").type == "number > 0 and <= 0.5");
  CHECK(find("thresholds.alpha").fallback == "0.05");
  CHECK(find("thresholds.max_pass_k_drop_pp").fallback == "null");
  CHECK(find("cache.mode").type == "one of replay|replay-only|record|off");
  CHECK(find("model.name").fallback == "(required)");
  CHECK(find("suite.version").fallback == "\"\"");
  CHECK(find("confirm.runs").fallback == "3");
  CHECK(find("confirm.when").type == "one of undecided|flips");
  CHECK(find("confirm.when").fallback == "undecided");
}

TEST_CASE("every key in key_table() is accepted by load() at its default value") {
  // One file that sets every key to the default the table prints (a
  // required key gets a value): the loader and the table must agree on
  // every name and on the syntax of every default.
  std::map<std::string, std::vector<std::string>> sections;
  std::string top;
  for (const KeyInfo& k : key_table()) {
    const std::string value = k.fallback == "(required)" ? "x" : k.fallback;
    const auto dot = k.key.find('.');
    if (dot == std::string::npos) {
      top += k.key + ": " + value + "\n";
    } else {
      sections[k.key.substr(0, dot)].push_back(k.key.substr(dot + 1) + ": " + value);
    }
  }
  std::string text = top;
  for (const auto& [section, lines] : sections) {
    text += section + ":\n";
    for (const std::string& l : lines)
      text += "  " + l + "\n";
  }
  Scratch s;
  const fs::path file = s.write("gate.yaml", text);
  const Config c = load(file);
  for (const KeyInfo& k : key_table()) {
    CHECK_MESSAGE(c.origin.at(k.key).starts_with(file.string() + ":"), k.key);
  }
  // Defaults read back equal the defaults in config.hpp.
  const Config d;
  CHECK(c.runs == d.runs);
  CHECK(c.thresholds.alpha == d.thresholds.alpha);
  CHECK(c.model.temperature == d.model.temperature);
  CHECK(c.model.top_p == d.model.top_p);
  CHECK(c.thresholds.max_success_drop_pp == d.thresholds.max_success_drop_pp);
  CHECK(c.cache.ignore == d.cache.ignore);
}

TEST_CASE("the provider table: openai's values are ModelConfig's defaults, each provider is a choice") {
  const ModelConfig defaults;
  REQUIRE(!providers().empty());
  CHECK(providers().front().name == defaults.provider);
  CHECK(providers().front().base_url == defaults.base_url);
  CHECK(providers().front().api_key_env == defaults.api_key_env);
  const auto row = std::find_if(key_table().begin(), key_table().end(),
                                [](const KeyInfo& k) { return k.key == "model.provider"; });
  REQUIRE(row != key_table().end());
  std::string choices;
  for (const Provider& p : providers())
    choices += (choices.empty() ? "one of " : "|") + p.name;
  CHECK(row->type == choices);
  CHECK(find_provider("anthropic")->api_key_env == "ANTHROPIC_API_KEY");
  CHECK(find_provider("azure")->base_url == ""); // every resource has its own endpoint
  CHECK(find_provider("azure")->api_key_env == "AZURE_OPENAI_API_KEY");
  CHECK(find_provider("gemini")->api_key_env == "GEMINI_API_KEY");
  CHECK(find_provider("bedrock") == nullptr);
}

namespace {

// The lines of `file` (from the source tree) under `heading`, down to the
// next heading of the same or a higher level.
std::string doc_section(const char* file, const std::string& heading) {
  const fs::path root = fs::path(__FILE__).parent_path().parent_path().parent_path();
  std::ifstream in(root / file);
  REQUIRE_MESSAGE(in.good(), "cannot read " << file);
  const std::size_t level = heading.find(' ');
  std::string text, line;
  bool in_section = false;
  while (std::getline(in, line)) {
    const std::size_t hashes = line.find_first_not_of('#');
    if (line.starts_with("#") && hashes <= level) in_section = line == heading;
    if (in_section) text += line + "\n";
  }
  return text;
}

} // namespace

TEST_CASE("README's providers table and docs/config.md's recipes name every provider gate speaks") {
  auto section = [](const char* file, const std::string& heading) { return doc_section(file, heading); };
  const std::string readme = section("README.md", "### Providers");
  const std::string config = section("docs/config.md", "## Providers");
  for (const Provider& p : providers()) {
    CHECK_MESSAGE(readme.find("`provider: " + p.name) != std::string::npos, "README.md: " << p.name);
    CHECK_MESSAGE(config.find("| `" + p.name + "` | " +
                              (p.base_url.empty() ? "none" : "`" + p.base_url + "`") + " | `" +
                              p.api_key_env + "` |") != std::string::npos,
                  "docs/config.md: " << p.name);
  }
}

TEST_CASE("every gate.yaml recipe in docs/config.md \"Providers\" loads") {
  const std::string text = doc_section("docs/config.md", "## Providers");
  std::vector<std::string> recipes;
  for (std::size_t at = text.find("```yaml\n"); at != std::string::npos; at = text.find("```yaml\n", at)) {
    at += 8;
    const std::size_t end = text.find("```", at);
    REQUIRE(end != std::string::npos);
    recipes.push_back(text.substr(at, end - at));
  }
  REQUIRE(recipes.size() == 4); // Azure's two forms, Gemini, a local server
  Scratch s;
  std::vector<Config> loaded;
  for (const std::string& r : recipes)
    loaded.push_back(load(s.write("gate.yaml", "suite:\n  path: s\n" + r)));
  CHECK(loaded[0].model.provider == "azure");
  CHECK(loaded[0].model.api_version == "");
  CHECK(loaded[1].model.api_version == "2024-10-21");
  CHECK(loaded[2].model.provider == "gemini");
  CHECK(loaded[3].model.api_key_env == ""); // no key
  CHECK(loaded[3].model.base_url == "http://127.0.0.1:11434/v1");
}

TEST_CASE("docs/config.md \"Errors\": each example is what gate says for such a file") {
  // The docs' examples went stale once (the model keys grew); each is now
  // produced from a file that makes it, so they stay what gate prints.
  const std::string text = doc_section("docs/config.md", "## Errors");
  const std::size_t open = text.find("```\n");
  REQUIRE(open != std::string::npos);
  const std::size_t close = text.find("```", open + 4);
  REQUIRE(close != std::string::npos);
  std::vector<std::string> documented;
  std::istringstream lines(text.substr(open + 4, close - open - 4));
  for (std::string line; std::getline(lines, line);)
    documented.push_back(line);
  const std::vector<std::string> files = {
      "suite:\n  path: s\nmodel:\n  nmae: gpt-4.1\n",
      "suite: {path: s}\nruns: 3\nmodel:\n  name: m\n  seed: 1\nconcurrency: 2\nruns: 5\n",
      "suite:\n  path: s\nruns: 0\n",
      "suite:\n  path: s\nmodel:\n  name: m\n  temperature: hot\n",
      "suite:\n\tpath: s\n",
  };
  REQUIRE(documented.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    Scratch s;
    const fs::path file = s.write("gate.yaml", files[i]);
    std::string message;
    try {
      load(file);
    } catch (const gate::Error& e) {
      message = e.what();
      CHECK(e.code() == gate::Exit::bad_input);
    }
    const std::string prefix = file.string() + ":";
    REQUIRE_MESSAGE(message.starts_with(prefix), "file " << i << ": " << message);
    CHECK(("gate.yaml:" + message.substr(prefix.size())) == documented[i]);
  }
}

#include <doctest.h>

#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>

#include <gate/config/config.hpp>
#include <gate/util/redact.hpp>

#include "test_config_support.hpp"

namespace fs = std::filesystem;
using namespace gate::config;
using gate::config::test::k_minimal;
using gate::config::test::Scratch;

namespace {

std::string bad_input(const std::function<void()>& f) {
  try {
    f();
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    return e.what();
  }
  FAIL("no error");
  return "";
}

// The config a test starts from: the key variable is one only tests use.
Config loaded(const Scratch& s, const std::string& extra = "") {
  return load(s.write("gate.yaml", k_minimal + "  api_key_env: GATE_CONFIG_TEST_KEY\n" + extra));
}

} // namespace

TEST_CASE("overrides replace file values and record the flag as origin") {
  Scratch s;
  Config c = loaded(s, "runs: 2\n");
  CHECK(c.origin.at("runs") == (s.dir / "gate.yaml").string() + ":6");
  Overrides o;
  o.runs = 5;
  o.concurrency = 16;
  o.mode = "record";
  o.filter = {"math-*", "qa-?"};
  o.sample = 10;
  o.sample_seed = 42;
  o.baseline = "b/base.json";
  o.out_dir = "out";
  apply(c, o);
  CHECK(c.runs == 5);
  CHECK(c.origin.at("runs") == "--runs");
  CHECK(c.concurrency == 16);
  CHECK(c.origin.at("concurrency") == "--concurrency");
  CHECK(c.cache.mode == CacheMode::record);
  CHECK(c.cache.mode_set);
  CHECK(c.origin.at("cache.mode") == "--mode");
  CHECK(c.filter == std::vector<std::string>{"math-*", "qa-?"});
  CHECK(c.origin.at("filter") == "--filter");
  CHECK(c.sample == 10u);
  CHECK(c.sample_seed == 42u);
  CHECK(c.origin.at("sample_seed") == "--sample-seed");
  // Command-line paths stay relative to the working directory.
  CHECK(c.baseline == "b/base.json");
  CHECK(c.origin.at("baseline") == "--baseline");
  CHECK(c.outputs.dir == "out");
  CHECK(c.origin.at("outputs.dir") == "--out-dir");
  // Keys no flag touched keep their origin.
  CHECK(c.origin.at("model.name") == (s.dir / "gate.yaml").string() + ":4");
}

TEST_CASE("overrides are checked against the same ranges as the file") {
  Scratch s;
  Config c = loaded(s);
  Overrides o;
  o.runs = 0;
  CHECK(bad_input([&] { apply(c, o); }) == "--runs: expected an integer in 1..1000, got 0");
  o = {};
  o.concurrency = 2000;
  CHECK(bad_input([&] { apply(c, o); }) == "--concurrency: expected an integer in 1..1024, got 2000");
  o = {};
  o.mode = "fast";
  CHECK(bad_input([&] { apply(c, o); }) ==
        "--mode: expected one of replay|replay-only|record|off, got \"fast\"");
  o = {};
  o.sample = 0;
  CHECK(bad_input([&] { apply(c, o); }) == "--sample: expected an integer >= 1, got 0");
  o = {};
  o.out_dir = "";
  CHECK(bad_input([&] { apply(c, o); }) == "--out-dir: expected a non-empty value");
  // Nothing was changed by the rejected flags.
  CHECK(c.runs == 3);
  CHECK(c.origin.at("runs") == "default");
}

TEST_CASE("cache mode default: replay-only on CI without the key, else replay") {
  Scratch s;
  SUBCASE("CI set, key unset") {
    const gate::Environment env = gate::environment_of({{"CI", "true"}});
    Config c = loaded(s);
    resolve_defaults(c, env);
    CHECK(c.cache.mode == CacheMode::replay_only);
    CHECK(c.origin.at("cache.mode") == "default (CI set, no $GATE_CONFIG_TEST_KEY)");
  }
  SUBCASE("CI set, key empty") {
    const gate::Environment env = gate::environment_of({{"CI", "1"}, {"GATE_CONFIG_TEST_KEY", ""}});
    Config c = loaded(s);
    resolve_defaults(c, env);
    CHECK(c.cache.mode == CacheMode::replay_only);
  }
  SUBCASE("CI set, key set: replay, and the key appears nowhere") {
    const char* canary = "sk-canary-7f3a9b1c2d4e5f60";
    const gate::Environment env = gate::environment_of({{"CI", "true"}, {"GATE_CONFIG_TEST_KEY", canary}});
    Config c = loaded(s);
    resolve_defaults(c, env);
    CHECK(c.cache.mode == CacheMode::replay);
    CHECK(c.origin.at("cache.mode") == "default");
    const std::string shown = show(c);
    CHECK(shown.find("GATE_CONFIG_TEST_KEY") != std::string::npos);
    CHECK(shown.find("canary") == std::string::npos);
    CHECK(shown.find("4e5f60") == std::string::npos);
    CHECK(boost::json::serialize(to_json(c)).find("canary") == std::string::npos);
  }
  SUBCASE("CI empty counts as unset") {
    const gate::Environment env = gate::environment_of({{"CI", ""}});
    Config c = loaded(s);
    resolve_defaults(c, env);
    CHECK(c.cache.mode == CacheMode::replay);
  }
  SUBCASE("a mode from the file or a flag is kept") {
    const gate::Environment env = gate::environment_of({{"CI", "true"}});
    Config c = loaded(s, "cache:\n  mode: record\n");
    resolve_defaults(c, env);
    CHECK(c.cache.mode == CacheMode::record);
    CHECK(c.origin.at("cache.mode") == (s.dir / "gate.yaml").string() + ":7");

    Config d = loaded(s);
    Overrides o;
    o.mode = "off";
    apply(d, o);
    resolve_defaults(d, env);
    CHECK(d.cache.mode == CacheMode::off);
    CHECK(d.origin.at("cache.mode") == "--mode");
  }
}

TEST_CASE("show prints every key in table order with its origin") {
  Scratch s;
  Config c = loaded(s, "runs: 2\ncache:\n  ignore: [\"/user\"]\n");
  Overrides o;
  o.concurrency = 8;
  o.filter = {"a*"};
  apply(c, o);
  const std::string f = (s.dir / "gate.yaml").string();
  const std::string out = show(c);
  std::istringstream in(out);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line))
    lines.push_back(line);
  REQUIRE(lines.size() == key_table().size() + 1); // + filter
  for (std::size_t i = 0; i < key_table().size(); ++i) {
    CHECK_MESSAGE(lines[i].starts_with(key_table()[i].key + ": "), lines[i]);
    CHECK_MESSAGE(lines[i].find("   # ") != std::string::npos, lines[i]);
  }
  // Comments line up: every "#" in the same column.
  const std::size_t hash = lines[0].find(" # ");
  for (const std::string& l : lines)
    CHECK_MESSAGE(l.find(" # ") == hash, l);
  auto line_of = [&](const std::string& key) {
    for (const std::string& l : lines)
      if (l.starts_with(key + ": ")) return l;
    return std::string();
  };
  CHECK(line_of("runs").starts_with("runs: 2 "));
  CHECK(line_of("runs").ends_with("# " + f + ":6"));
  CHECK(line_of("concurrency").ends_with("# --concurrency"));
  CHECK(line_of("cache.ignore").starts_with("cache.ignore: [\"/user\"] "));
  CHECK(line_of("suite.version").starts_with("suite.version: \"\" "));
  CHECK(line_of("thresholds.max_pass_k_drop_pp").starts_with("thresholds.max_pass_k_drop_pp: null "));
  CHECK(line_of("thresholds.alpha").ends_with("# default"));
  CHECK(line_of("filter").starts_with("filter: [\"a*\"] "));
  CHECK(line_of("filter").ends_with("# --filter"));
}

TEST_CASE("show and to_json redact a registered secret pasted into a value") {
  Scratch s;
  // Registered for the rest of the process, and its last 8 characters are
  // redacted too: a tail that no other test's text contains.
  const std::string secret = "sk-config-test-secret-qzvxkwjq";
  gate::register_secret(secret);
  Config c = load(s.write("gate.yaml", "suite:\n  path: s\nmodel:\n  name: m\n"
                                       "  base_url: https://h.example/v1/" +
                                           secret + "\n"));
  CHECK(show(c).find(secret) == std::string::npos);
  CHECK(show(c).find(std::string(gate::k_redacted)) != std::string::npos);
  CHECK(boost::json::serialize(to_json(c)).find(secret) == std::string::npos);
  // And an error message quoting the value.
  const std::string err =
      gate::config::test::load_error("suite:\n  path: s\nmodel:\n  name: m\n  temperature: " + secret + "\n");
  CHECK(err.find(secret) == std::string::npos);
  CHECK(err.find("model.temperature: expected a number") != std::string::npos);
}

TEST_CASE("to_json nests by section and keeps types") {
  Scratch s;
  const Config c = loaded(s, "runs: 4\nthresholds:\n  max_pass_k_drop_pp: 1.5\n");
  const boost::json::object j = to_json(c);
  CHECK(j.at("runs").as_int64() == 4);
  CHECK(j.at("model").as_object().at("name").as_string() == "m");
  CHECK(j.at("model").as_object().at("api_key_env").as_string() == "GATE_CONFIG_TEST_KEY");
  CHECK(j.at("model").as_object().at("top_p").is_null());
  CHECK(j.at("thresholds").as_object().at("max_pass_k_drop_pp").as_double() == 1.5);
  CHECK(j.at("thresholds").as_object().at("max_token_rise_pct").is_null());
  CHECK(j.at("include_polluted").as_bool() == false);
  CHECK(j.at("cache").as_object().at("mode").as_string() == "replay");
  CHECK(j.at("cache").as_object().at("ignore").as_array().empty());
}

TEST_CASE("to_json is the report's copy: no paths or output places, the judge resolved") {
  Scratch s;
  const Config c = loaded(s, "baseline: base.json\n");
  const boost::json::object j = to_json(c);
  for (const char* gone : {"suite", "prompt", "agent", "confirm", "baseline", "outputs"})
    CHECK_MESSAGE(!j.contains(gone), gone);
  CHECK(!j.at("model").as_object().contains("ca_file"));
  CHECK(!j.at("cache").as_object().contains("dir"));
  CHECK(j.at("cache").as_object().contains("mode"));
  CHECK(j.at("judge").as_object().at("model").as_string() == "m");
  // Azure's api-version only when set: other reports keep their bytes.
  CHECK(!j.at("model").as_object().contains("api_version"));
  const Config azure =
      load(s.write("azure.yaml", k_minimal + "  provider: azure\n  base_url: https://r.example/openai\n"
                                             "  api_version: 2024-10-21\n"));
  CHECK(to_json(azure).at("model").at("api_version").as_string() == "2024-10-21");
}

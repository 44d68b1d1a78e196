#include <doctest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <fstream>
#include <iterator>

#include <gate/config/config.hpp>
#include <gate/model/api.hpp>
#include <gate/model/stream.hpp>
#include <gate/util/json.hpp>

#include "test_config_support.hpp"

using namespace gate::config;
using gate::config::test::k_minimal;
using gate::config::test::load_error;
using gate::config::test::load_text;

TEST_CASE("model.extra: a YAML mapping becomes canonical JSON, scalars typed as the other keys read them") {
  const Config c = load_text(k_minimal + "  extra:\n    reasoning_effort: low\n    verbosity: \"3\"\n"
                                         "    nested: {a: [1, 2.5, true, null, x]}\n");
  CHECK(c.model.extra ==
        R"({"nested":{"a":[1,2.5,true,null,"x"]},"reasoning_effort":"low","verbosity":"3"})");
  CHECK(c.origin.at("model.extra") == c.file.string() + ":5");
  // Absent, null and {} all mean none.
  CHECK(load_text(k_minimal).model.extra.empty());
  CHECK(load_text(k_minimal + "  extra:\n").model.extra.empty());
  CHECK(load_text(k_minimal + "  extra: {}\n").model.extra.empty());
}

TEST_CASE("model.extra: not a mapping, or a field gate writes, is refused at its line") {
  CHECK(load_error(k_minimal + "  extra: [1, 2]\n") ==
        "gate.yaml:5:10: model.extra: expected a mapping or null, got a list");
  CHECK(load_error(k_minimal + "  extra: fast\n") ==
        "gate.yaml:5:10: model.extra: expected a mapping or null, got \"fast\"");
  const std::string owned =
      load_error(k_minimal + "  extra:\n    top_p: 1\n    user: x\n    temperature: 1\n");
  CHECK(owned.starts_with(
      "gate.yaml:6:5: model.extra: sets \"temperature\", \"top_p\", which gate writes itself"));
}

TEST_CASE("model.extra: show() prints it as JSON; the report's copy has it only when set") {
  const Config with = load_text(k_minimal + "  extra:\n    reasoning_effort: low\n");
  CHECK(show(with).find("model.extra: {\"reasoning_effort\":\"low\"}") != std::string::npos);
  CHECK(show(load_text(k_minimal)).find("model.extra: {}") != std::string::npos);
  const boost::json::object j = to_json(with);
  CHECK(gate::json::canonical(j.at("model").at("extra")) == R"({"reasoning_effort":"low"})");
  CHECK_FALSE(to_json(load_text(k_minimal)).at("model").as_object().contains("extra"));
}

TEST_CASE("model.extra is merged into every dialect's body, and so into the cache key") {
  for (const char* dialect : {"chat", "responses", "anthropic"}) {
    CAPTURE(dialect);
    ModelConfig m;
    m.name = "m";
    if (std::string(dialect) == "anthropic") m.provider = "anthropic";
    if (std::string(dialect) == "responses") m.api = "responses";
    const std::string plain = gate::model::build_request(m, "", {{"user", "Hi"}});
    m.extra = R"({"reasoning_effort":"low"})";
    const std::string extra = gate::model::build_request(m, "", {{"user", "Hi"}});
    CHECK(extra != plain);
    auto v = gate::json::parse_strict(extra, "body");
    CHECK(v.at("reasoning_effort") == "low");
    v.as_object().erase("reasoning_effort");
    CHECK(gate::json::canonical(v) == plain);
  }
}

TEST_CASE("request_fields() names every field gate writes in any dialect, streamed or not") {
  const auto& fields = request_fields();
  for (const char* dialect : {"chat", "responses", "anthropic"}) {
    CAPTURE(dialect);
    ModelConfig m;
    m.name = "m";
    m.temperature = 0.5;
    m.top_p = 0.9;
    m.seed = 7;
    m.max_tokens = 100;
    if (std::string(dialect) == "anthropic") m.provider = "anthropic";
    if (std::string(dialect) == "responses") m.api = "responses";
    const std::string body = gate::model::build_request(m, "Be brief.", {{"user", "Hi"}});
    const std::string streamed = gate::model::with_streaming(gate::model::dialect(m), body);
    const boost::json::value v = gate::json::parse_strict(streamed, "body");
    for (const auto& field : v.as_object()) {
      const std::string key(field.key());
      CAPTURE(key);
      CHECK(std::find(fields.begin(), fields.end(), key) != fields.end());
    }
  }
}

TEST_CASE("docs/config.md lists exactly request_fields() as the fields model.extra may not set") {
  const std::filesystem::path doc =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "config.md";
  std::ifstream in(doc);
  REQUIRE_MESSAGE(in.good(), "cannot read " << doc);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string start = "a field gate writes itself, in any dialect:";
  const auto from = text.find(start);
  REQUIRE(from != std::string::npos);
  const auto to = text.find(". Those", from);
  REQUIRE(to != std::string::npos);
  std::vector<std::string> listed;
  for (auto at = text.find('`', from); at != std::string::npos && at < to; at = text.find('`', at + 1)) {
    const auto end = text.find('`', at + 1);
    listed.push_back(text.substr(at + 1, end - at - 1));
    at = end;
  }
  CHECK(listed == request_fields());
}

TEST_CASE("model.extra: an alias bomb stops with an error instead of expanding") {
  std::string bomb = "  extra:\n    l0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    bomb += "    l" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int j = 1; j < 9; ++j)
      bomb += ", " + prev;
    bomb += "]\n";
  }
  const std::string error = load_error(k_minimal + bomb);
  CHECK(error.starts_with("gate.yaml:"));
  CHECK(error.find("alias expansion exceeds 500000 nodes") != std::string::npos);
}

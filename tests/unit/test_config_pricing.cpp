// config: the `pricing` table (docs/config.md "Pricing"): read into canonical
// JSON, copied into the report's config, refused at the value's line and
// column when it is not a table of prices.
#include <doctest.h>

#include <boost/json.hpp>

#include <gate/config/config.hpp>
#include <gate/report/report.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

#include "test_config_support.hpp"

using namespace gate::config;
using gate::config::test::k_minimal;
using gate::config::test::load_error;
using gate::config::test::load_text;

TEST_CASE("pricing: rows of prompt and completion prices, kept as canonical JSON and in the report's copy") {
  const Config c = load_text(k_minimal + "pricing:\n  gpt-4o-mini: {prompt: 0.15, completion: 0.6}\n"
                                         "  judge:\n    completion: 10\n    prompt: 2.5\n");
  CHECK(c.pricing ==
        R"({"gpt-4o-mini":{"completion":0.6,"prompt":0.15},"judge":{"completion":10,"prompt":2.5}})");
  CHECK(c.origin.at("pricing") == c.file.string() + ":5");
  const boost::json::object j = to_json(c);
  REQUIRE(j.contains("pricing"));
  // The report prices from its copy: the same numbers come back.
  const gate::metrics::Options o = gate::report::options_from_config(j, "report.json");
  CHECK(o.pricing.models.size() == 2);
  CHECK(o.pricing.models.at("gpt-4o-mini").prompt == 0.15);
  CHECK(o.pricing.models.at("gpt-4o-mini").completion == 0.6);
  CHECK(o.pricing.models.at("judge").completion == 10);
  CHECK(o.pricing.judge_model == "m"); // judge.model unset: the model itself
  // None: absent, null or {} — and then the report's copy has no key.
  for (const std::string& none : {std::string(), std::string("pricing:\n"), std::string("pricing: {}\n")}) {
    const Config n = load_text(k_minimal + none);
    CHECK(n.pricing.empty());
    CHECK_FALSE(to_json(n).contains("pricing"));
    CHECK_FALSE(gate::report::options_from_config(to_json(n), "r").pricing.configured());
  }
  CHECK(show(c).find("pricing: {\"gpt-4o-mini\":") != std::string::npos);
}

TEST_CASE("pricing: what is not a table of prices is refused at the value's line and column") {
  CHECK(load_error(k_minimal + "pricing:\n  m: {prompt: 1, completion: -2}\n") ==
        "gate.yaml:6:30: pricing.m.completion: expected a number >= 0, got \"-2\"");
  CHECK(load_error(k_minimal + "pricing:\n  m: {prompt: cheap, completion: 1}\n") ==
        "gate.yaml:6:15: pricing.m.prompt: expected a number >= 0, got \"cheap\"");
  CHECK(load_error(k_minimal + "pricing:\n  m: {prompt: \"1\", completion: 1}\n") ==
        "gate.yaml:6:15: pricing.m.prompt: expected a number >= 0, got \"1\" (quoted, so a string)");
  CHECK(load_error(k_minimal + "pricing:\n  m:\n    prompt: 1\n    completion: 2\n    cached: 0.5\n") ==
        "gate.yaml:9:5: pricing.m: unknown field \"cached\"; expected prompt, completion (optional: "
        "cached_prompt, cache_write)");
  CHECK(load_error(k_minimal + "pricing:\n  m: {prompt: 1}\n") ==
        "gate.yaml:6:3: pricing.m: missing field completion (expected prompt, completion (optional: "
        "cached_prompt, cache_write))");
  CHECK(load_error(k_minimal + "pricing:\n  m: 3\n") ==
        "gate.yaml:6:6: pricing.m: expected a mapping of prompt, completion (optional: cached_prompt, "
        "cache_write), got \"3\"");
  CHECK(load_error(k_minimal + "pricing:\n  m: {prompt: .nan, completion: 1}\n") ==
        "gate.yaml:6:15: pricing.m.prompt: expected a number >= 0, got \".nan\"");
  CHECK(load_error(k_minimal + "pricing: [1]\n") ==
        "gate.yaml:5:10: pricing: expected a mapping of names to {prompt, completion; optional "
        "cached_prompt, cache_write}, each a number >= 0 or "
        "null, got a list");
  CHECK(load_error(k_minimal + "pricing:\n  m: {prompt: 1, completion: 1, prompt: 2}\n")
            .starts_with("gate.yaml:6:33: duplicate key \"prompt\" in pricing.m"));
}

TEST_CASE("pricing_from_json: a report's copy that is not a price table is bad input naming the file") {
  using gate::report::pricing_from_json;
  const auto bad = [](const char* text) {
    try {
      pricing_from_json(gate::json::parse_strict(text, "t"), "r.json");
    } catch (const gate::Error& e) {
      CHECK(e.code() == gate::Exit::bad_input);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(bad(R"({"m": {"prompt": -1, "completion": 1}})") ==
        "r.json: pricing of model \"m\": field \"prompt\" must be a number >= 0");
  CHECK(bad(R"({"m": {"prompt": 1}})") == "r.json: pricing of model \"m\": missing field \"completion\"");
  CHECK(bad(R"({"m": {"prompt": 1, "completion": 1, "x": 1}})") ==
        "r.json: pricing of model \"m\": unknown field \"x\"; expected prompt, completion, cached_prompt, "
        "cache_write");
  CHECK(bad(R"([1])") == "r.json: \"pricing\" must be an object");
  CHECK(pricing_from_json(boost::json::value(nullptr), "r").models.empty());
}

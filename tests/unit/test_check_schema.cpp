// The json_schema check: the subset of JSON Schema 2020-12 on hand-made
// answers, the first failure's pointer and keyword, and the schemas the
// suite loader refuses.
#include <doctest.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gate/check/check.hpp>
#include <gate/check/schema.hpp>
#include <gate/util/error.hpp>

using gate::check::Check;
using gate::check::evaluate;
using gate::check::Result;

namespace {

Check schema_check(const std::string& schema, const std::string& extra = "") {
  return gate::check::parse(
      boost::json::parse(R"({"type": "json_schema", "schema": )" + schema + extra + "}"), std::nullopt,
      "c.jsonl:2");
}

// The detail of `answer` against `schema`: "" when it is valid.
std::string detail(const std::string& schema, std::string_view answer) {
  const Result r = evaluate(schema_check(schema), answer);
  CHECK_FALSE(r.errored);
  CHECK(r.passed == r.detail.empty());
  return r.detail;
}

// The message parse() throws for a schema.
std::string refused(const std::string& schema, const std::string& extra = "") {
  try {
    schema_check(schema, extra);
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    return e.what();
  }
  return "(accepted)";
}

const std::string k_order = R"({"type": "object", "required": ["id", "items"], "additionalProperties": false,
  "properties": {"id": {"type": "string", "pattern": "^A\\d+$"},
                 "items": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/item"}},
                 "note": {"type": ["string", "null"], "maxLength": 5}},
  "$defs": {"item": {"type": "object", "required": ["qty"],
                     "properties": {"qty": {"type": "integer", "minimum": 1}}}}})";

} // namespace

TEST_CASE("json_schema: a valid answer passes, the first failure names its pointer and keyword") {
  CHECK(detail(k_order, R"({"id": "A12", "items": [{"qty": 2}], "note": null})") == "");
  // Found as the json check finds it: in a ```json block.
  CHECK(detail(k_order, "Here:\n```json\n{\"id\": \"A1\", \"items\": [{\"qty\": 1.0}]}\n```") == "");
  CHECK(detail(k_order, R"({"id": "A1", "items": [{"qty": 0}]})") ==
        "/items/0/qty: 0 is less than minimum 1");
  CHECK(detail(k_order, R"({"id": "A1", "items": [{"qty": 1.5}]})") ==
        "/items/0/qty: 1.5 is not of type \"integer\"");
  CHECK(detail(k_order, R"({"id": "A1", "items": [{}]})") ==
        "/items/0: required property \"qty\" is missing");
  CHECK(detail(k_order, R"({"items": []})") == "(root): required property \"id\" is missing");
  CHECK(detail(k_order, R"({"id": "A1", "items": []})") == "/items: 0 items, fewer than minItems 1");
  CHECK(detail(k_order, R"({"id": "B1", "items": [{"qty": 1}]})") ==
        "/id: \"B1\" does not match pattern /^A\\d+$/");
  CHECK(detail(k_order, R"({"id": "A1", "items": [{"qty": 1}], "x": 1})") ==
        "(root): property \"x\" is not allowed (additionalProperties)");
  CHECK(detail(k_order, R"({"id": "A1", "items": [{"qty": 1}], "note": "éééééé"})") ==
        "/note: \"éééééé\" has 6 characters, more than maxLength 5");
  CHECK(detail(k_order, R"({"id": "A1", "items": [{"qty": 1}], "note": 3})") ==
        "/note: 3 is not of type \"null\" or \"string\"");
  CHECK(detail(k_order, "no JSON here") ==
        "expected JSON (or a ```json block); the answer is \"no JSON here\"");
}

TEST_CASE("json_schema: numbers, enum, const, uniqueItems, prefixItems") {
  CHECK(detail(R"({"exclusiveMinimum": 0})", "0") == "(root): 0 is not greater than exclusiveMinimum 0");
  CHECK(detail(R"({"exclusiveMaximum": 4})", "4") == "(root): 4 is not less than exclusiveMaximum 4");
  CHECK(detail(R"({"maximum": 4})", "4.5") == "(root): 4.5 is greater than maximum 4");
  CHECK(detail(R"({"multipleOf": 0.1})", "0.3") == ""); // not exact in binary; within 1e-9
  CHECK(detail(R"({"multipleOf": 2})", "7") == "(root): 7 is not a multiple of 2 (multipleOf)");
  CHECK(detail(R"({"enum": ["ok", 1]})", "1.0") == ""); // numbers by value
  CHECK(detail(R"({"enum": ["ok", 1]})", "\"no\"") == "(root): \"no\" is not one of enum [\"ok\",1]");
  CHECK(detail(R"({"const": {"a": [1, 2]}})", R"({"a": [1, 2]})") == "");
  CHECK(detail(R"({"const": {"a": [1, 2]}})", R"({"a": [2, 1]})") ==
        "(root): {\"a\":[2,1]} is not const {\"a\":[1,2]}");
  CHECK(detail(R"({"uniqueItems": true})", "[1, 2, 1.0]") == "(root): items 0 and 2 are equal (uniqueItems)");
  const std::string tuple = R"({"prefixItems": [{"type": "string"}, {"type": "number"}], "items": false})";
  CHECK(detail(tuple, R"(["a", 1])") == "");
  CHECK(detail(tuple, R"(["a", "b"])") == "/1: \"b\" is not of type \"number\"");
  CHECK(detail(tuple, R"(["a", 1, null])") == "/2: null is not allowed here (schema false)");
  CHECK(detail("true", "[]") == "");
  CHECK(detail("false", "{}") == "(root): {} is not allowed here (schema false)");
}

TEST_CASE("json_schema: anyOf, allOf, oneOf, not, and the path option") {
  const std::string s = R"({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}]})";
  CHECK(detail(s, "\"x\"") == "");
  CHECK(detail(s, "3") == "(root): matches none of anyOf (the first: (root): 3 is not of type \"string\")");
  CHECK(detail(R"({"allOf": [{"minimum": 1}, {"maximum": 2}]})", "3") ==
        "(root): 3 is greater than maximum 2");
  const std::string one = R"({"oneOf": [{"type": "integer"}, {"minimum": 0}]})";
  CHECK(detail(one, "-1") == "");
  CHECK(detail(one, "1") == "(root): matches oneOf's 0 and 1; exactly one must match");
  CHECK(detail(R"({"not": {"const": "x"}})", "\"x\"") == "(root): matches the schema in not");
  // Pointer tokens escape ~ and / (RFC 6901); a control byte in a key is shown as \xHH.
  CHECK(detail(R"({"additionalProperties": {"type": "string"}})", R"({"a/b~": 1})") ==
        "/a~1b~0: 1 is not of type \"string\"");
  CHECK(detail(R"({"additionalProperties": {"type": "string"}})", R"({"a\u001bb": 1})") ==
        "/a\\x1bb: 1 is not of type \"string\"");

  const Check at = schema_check(R"({"type": "integer"})", R"(, "path": "/data/n")");
  CHECK(evaluate(at, R"({"data": {"n": 3}})").passed);
  CHECK(evaluate(at, R"({"data": {"n": "3"}})").detail == "/data/n: \"3\" is not of type \"integer\"");
  CHECK(evaluate(at, R"({"data": {}})").detail == "expected \"/data/n\" to exist; it is missing");
}

TEST_CASE("json_schema: recursion through $ref, and the depth limit errors") {
  const std::string tree = R"({"$defs": {"node": {"type": "object", "properties": {
    "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["v"]}},
    "$ref": "#/$defs/node"})";
  CHECK(detail(tree, R"({"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]})") == "");
  CHECK(detail(tree, R"({"v": 1, "kids": [{"v": 2, "kids": [{}]}]})") ==
        "/kids/0/kids/0: required property \"v\" is missing");
  // A cycle that never moves into the answer: errored, not failed.
  const Result loop =
      evaluate(schema_check(R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
    "$ref": "#/$defs/a"})"),
               "1");
  CHECK(loop.errored);
  CHECK(loop.detail == "could not evaluate: the schema nests deeper than 200 subschemas (a $ref cycle?)");
}

TEST_CASE("json_schema: unsupported keywords and malformed schemas are refused at load, by name") {
  CHECK(
      refused(R"({"properties": {"qty": {"type": "integer", "format": "int32"}}})") ==
      "c.jsonl:2: check \"json_schema\": \"schema\" at \"/properties/qty\": unsupported keyword \"format\" "
      "(gate "
      "reads a subset of draft 2020-12: type, enum, const, properties, required, additionalProperties, "
      "items, "
      "prefixItems, minItems, maxItems, uniqueItems, minimum, exclusiveMinimum, maximum, exclusiveMaximum, "
      "multipleOf, minLength, maxLength, pattern, anyOf, allOf, oneOf, not, $ref, $defs, $schema, $comment, "
      "title, description, default, examples)");
  CHECK(refused(R"({"type": "int"})") ==
        "c.jsonl:2: check \"json_schema\": \"schema\": \"type\" must be one of null, boolean, object, array, "
        "number, string, integer (or an array of them), got \"int\"");
  CHECK(
      refused(R"({"items": [{"type": "string"}]})") ==
      "c.jsonl:2: check \"json_schema\": \"schema\": \"items\" must be one schema (draft 2020-12); an array "
      "of schemas is \"prefixItems\"");
  CHECK(
      refused(R"({"$ref": "other.json#/a"})") ==
      "c.jsonl:2: check \"json_schema\": \"schema\": \"$ref\" \"other.json#/a\" is not supported: only \"#\" "
      "and \"#/$defs/<name>\"");
  CHECK(refused(R"({"$ref": "#/$defs/missing"})") == "c.jsonl:2: check \"json_schema\": \"schema\": \"$ref\" "
                                                     "\"#/$defs/missing\": no such entry in the root's "
                                                     "\"$defs\"");
  // An entry no $ref names is still compiled, so its errors show.
  CHECK(
      refused(R"({"$defs": {"unused": {"if": true}}})") ==
      "c.jsonl:2: check \"json_schema\": \"schema\" at \"/$defs/unused\": unsupported keyword \"if\" (gate "
      "reads a subset of draft 2020-12: type, enum, const, properties, required, additionalProperties, "
      "items, "
      "prefixItems, minItems, maxItems, uniqueItems, minimum, exclusiveMinimum, maximum, exclusiveMaximum, "
      "multipleOf, minLength, maxLength, pattern, anyOf, allOf, oneOf, not, $ref, $defs, $schema, $comment, "
      "title, description, default, examples)");
  CHECK(
      refused(R"({"minItems": 1.5})") ==
      "c.jsonl:2: check \"json_schema\": \"schema\": \"minItems\" must be a whole number >= 0, got a number");
  CHECK(refused(R"({"multipleOf": 0})") ==
        "c.jsonl:2: check \"json_schema\": \"schema\": \"multipleOf\" must be greater than 0");
  CHECK(refused(R"({"$schema": "http://json-schema.org/draft-07/schema#"})") ==
        "c.jsonl:2: check \"json_schema\": \"schema\": \"$schema\" must be "
        "\"https://json-schema.org/draft/2020-12/schema\" (the draft gate reads), or left out");
  CHECK(
      refused("3") ==
      "c.jsonl:2: check \"json_schema\": \"schema\": a schema must be an object or a boolean, got a number");
  CHECK(refused(R"({"pattern": "(a)\\1"})")
            .find("c.jsonl:2: check \"json_schema\": \"schema\" at "
                  "\"/pattern\"") == 0);
  CHECK(refused(R"({})", R"(, "path": "data")") ==
        "c.jsonl:2: check \"json_schema\": \"path\" must be a JSON pointer starting with '/' (or \"\"), got "
        "\"data\"");
  CHECK_THROWS_WITH_AS(
      gate::check::parse(boost::json::parse(R"({"type": "json_schema"})"), std::nullopt, "c:1"),
      "c:1: check \"json_schema\": missing \"schema\" (a JSON Schema: an object or a boolean)", gate::Error);
}

TEST_CASE("json_schema inside any_of and not, like any text check") {
  const Check g = gate::check::parse(
      boost::json::parse(R"({"type": "any_of", "checks": [{"type": "contains", "value": "none"},
        {"type": "json_schema", "schema": {"type": "array"}}]})"),
      std::nullopt, "c:1");
  CHECK(g.label == "any_of(contains, json_schema)");
  CHECK(evaluate(g, "[1]").passed);
  const Check n = gate::check::parse(
      boost::json::parse(R"({"not": {"type": "json_schema", "schema": {"type": "array"}}})"), std::nullopt,
      "c:1");
  CHECK(evaluate(n, "{}").passed);
  CHECK(evaluate(n, "[]").detail == "expected json_schema to fail; it passed");
}

TEST_CASE(
    "json_schema: uniqueItems names the first equal pair, on long arrays without comparing every pair") {
  CHECK(detail(R"({"uniqueItems": true})", R"([{"a": 1, "b": [2]}, 3, {"b": [2.0], "a": 1}, 3])") ==
        "(root): items 0 and 2 are equal (uniqueItems)");
  CHECK(detail(R"({"uniqueItems": true})", "[5, 4, 4, 5]") ==
        "(root): items 0 and 3 are equal (uniqueItems)");
  // Integers past 2^53 share a double: told apart exactly.
  CHECK(detail(R"({"uniqueItems": true})", "[9007199254740993, 9007199254740992]") == "");
  std::string many = "[";
  for (int i = 0; i < 200000; ++i)
    many += std::to_string(i) + ",";
  CHECK(detail(R"({"uniqueItems": true})", many + "7]") ==
        "(root): items 7 and 200000 are equal (uniqueItems)");
}

TEST_CASE(
    "docs/suite-format.md's JSON Schema subset table lists exactly the keywords compile_schema() reads") {
  const auto doc =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "docs" / "suite-format.md";
  std::ifstream in(doc);
  REQUIRE(in.good());
  std::string line;
  bool in_section = false;
  std::set<std::string> listed;
  while (std::getline(in, line)) {
    if (line.starts_with("### ")) in_section = line == "### JSON Schema subset";
    if (!in_section || !line.starts_with("| `")) continue;
    // The first cell's `keyword`s.
    const std::string cell = line.substr(1, line.find('|', 1) - 1);
    for (std::size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
      const std::size_t end = cell.find('`', at + 1);
      listed.insert(cell.substr(at + 1, end - at - 1));
      at = end;
    }
  }
  listed.erase("true");
  listed.erase("false");
  const auto& words = gate::check::schema_keywords();
  CHECK(listed == std::set<std::string>(words.begin(), words.end()));
}

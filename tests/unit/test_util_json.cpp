#include <doctest.h>

#include <boost/json.hpp>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

using gate::json::canonical;
using gate::json::parse_strict;

namespace {
std::string error_of(std::string_view text, std::size_t first_line = 1) {
  try {
    parse_strict(text, "f.json", first_line);
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    return e.what();
  }
  return "";
}
} // namespace

TEST_CASE("canonical JSON sorts keys, drops whitespace, prints numbers shortest") {
  auto v = boost::json::parse(R"( { "b" : [1, 2.5, true, null], "a" : {"y": "x\n", "x": 1.0} } )");
  CHECK(canonical(v) == R"({"a":{"x":1,"y":"x\n"},"b":[1,2.5,true,null]})");
  CHECK(canonical(boost::json::parse("0.1")) == "0.1");
  CHECK(canonical(boost::json::parse("-0.000001")) == "-1e-06");
  CHECK(canonical(boost::json::parse(R"("\u0001")")) == R"("\u0001")");
  // Equal values give equal bytes whatever the input order.
  CHECK(canonical(boost::json::parse(R"({"x":1,"y":2})")) ==
        canonical(boost::json::parse(R"({"y":2,"x":1})")));
}

TEST_CASE("strict parse rejects duplicate keys with their position") {
  std::string e = error_of("{\"a\": 1,\n \"a\": 2}");
  CHECK(e.find("f.json:2:") == 0);
  CHECK(e.find("duplicate key \"a\"") != std::string::npos);
  // Nested objects have their own key sets.
  CHECK_NOTHROW(parse_strict(R"({"a": {"a": 1}, "b": {"a": 2}})", "f"));
}

TEST_CASE("strict parse rejects NaN, overflow, trailing data, truncation and depth") {
  CHECK(error_of("{\"x\": NaN}").find("f.json:1:") == 0);
  CHECK(error_of("[1e999]").find("out of range") != std::string::npos);
  CHECK(error_of("{} x").find("after the JSON value") != std::string::npos);
  CHECK(error_of("{\"a\": [1, 2").find("incomplete") != std::string::npos);
  std::string deep(100000, '[');
  CHECK(error_of(deep).find("deeper than the limit") != std::string::npos);
  // The line number is offset by the line the text starts at (JSONL).
  CHECK(error_of("{\"a\":}", 41).find("f.json:41:") == 0);
}

TEST_CASE("strict parse rejects invalid UTF-8") { CHECK_FALSE(error_of("\"\xff\"").empty()); }

TEST_CASE("typed accessors name the field") {
  auto v = parse_strict(R"({"s": "x", "n": 2, "b": true})", "f");
  const auto& o = gate::json::as_object(v, "f");
  CHECK(gate::json::get_string(o, "s", "f") == "x");
  CHECK(gate::json::get_int(o, "n", "f") == 2);
  CHECK(gate::json::get_number(o, "n", "f") == 2.0);
  CHECK(gate::json::get_bool(o, "b", "f"));
  CHECK_THROWS_WITH_AS(gate::json::get_string(o, "n", "where"), "where: field \"n\" must be a string",
                       gate::Error);
  CHECK_THROWS_WITH_AS(gate::json::get_int(o, "zz", "where"), "where: missing field \"zz\"", gate::Error);
}

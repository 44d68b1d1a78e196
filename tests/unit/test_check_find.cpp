// json and json_schema with `find: "anywhere"`: the JSON objects inside the
// text, found as promptfoo's contains-json finds them. The expected values
// are what promptfoo 0.121.20 gave for the same answers (contains-json, one
// test each, against gate's fake upstream).
#include <doctest.h>

#include <boost/json/parse.hpp>
#include <string>

#include <gate/check/check.hpp>
#include <gate/check/detail.hpp>
#include <gate/util/error.hpp>

namespace {

gate::check::Result run(std::string_view spec, std::string_view answer) {
  return gate::check::evaluate(gate::check::parse(boost::json::parse(spec), std::nullopt, "cases.jsonl:4"),
                               answer);
}

} // namespace

TEST_CASE("find anywhere: the objects promptfoo's contains-json finds, and no others") {
  const char* any = R"({"type":"json","find":"anywhere"})";
  const char* need_b = R"({"type":"json_schema","find":"anywhere","schema":{"required":["b"]}})";
  // promptfoo: pass (the second object is valid; any one suffices).
  CHECK(run(need_b, R"(Sure! {"a": 1} and {"b": 2})").passed);
  // promptfoo: fail, "Expected output to contain valid JSON".
  CHECK_FALSE(run(any, "no json here").passed);
  CHECK(run(any, "no json here").detail ==
        R"(expected a JSON object in the text; the answer is "no json here")");
  // promptfoo: pass (nested object, schema on it).
  CHECK(run(R"({"type":"json_schema","find":"anywhere","schema":{"properties":{"a":{"required":["b"]}}}})",
            R"(Result: {"a": {"b": 1}} done)")
            .passed);
  // promptfoo: pass (an unclosed object is closed).
  CHECK(run(any, R"(broken {"a": 1)").passed);
  // promptfoo: fail (braces are counted inside strings too).
  CHECK_FALSE(run(any, R"({"a": "}"})").passed);
  // promptfoo: pass (an array is no object; the object after it is).
  CHECK(run(any, R"([1, 2] then {"x": [1]})").passed);
  // The default is the whole answer: prose around JSON is not JSON.
  CHECK_FALSE(run(R"({"type":"json"})", R"(Sure! {"a": 1})").passed);
  // Paths hold on one found object; the detail names the count and the first failure.
  const auto r = run(R"({"type":"json","find":"anywhere","paths":[{"path":"/b","equals":3}]})",
                     R"(x {"b": 1} y {"b": 2})");
  CHECK_FALSE(r.passed);
  CHECK(r.detail.starts_with("none of the 2 JSON objects in the text holds; the first: expected \"/b\""));
  CHECK(run(R"({"type":"json","find":"anywhere","paths":[{"path":"/b","equals":2}]})",
            R"(x {"b": 1} y {"b": 2})")
            .passed);
}

TEST_CASE("find anywhere is bounded and never throws on hostile text") {
  bool stopped = false;
  const std::string braces(1u << 20, '{');
  CHECK(gate::check::detail::json_objects_in(braces, stopped).empty());
  CHECK(stopped);
  const auto r = run(R"({"type":"json","find":"anywhere"})", braces);
  CHECK_FALSE(r.passed);
  CHECK(r.detail.find("the search stopped after 32 MiB of scanning") != std::string::npos);
  CHECK(run(R"({"type":"json","find":"anywhere"})", std::string("\xFF{\"a\":\0}", 9)).passed == false);
  CHECK(run(R"({"type":"json","find":"anywhere"})", std::string("\xFF {\"a\":1}", 10)).passed);
}

TEST_CASE("find takes answer or anywhere, at the check's line") {
  try {
    (void)gate::check::parse(boost::json::parse(R"({"type":"json","find":"inside"})"), std::nullopt,
                             "cases.jsonl:4");
    FAIL("no error");
  } catch (const gate::Error& e) {
    CHECK(std::string(e.what()).find("cases.jsonl:4") != std::string::npos);
    CHECK(std::string(e.what()).find("\"find\" must be \"answer\"") != std::string::npos);
  }
}

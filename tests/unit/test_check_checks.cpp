#include <doctest.h>

#include <boost/json/parse.hpp>
#include <string>

#include <gate/check/check.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

using gate::check::Check;
using gate::check::evaluate;
using gate::check::first_number;
using gate::check::Result;

namespace {

const std::string k_where = "cases.jsonl:3";

Check mk(std::string_view spec, std::optional<std::string> expected = std::nullopt) {
  return gate::check::parse(boost::json::parse(spec), expected, k_where);
}

bool passes(std::string_view spec, std::string_view answer) { return evaluate(mk(spec), answer).passed; }

std::string detail(std::string_view spec, std::string_view answer) {
  return evaluate(mk(spec), answer).detail;
}

std::string parse_error(std::string_view spec, std::optional<std::string> expected = std::nullopt) {
  try {
    mk(spec, expected);
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    std::string msg = e.what();
    CHECK(msg.rfind(k_where + ": ", 0) == 0);
    return msg;
  }
  return "(no error)";
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("equals: trims by default, options, expected fallback") {
  CHECK(passes(R"({"type":"equals","value":"Paris"})", "  Paris\n"));
  CHECK_FALSE(passes(R"({"type":"equals","value":"Paris"})", "Lyon"));
  CHECK(detail(R"({"type":"equals","value":"Paris"})", "Lyon") ==
        R"(expected "Paris"; the answer is "Lyon")");
  CHECK_FALSE(passes(R"({"type":"equals","value":"Paris","trim":false})", " Paris"));
  CHECK_FALSE(passes(R"({"type":"equals","value":"Paris"})", "paris"));
  CHECK(passes(R"({"type":"equals","value":"Paris","ignore_case":true})", "PARIS"));
  CHECK_FALSE(passes(R"({"type":"equals","value":"New York City"})", "New   York\n City"));
  CHECK(
      passes(R"({"type":"equals","value":"New York City","collapse_whitespace":true})", "New   York\n City"));
  Check from_expected = mk(R"({"type":"equals"})", std::string("42"));
  CHECK(evaluate(from_expected, "42").passed);
  CHECK_FALSE(evaluate(from_expected, "43").passed);
  // An explicit value wins over the case's expected.
  CHECK(evaluate(mk(R"({"type":"equals","value":"a"})", std::string("b")), "a").passed);
  CHECK(has(parse_error(R"({"type":"equals"})"), "no \"value\" and the case has no \"expected\""));
}

TEST_CASE("labels: type, or type:name") {
  CHECK(evaluate(mk(R"({"type":"contains","value":"x"})"), "x").label == "contains");
  Result r = evaluate(mk(R"({"type":"equals","name":"capital","value":"Paris"})"), "Rome");
  CHECK(r.label == "equals:capital");
  CHECK_FALSE(r.passed);
  CHECK_FALSE(r.errored);
  CHECK(evaluate(mk(R"({"type":"equals","name":"capital","value":"Paris"})"), "Paris").detail.empty());
}

TEST_CASE("details are short, valid UTF-8, escaped and redacted") {
  std::string long_answer(200, 'x');
  std::string d = detail(R"({"type":"equals","value":"Paris"})", long_answer);
  // "expected \"Paris\", got " is 22 bytes; the answer part is 80 x's, "..." and quotes.
  CHECK(d == "expected \"Paris\"; the answer starts with \"" + std::string(80, 'x') + "...\"");
  std::string accents;
  for (int i = 0; i < 100; ++i)
    accents += "\xC3\xA9"; // é, 2 bytes each: 80 bytes = 40 of them
  d = detail(R"({"type":"contains","value":"z"})", accents);
  CHECK(gate::valid_utf8(d));
  CHECK(has(d, "\"" + accents.substr(0, 80) + "...\""));
  d = detail(R"({"type":"contains","value":"z"})", std::string("a\0b\n\xff", 5));
  CHECK(d == "expected to contain \"z\"; the answer is \"a\\u0000b\\n\xEF\xBF\xBD\"");
  gate::register_secret("sk-canary-7f3a9b1c2d4e5f60");
  d = detail(R"({"type":"equals","value":"Paris"})", "my key is sk-canary-7f3a9b1c2d4e5f60, ok");
  CHECK_FALSE(has(d, "sk-canary"));
  CHECK_FALSE(has(d, "2d4e5f60"));
  CHECK(has(d, "[REDACTED]"));
  // A secret that straddles the 80-byte cut is redacted before cutting.
  d = detail(R"({"type":"equals","value":"Paris"})", std::string(70, ' ') + "sk-canary-7f3a9b1c2d4e5f60");
  CHECK_FALSE(has(d, "sk-canary"));
}

TEST_CASE("contains, icontains, not_contains, starts_with") {
  CHECK(passes(R"({"type":"contains","value":"refund"})", "We will refund you."));
  CHECK_FALSE(passes(R"({"type":"contains","value":"refund"})", "We will REFUND you."));
  CHECK(detail(R"({"type":"contains","value":"refund"})", "no") ==
        R"(expected to contain "refund"; the answer is "no")");
  CHECK(passes(R"({"type":"icontains","value":"refund"})", "We will REFUND you."));
  CHECK_FALSE(passes(R"({"type":"icontains","value":"refund"})", "We will pay you."));
  // Unicode case folding (test_check_unicode.cpp has the rest).
  CHECK(passes(R"({"type":"icontains","value":"BR\u00dbL\u00c9E"})", "Cr\xC3\xA8me br\xC3\x9Bl\xC3\x89"
                                                                     "e"));
  CHECK(passes(R"({"type":"icontains","value":"\u00e9"})", "\xC3\x89"));
  CHECK(passes(R"({"type":"not_contains","value":"sorry"})", "Here you go."));
  CHECK_FALSE(passes(R"({"type":"not_contains","value":"sorry"})", "I'm sorry."));
  CHECK(detail(R"({"type":"not_contains","value":"sorry"})", "sorry") ==
        R"(expected not to contain "sorry"; the answer has it at byte 0: "sorry")");
  CHECK(passes(R"({"type":"starts_with","value":"Yes"})", "  \n Yes, because"));
  CHECK_FALSE(passes(R"({"type":"starts_with","value":"Yes"})", "I think Yes"));
  CHECK_FALSE(passes(R"({"type":"starts_with","value":"Yes"})", "Ye"));
  CHECK(has(parse_error(R"({"type":"contains","value":""})"), "\"value\" must not be empty"));
  CHECK(has(parse_error(R"({"type":"contains"})"), "missing \"value\""));
}

TEST_CASE("contains_any and contains_all") {
  const char* any = R"({"type":"contains_any","values":["yes","sure"]})";
  const char* all = R"({"type":"contains_all","values":["a","b","c"]})";
  CHECK(passes(any, "sure thing"));
  CHECK_FALSE(passes(any, "no"));
  CHECK(detail(any, "no") == R"(expected to contain one of "yes", "sure"; the answer is "no")");
  CHECK(passes(all, "cab"));
  CHECK_FALSE(passes(all, "a"));
  CHECK(detail(all, "a") ==
        R"(expected to contain all of "a", "b", "c" (missing "b", "c"); the answer is "a")");
  CHECK(
      has(parse_error(R"({"type":"contains_any","values":[]})"), "non-empty array of strings, got an array"));
  CHECK(has(parse_error(R"({"type":"contains_all","values":["a",3]})"),
            "\"values[1]\" must be a non-empty string"));
  CHECK(has(parse_error(R"({"type":"contains_all"})"), "missing \"values\""));
}

TEST_CASE("regex check") {
  CHECK(passes(R"({"type":"regex","pattern":"\\border #\\d{5}\\b"})", "Your order #12345 shipped"));
  CHECK_FALSE(passes(R"({"type":"regex","pattern":"\\border #\\d{5}\\b"})", "Your order #1234 shipped"));
  CHECK(detail(R"({"type":"regex","pattern":"^ok$"})", "nope") ==
        R"(expected to match /^ok$/; the answer is "nope")");
  CHECK_FALSE(passes(R"({"type":"regex","pattern":"paris"})", "PARIS"));
  CHECK(passes(R"({"type":"regex","pattern":"paris","ignore_case":true})", "PARIS"));
  std::string e = parse_error(R"({"type":"regex","name":"id","pattern":"(a"})");
  CHECK(has(e, "cases.jsonl:3: check \"regex:id\": regex \"(a\": missing ')'"));
  CHECK(has(parse_error(R"({"type":"regex","pattern":"(\\d)\\1"})"), "backreferences are not supported"));
  CHECK(has(parse_error(R"({"type":"regex","pattern":""})"), "\"pattern\" must not be empty"));
}

TEST_CASE("a regex in a detail is shown as written, not JSON-escaped; control bytes as \\xHH") {
  // In the suite line the pattern is the JSON string "^\\d+$", that is ^\d+$.
  CHECK(detail(R"({"type":"regex","pattern":"^\\d+$"})", "x") ==
        R"(expected to match /^\d+$/; the answer is "x")");
  CHECK(detail(R"({"type":"regex","pattern":"a\nb"})", "x") ==
        R"(expected to match /a\x0ab/; the answer is "x")");
}

TEST_CASE("json: whole answer, fenced blocks, paths") {
  const char* shape = R"({"type":"json"})";
  CHECK(passes(shape, R"( {"a": 1} )"));
  CHECK(passes(shape, "Here:\n```json\n{\"a\": 1}\n```\nDone."));
  CHECK(passes(shape, "Here:\n```\n[1, 2]\n```"));
  CHECK(passes(shape, "inline ```{\"a\":1}``` too"));
  CHECK_FALSE(passes(shape, "not json {a: 1}"));
  CHECK(has(detail(shape, "nope"), "expected JSON (or a ```json block); the answer is \"nope\""));
  CHECK_FALSE(passes(shape, "```json\n{\"a\": \n```"));
  // The first ```json block is taken even after another fenced block.
  const char* a_is_1 = R"({"type":"json","paths":[{"path":"/a","equals":1}]})";
  CHECK(passes(a_is_1, "```python\nprint(1)\n```\n```json\n{\"a\": 1.0}\n```"));
  CHECK(passes(a_is_1, "```JSON\n{\"a\": 1}\n```"));
  CHECK_FALSE(passes(a_is_1, R"({"a": 2})"));
  CHECK(detail(a_is_1, R"({"a": 2})") == R"(expected "/a" to equal 1; it is 2)");
  CHECK(detail(a_is_1, R"({"b": 1})") == R"(expected "/a" to equal 1; it is missing)");

  const char* deep = R"({"type":"json","paths":[
      {"path":"/items/1/name","equals":"pear"},
      {"path":"/items/0","equals":{"name":"apple","n":[1,2.0]}},
      {"path":"/status","one_of":["ok","done"]},
      {"path":"/score","min":0.5,"max":1},
      {"path":"/error","exists":false},
      {"path":"/id","exists":true}]})";
  const char* good = R"({"id":7,"status":"done","score":0.75,
      "items":[{"n":[1,2],"name":"apple"},{"name":"pear"}]})";
  CHECK(passes(deep, good));
  CHECK(has(
      detail(
          deep,
          R"({"id":7,"status":"failed","score":0.75,"items":[{"n":[1,2],"name":"apple"},{"name":"pear"}]})"),
      R"(expected "/status" to be one of ["ok","done"]; it is "failed")"));
  CHECK(has(
      detail(deep,
             R"({"id":7,"status":"ok","score":1.5,"items":[{"n":[1,2],"name":"apple"},{"name":"pear"}]})"),
      R"(expected "/score" to be a number in [0.5, 1]; it is 1.5)"));
  CHECK(has(
      detail(deep,
             R"({"id":7,"status":"ok","score":"high","items":[{"n":[1,2],"name":"apple"},{"name":"pear"}]})"),
      "to be a number in [0.5, 1]; it is \"high\""));
  CHECK(has(
      detail(
          deep,
          R"({"id":7,"error":null,"status":"ok","score":1,"items":[{"n":[1,2],"name":"apple"},{"name":"pear"}]})"),
      R"(expected "/error" to be absent; it is null)"));
  CHECK(has(detail(deep, R"({"status":"ok","score":1,"items":[{"n":[1,2],"name":"apple"},{"name":"pear"}]})"),
            R"(expected "/id" to exist; it is missing)"));
  CHECK_FALSE(passes(
      deep, R"({"id":7,"status":"ok","score":1,"items":[{"n":[1,3],"name":"apple"},{"name":"pear"}]})"));
  CHECK(passes(R"({"type":"json","paths":[{"path":"/n","max":10}]})", R"({"n":-3})"));
  CHECK(passes(R"({"type":"json","paths":[{"path":"","equals":[1,{"b":null}]}]})", R"([1.0, {"b": null}])"));
}

TEST_CASE("json pointer escapes and array indices (RFC 6901)") {
  const char* doc = R"({"a/b": 1, "m~n": 2, "~1": 3, "": 4, "list": [10, 20]})";
  CHECK(passes(R"({"type":"json","paths":[{"path":"/a~1b","equals":1}]})", doc));
  CHECK(passes(R"({"type":"json","paths":[{"path":"/m~0n","equals":2}]})", doc));
  CHECK(passes(R"({"type":"json","paths":[{"path":"/~01","equals":3}]})", doc)); // ~01 is "~1", not "/"
  CHECK(passes(R"({"type":"json","paths":[{"path":"/","equals":4}]})", doc));    // the empty key
  CHECK(passes(R"({"type":"json","paths":[{"path":"/list/1","equals":20}]})", doc));
  CHECK(passes(R"({"type":"json","paths":[{"path":"/list/01","exists":false}]})", doc));
  CHECK(passes(R"({"type":"json","paths":[{"path":"/list/-","exists":false}]})", doc));
  CHECK(passes(R"({"type":"json","paths":[{"path":"/list/2","exists":false}]})", doc));
  CHECK(passes(R"({"type":"json","paths":[{"path":"/list/99999999999999999999","exists":false}]})", doc));
  CHECK(passes(R"({"type":"json","paths":[{"path":"/list/0/x","exists":false}]})", doc));
  boost::json::value v = boost::json::parse(R"({"x":[{"y":true}]})");
  const auto* hit = gate::check::resolve_pointer(v, {"x", "0", "y"});
  REQUIRE(hit != nullptr);
  CHECK(hit->as_bool());
  CHECK(gate::check::resolve_pointer(v, {}) == &v);
}

TEST_CASE("json_equal compares numbers by value") {
  using gate::check::json_equal;
  auto j = [](const char* s) { return boost::json::parse(s); };
  CHECK(json_equal(j("1"), j("1.0")));
  CHECK(json_equal(j("18446744073709551615"), j("18446744073709551615")));
  CHECK(json_equal(j("5"), j("5")));                                       // int64 vs int64
  CHECK(json_equal(j("9223372036854775808"), j("9223372036854775808.0"))); // uint64 vs double
  CHECK_FALSE(json_equal(j("9007199254740993"), j("9007199254740992")));   // exact above 2^53
  CHECK_FALSE(json_equal(j("-1"), j("18446744073709551615")));
  CHECK_FALSE(json_equal(j("\"1\""), j("1")));
  CHECK_FALSE(json_equal(j("[1,2]"), j("[2,1]")));
  CHECK(json_equal(j(R"({"a":1,"b":[true]})"), j(R"({"b":[true],"a":1.0})")));
  CHECK_FALSE(json_equal(j(R"({"a":1})"), j(R"({"a":1,"b":2})")));
  CHECK_FALSE(json_equal(j("null"), j("false")));
}

TEST_CASE("json check errors") {
  CHECK(has(parse_error(R"({"type":"json","paths":{}})"), "\"paths\" must be an array"));
  CHECK(has(parse_error(R"({"type":"json","paths":[3]})"), "paths[0]: expected an object"));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"path":"a/b","exists":true}]})"), "starting with '/'"));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"path":"/a~2","exists":true}]})"),
            "'~' not followed by 0 or 1"));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"path":"/a~","exists":true}]})"), "'~' not followed"));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"path":"/a"}]})"), "expected exactly one condition"));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"path":"/a","equals":1,"exists":true}]})"),
            "expected exactly one condition"));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"exists":true}]})"), "paths[0]: missing \"path\""));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"path":"/a","exists":true},{"path":"/b","equal":1}]})"),
            "check \"json\": paths[1]: unknown field \"equal\""));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"path":"/a","min":2,"max":1}]})"), "\"min\" is greater"));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"path":"/a","min":"1"}]})"), "\"min\" must be a number"));
  CHECK(has(parse_error(R"({"type":"json","paths":[{"path":"/a","one_of":[]}]})"), "non-empty array"));
}

TEST_CASE("first_number: extraction edge cases") {
  auto n = [](std::string_view s) { return first_number(s); };
  CHECK(n("The answer is 42.") == 42);
  CHECK(n("-5 degrees") == -5);
  CHECK(n("it is -5") == -5);
  CHECK(n("x=-5") == -5);
  CHECK(n("+7") == 7);
  CHECK(n("\xE2\x88\x92"
          "3 (unicode minus)") == -3);
  CHECK(n("COVID-19") == 19); // a dash after a letter is not a sign
  CHECK(n("3-5 days") == 3);
  CHECK(n("1,234,567 people") == 1234567);
  CHECK(n("$1,000") == 1000);
  CHECK(n("1,234.5") == 1234.5);
  CHECK(n("1,23") == 1); // a group needs exactly 3 digits
  CHECK(n("1,2345") == 1);
  CHECK(n("12345,678") == 12345); // commas group only after 1-3 leading digits
  CHECK(n("1,234,56") == 1234);
  CHECK(n("3.14159") == doctest::Approx(3.14159));
  CHECK(n("v2.0.1") == 2.0);
  CHECK(n("1.5e3") == 1.5); // no exponents
  CHECK(n("3.") == 3);
  CHECK(n("p = .5") == 0.5);
  CHECK(n("-.25") == -0.25);
  CHECK(n("wait...5") == 5); // dot after a dot: an ellipsis, not a decimal point
  CHECK(n("0007") == 7);
  CHECK_FALSE(n("no digits here").has_value());
  CHECK_FALSE(n("").has_value());
  CHECK(*n(std::string(400, '9')) == HUGE_VAL);
}

TEST_CASE("number check") {
  const char* near42 = R"({"type":"number","value":42,"tolerance":0.5})";
  CHECK(passes(near42, "about 41.6 units"));
  CHECK(passes(near42, "42.5")); // the bound is inclusive
  CHECK_FALSE(passes(near42, "41.4"));
  CHECK(detail(near42, "41.4") == "expected 42 ± 0.5; the answer's first number is 41.4");
  CHECK(detail(near42, "none") == "expected 42 ± 0.5; the answer has no number: \"none\"");
  CHECK(passes(R"({"type":"number","value":1234567})", "1,234,567"));
  CHECK_FALSE(passes(R"({"type":"number","value":7})", "7.01"));
  // |1.1 - 1.0| is 0.10000000000000009 in binary; written in decimal it is 0.1.
  CHECK(passes(R"({"type":"number","value":1.0,"tolerance":0.1})", "1.1"));
  CHECK_FALSE(passes(R"({"type":"number","value":1.0,"tolerance":0.1})", "1.2"));
  CHECK(passes(R"({"type":"number","value":-3})", "The low was -3 C"));
  CHECK(has(parse_error(R"({"type":"number"})"), "missing \"value\" (a number)"));
  CHECK(has(parse_error(R"({"type":"number","value":"42"})"), "\"value\" must be a number, got a string"));
  CHECK(has(parse_error(R"({"type":"number","value":1,"tolerance":-1})"),
            "\"tolerance\" must not be negative"));
}

TEST_CASE("length check counts code points and words") {
  // "héllo" is 6 bytes and 5 characters.
  CHECK(passes(R"({"type":"length","max":5})", "h\xC3\xA9llo"));
  CHECK_FALSE(passes(R"({"type":"length","max":4})", "h\xC3\xA9llo"));
  // 日本語: 9 bytes, 3 characters.
  CHECK_FALSE(passes(R"({"type":"length","unit":"chars","min":4})", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"));
  CHECK(detail(R"({"type":"length","unit":"chars","min":4})", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E") ==
        "expected at least 4 chars; the answer has 3");
  CHECK(passes(R"({"type":"length","min":2,"max":2})", "\xff\xfe")); // each invalid byte counts once
  const char* words = R"({"type":"length","unit":"words","min":2,"max":4})";
  CHECK(passes(words, "  one two  three\n four "));
  CHECK_FALSE(passes(words, "one two three four five"));
  CHECK(detail(words, "one two three four five") == "expected between 2 and 4 words; the answer has 5");
  CHECK_FALSE(passes(words, "   "));
  CHECK(has(parse_error(R"({"type":"length"})"), "expected \"min\", \"max\" or both"));
  CHECK(has(parse_error(R"({"type":"length","unit":"bytes","max":1})"),
            "\"unit\" must be \"chars\" or \"words\""));
  CHECK(has(parse_error(R"({"type":"length","min":-1})"), "must not be negative"));
  CHECK(has(parse_error(R"({"type":"length","min":3,"max":2})"), "\"min\" is greater than \"max\""));
}

TEST_CASE("parse errors name where and what was expected") {
  CHECK(has(parse_error(R"("contains")"), "a check must be an object like"));
  CHECK(has(parse_error(R"({"value":"x"})"), "a check needs \"type\", a string, one of: equals, contains"));
  std::string e = parse_error(R"({"type":"contain","value":"x"})");
  CHECK(has(e,
            "unknown check type \"contain\" (known: equals, contains, icontains, not_contains, starts_with, "
            "contains_any, contains_all, regex, json, number, length, llm_judge, any_of, all_of, similar, "
            "refusal, finish_reason, tool_called, tool_args, no_tool_call, tool_order, latency_ms, cost, "
            "json_schema, script, weighted, tool_calls)"));
  CHECK(has(e, "; did you mean \"contains\"?"));
  CHECK(has(parse_error(R"({"type":"regexp","value":"x"})"), "; did you mean \"regex\"?"));
  CHECK_FALSE(has(parse_error(R"({"type":"zzzzzzzz","value":"x"})"), "did you mean"));
  CHECK(has(parse_error(R"({"type":"contains","value":"x","ignore_case":true})"),
            "check \"contains\": unknown field \"ignore_case\" (expected: type, name, value)"));
  CHECK(has(parse_error(R"({"type":"equals","value":"x","trim":"yes"})"),
            "check \"equals\": \"trim\" must be true or false, got a string"));
  CHECK(has(parse_error(R"({"type":"equals","value":5})"), "\"value\" must be a string, got a number"));
  CHECK(has(parse_error(R"({"type":"contains","name":"","value":"x"})"), "\"name\" must not be empty"));
  CHECK(has(parse_error(R"({"type":"contains","name":7,"value":"x"})"), "\"name\" must be a string"));
  CHECK(has(parse_error(R"({"type":"contains","name":"n1","value":3})"), "check \"contains:n1\": \"value\""));
}

TEST_CASE("evaluate never throws on any bytes") {
  const std::vector<std::string> specs = {
      R"({"type":"equals","value":"a","collapse_whitespace":true,"ignore_case":true})",
      R"({"type":"contains","value":"a"})",
      R"({"type":"icontains","value":"A"})",
      R"({"type":"not_contains","value":"a"})",
      R"({"type":"starts_with","value":"a"})",
      R"({"type":"contains_any","values":["a","b"]})",
      R"({"type":"contains_all","values":["a","b"]})",
      R"({"type":"regex","pattern":"(a|\\w+)*\\d$"})",
      R"({"type":"json","paths":[{"path":"/a/0","equals":1}]})",
      R"({"type":"number","value":1})",
      R"({"type":"length","unit":"words","max":3})",
      R"({"type":"length","min":3})",
  };
  std::vector<Check> checks;
  for (const auto& s : specs)
    checks.push_back(mk(s));
  unsigned x = 7;
  std::vector<std::string> answers = {
      "",         std::string(1, '\0'),     "```", "```json", "```json\n", "``````",
      "\xff\xc3", std::string(100000, '['), "-",   ",",       ".",         "1,",
      "\xE2\x88"};
  for (int i = 0; i < 300; ++i) {
    std::string a;
    for (int k = 0; k < i % 64; ++k) {
      x = x * 1103515245u + 12345u;
      a.push_back(static_cast<char>((x >> 16) & 0xff));
    }
    answers.push_back(a);
  }
  for (const auto& a : answers)
    for (const auto& c : checks) {
      gate::check::Result r;
      CHECK_NOTHROW(r = evaluate(c, a));
      CHECK(gate::valid_utf8(r.detail));
      CHECK_FALSE(r.errored);
    }
}

TEST_CASE("a hand-built check without its operand is an evaluation error, not a crash") {
  Check c;
  c.type = gate::check::Type::equals;
  c.label = "equals";
  Result r = evaluate(c, "x");
  CHECK_FALSE(r.passed);
  CHECK(r.errored);
  CHECK(has(r.detail, "could not evaluate"));
  c.type = gate::check::Type::regex;
  c.values = {"a"};
  r = evaluate(c, "a");
  CHECK(r.errored);
  c.type = gate::check::Type::llm_judge; // the runner's, never evaluated here
  r = evaluate(c, "a");
  CHECK_FALSE(r.passed);
  CHECK(r.errored);
}

TEST_CASE("json details are redacted too") {
  gate::register_secret("sk-canary-7f3a9b1c2d4e5f60");
  std::string d = detail(R"({"type":"json","paths":[{"path":"/k","equals":"x"}]})",
                         R"({"k":"sk-canary-7f3a9b1c2d4e5f60"})");
  CHECK(has(d, "expected \"/k\" to equal \"x\"; it is"));
  CHECK_FALSE(has(d, "sk-canary"));
}

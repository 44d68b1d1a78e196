// parse_cases: the JSONL rules of docs/suite-format.md (RELIABILITY.md 33).
#include <doctest.h>

#include <functional>
#include <string>
#include <vector>

#include <gate/suite/suite.hpp>
#include <gate/util/error.hpp>

#include "test_suite_support.hpp"

using gate::suite::parse_cases;

using namespace gate::suite::test;

namespace {

const std::string k_where = "s/cases.jsonl";

// A minimal valid case line with the given id.
std::string line(const std::string& id) {
  return R"({"id":")" + id + R"(","input":"hi","checks":[{"type":"contains","value":"x"}]})";
}

std::string parse_error(const std::string& text) {
  return error_of([&] { parse_cases(text, k_where); });
}

} // namespace

TEST_CASE("BOM, CRLF, blank lines and a missing final newline are accepted") {
  std::string text = "\xEF\xBB\xBF" + line("a") + "\r\n" + "\r\n" + "  \t \n" + "\n" + line("b");
  auto cases = parse_cases(text, k_where);
  REQUIRE(cases.size() == 2);
  CHECK(cases[0].id == "a");
  CHECK(cases[0].line == 1);
  CHECK(cases[1].id == "b");
  CHECK(cases[1].line == 5); // a, blank CRLF, spaces, empty, b
  // The stripped \r must not leak into the last value of the line.
  CHECK(cases[0].checks.size() == 1);
}

TEST_CASE("a final newline adds no line") {
  auto cases = parse_cases(line("a") + "\n" + line("b") + "\n", k_where);
  CHECK(cases.size() == 2);
}

TEST_CASE("defaults for optional fields; a string input is one user message") {
  auto c = parse_cases(line("a"), k_where).at(0);
  CHECK(c.scenario == "default");
  CHECK(c.difficulty.empty());
  CHECK(c.group.empty());
  CHECK(c.system.empty());
  CHECK_FALSE(c.expected.has_value());
  CHECK(c.tags.empty());
  REQUIRE(c.input.size() == 1);
  CHECK(c.input[0].role == "user");
  CHECK(c.input[0].content == "hi");
}

TEST_CASE("every field is read") {
  std::string text = R"({"id":"t1","scenario":"refunds","difficulty":"hard","group":"g1",)"
                     R"("input":[{"role":"system","content":"be brief"},{"role":"user","content":"q"},)"
                     R"({"role":"assistant","content":"a"},{"role":"user","content":"q2"}],)"
                     R"("expected":"Paris","checks":[{"type":"equals"},{"type":"contains","value":"P"}],)"
                     R"("tags":["x","y"],"metadata":{"anything":[1,{"deep":null}]}})";
  auto c = parse_cases(text, k_where).at(0);
  CHECK(c.id == "t1");
  CHECK(c.scenario == "refunds");
  CHECK(c.difficulty == "hard");
  CHECK(c.group == "g1");
  REQUIRE(c.input.size() == 4);
  CHECK(c.input[0].role == "system");
  CHECK(c.input[0].content == "be brief");
  CHECK(c.input[2].role == "assistant");
  CHECK(c.input[3].content == "q2");
  CHECK(c.expected == std::optional<std::string>("Paris"));
  REQUIRE(c.checks.size() == 2);
  CHECK(c.checks[0].type == gate::check::Type::equals);
  CHECK(c.tags == std::vector<std::string>{"x", "y"});
  CHECK(c.line == 1);
}

TEST_CASE("a top-level system prompt") {
  auto c = parse_cases(R"({"id":"a","system":"sys","input":"q","checks":[{"type":"contains","value":"x"}]})",
                       k_where)
               .at(0);
  CHECK(c.system == "sys");
  std::string both =
      R"({"id":"a","system":"s","input":[{"role":"system","content":"t"},{"role":"user","content":"q"}],)"
      R"("checks":[{"type":"contains","value":"x"}]})";
  CHECK(has(parse_error(both), "s/cases.jsonl:1: both \"system\" and a system message"));
}

TEST_CASE("invalid UTF-8 is an error at its line and byte column") {
  // Line 2 is {"id":"<C3 28>...: '{' '"' 'i' 'd' '"' ':' '"' are columns 1-7, the bad byte is 8.
  std::string bad = R"({"id":")" + std::string("\xC3\x28") + R"(","input":"hi","checks":[]})";
  CHECK(has(parse_error(line("a") + "\n" + bad + "\n"), "s/cases.jsonl:2:8: invalid UTF-8"));
  // Overlong "/" (C0 AF), a surrogate (ED A0 80), above U+10FFFF (F4 90 80 80), a lone continuation (80), a
  // cut sequence (E2 82).
  for (std::string seq : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\x80", "\xE2\x82"}) {
    std::string l = R"({"id":"a)" + seq + R"(","input":"hi","checks":[]})";
    // {"id":"a is columns 1-8, the sequence starts at 9.
    CHECK(has(parse_error(l), "s/cases.jsonl:1:9: invalid UTF-8"));
  }
  // Valid multi-byte text is fine: "é", "€", "𝄞".
  CHECK(parse_cases(line("\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E"), k_where).at(0).id ==
        "\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E");
}

TEST_CASE("columns on the first line do not count the BOM") {
  std::string bad = R"({"id":")" + std::string("\xFF") + R"("})";
  CHECK(has(parse_error("\xEF\xBB\xBF" + bad), "s/cases.jsonl:1:8: invalid UTF-8"));
}

TEST_CASE("a NUL byte is an error at its line and column") {
  std::string text = line("a") + "\n\n" + R"({"id":"b)" + std::string(1, '\0') + R"("})";
  // Line 3: {"id":"b is 8 bytes, NUL at column 9.
  CHECK(has(parse_error(text), "s/cases.jsonl:3:9: NUL byte"));
}

TEST_CASE("a line over 1 MiB is refused; exactly 1 MiB is accepted") {
  const std::size_t mib = 1u << 20;
  std::string head = R"({"id":"big","input":")";
  std::string tail = R"(","checks":[{"type":"contains","value":"x"}]})";
  std::string exact = head + std::string(mib - head.size() - tail.size(), 'a') + tail;
  REQUIRE(exact.size() == mib);
  CHECK(parse_cases(exact + "\r\n", k_where).at(0).input.at(0).content.size() ==
        mib - head.size() - tail.size());

  std::string over = head + std::string(mib - head.size() - tail.size() + 1, 'a') + tail;
  CHECK(has(parse_error(line("a") + "\n" + over),
            "s/cases.jsonl:2: line is 1048577 bytes; the limit is 1 MiB"));
}

TEST_CASE("a 64 MiB line is refused by size, not parsed") {
  std::string huge(64u << 20, '[');
  CHECK(has(parse_error(line("a") + "\n" + line("b") + "\n" + huge),
            "s/cases.jsonl:3: line is 67108864 bytes"));
}

TEST_CASE("nesting: 64 levels are accepted, 65 are refused") {
  // The case object is level 1; "metadata" holds 63 nested arrays → 64.
  auto nested = [](int arrays) {
    return R"({"id":"a","input":"q","checks":[{"type":"contains","value":"x"}],"metadata":)" +
           std::string(arrays, '[') + std::string(arrays, ']') + "}";
  };
  CHECK(parse_cases(nested(63), k_where).size() == 1);
  std::string err = parse_error(line("z") + "\n" + nested(64));
  CHECK(has(err, "s/cases.jsonl:2:"));
  CHECK(has(err, "nesting"));
  // 100,000 levels: an error, not a stack overflow.
  CHECK(has(parse_error(std::string(100000, '[')), "s/cases.jsonl:1:"));
}

TEST_CASE("a duplicate id names both lines") {
  std::string text = line("a") + "\n" + line("b") + "\n" + line("a") + "\n";
  CHECK(has(parse_error(text), "s/cases.jsonl:3: duplicate id \"a\"; first used on line 1"));
}

TEST_CASE("an unknown key lists the allowed keys") {
  std::string l = R"({"id":"a","input":"q","checks":[{"type":"contains","value":"x"}],"prompt":"p"})";
  CHECK(has(
      parse_error(line("z") + "\n" + l),
      "s/cases.jsonl:2: unknown key \"prompt\"; allowed keys: id, kind, agent, scenario, difficulty, group, "
      "input, vars, system, expected, checks, tags, metadata"));
}

TEST_CASE("missing or empty checks") {
  CHECK(has(parse_error(line("z") + "\n" + R"({"id":"a","input":"q"})"),
            "s/cases.jsonl:2: missing \"checks\""));
  CHECK(has(parse_error(R"({"id":"a","input":"q","checks":[]})"),
            "s/cases.jsonl:1: \"checks\" must be a non-empty array of checks, got an empty array"));
  CHECK(has(parse_error(R"({"id":"a","input":"q","checks":{"type":"contains"}})"),
            "s/cases.jsonl:1: \"checks\" must be a non-empty array of checks, got an object"));
}

TEST_CASE("a bad check is reported at its line") {
  // The messages are the check module's; what matters here is file:line.
  auto bad = [](const std::string& check) {
    return parse_error(line("z") + "\n" +
                       R"({"id":"a","input":"q","checks":[{"type":"contains","value":"x"},)" + check + "]}");
  };
  std::string err = bad(R"({"type":"no_such_type"})");
  CHECK(has(err, "s/cases.jsonl:2: "));
  CHECK(has(err, "no_such_type"));
  CHECK(has(bad(R"({"type":"regex","pattern":"(a"})"), "s/cases.jsonl:2: "));
  CHECK(has(bad("3"), "s/cases.jsonl:2: "));
  // equals with no value and no expected answer; with an expected answer it is fine.
  CHECK(has(bad(R"({"type":"equals"})"), "s/cases.jsonl:2: "));
  auto ok = parse_cases(R"({"id":"a","input":"q","expected":"x","checks":[{"type":"equals"}]})", k_where);
  CHECK(ok.at(0).checks.at(0).values == std::vector<std::string>{"x"});
}

TEST_CASE("bad input shapes") {
  auto with_input = [](const std::string& input) {
    return parse_error(R"({"id":"a","checks":[{"type":"contains","value":"x"}],"input":)" + input + "}");
  };
  CHECK(has(parse_error(R"({"id":"a","checks":[{"type":"contains","value":"x"}]})"),
            "s/cases.jsonl:1: missing \"input\""));
  CHECK(has(with_input("42"), "s/cases.jsonl:1: \"input\" must be a non-empty string or a non-empty array"));
  CHECK(has(with_input("\"\""), "got an empty string"));
  CHECK(has(with_input("[]"), "got an empty array"));
  CHECK(has(with_input(R"(["q"])"), "input[0] must be an object"));
  CHECK(has(with_input(R"([{"role":"user","content":"q"},{"role":"robot","content":"q"}])"),
            "input[1].role must be \"system\", \"user\" or \"assistant\", got \"robot\""));
  CHECK(has(with_input(R"([{"content":"q"}])"), "input[0].role must be"));
  CHECK(has(with_input(R"([{"role":"user"}])"), "input[0].content must be a string (missing)"));
  CHECK(
      has(with_input(R"([{"role":"user","content":7}])"), "input[0].content must be a string, got a number"));
  CHECK(has(with_input(R"([{"role":"user","content":"q","name":"n"}])"),
            "input[0]: unknown key \"name\"; allowed keys: role, content"));
}

TEST_CASE("bad field types") {
  auto with = [](const std::string& fields) {
    return parse_error(R"({"input":"q","checks":[{"type":"contains","value":"x"}])" + fields + "}");
  };
  CHECK(has(with(""), "s/cases.jsonl:1: missing \"id\""));
  CHECK(has(with(R"(,"id":"")"), "\"id\" must be a non-empty string"));
  CHECK(has(with(R"(,"id":3)"), "\"id\" must be a non-empty string, got a number"));
  CHECK(has(with(R"(,"id":"a","scenario":null)"), "\"scenario\" must be a non-empty string, got null"));
  CHECK(has(with(R"(,"id":"a","difficulty":1)"), "\"difficulty\" must be a string, got a number"));
  CHECK(has(with(R"(,"id":"a","group":"")"), "\"group\" must be a non-empty string"));
  CHECK(has(with(R"(,"id":"a","expected":["x"])"), "\"expected\" must be a string, got an array"));
  CHECK(has(with(R"(,"id":"a","tags":"x")"), "\"tags\" must be an array of strings, got a string"));
  CHECK(has(with(R"(,"id":"a","tags":["x",2])"), "tags[1] must be a string, got a number"));
}

TEST_CASE("each line must be one JSON object") {
  CHECK(has(parse_error(line("a") + "\n[1,2]\n"),
            "s/cases.jsonl:2: expected a JSON object (one case per line), got an array"));
  // Truncated JSON: the column is where the parser stopped (end of the 11-byte line).
  CHECK(has(parse_error(line("a") + "\n" + R"({"id": "b",)"), "s/cases.jsonl:2:12:"));
  // Two objects on one line: trailing data.
  CHECK(has(parse_error(line("a") + line("b")), "s/cases.jsonl:1:"));
  // A duplicate key inside a line.
  CHECK(has(parse_error(line("z") + "\n" + R"({"id":"a","id":"b"})"), "s/cases.jsonl:2:"));
  CHECK(has(parse_error(line("z") + "\n" + R"({"id":"a","id":"b"})"), "duplicate key"));
}

TEST_CASE("a file with no cases is an error") {
  for (std::string text : {"", "\n\n", "  \r\n\t\n", "\xEF\xBB\xBF", "\xEF\xBB\xBF\r\n"})
    CHECK(has(parse_error(text), "s/cases.jsonl: no cases"));
}

namespace {

// Over 1 MiB of cases, so that the file is read in parts on several threads
// (one per core, at least two here): `n` lines, line i holding case "c<i>".
std::vector<std::string> big_lines(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 1; i <= n; ++i)
    out.push_back(R"({"id":"c)" + std::to_string(i) + R"(","input":")" + std::string(200, 'x') +
                  R"(","checks":[{"type":"regex","pattern":"^x+$"}]})");
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines)
    out += l + "\n";
  return out;
}

} // namespace

TEST_CASE("a large cases file read in parts gives the cases and the errors of a line-by-line read") {
  std::vector<std::string> lines = big_lines(4500); // about 1.2 MB
  REQUIRE(joined(lines).size() > (1u << 20));
  auto cases = parse_cases(joined(lines), k_where);
  REQUIRE(cases.size() == 4500);
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (cases[i].id != "c" + std::to_string(i + 1)) FAIL("case " << i << " is " << cases[i].id);

  // A broken line near the end names its own line number.
  auto broken = lines;
  broken[4000] = "{not json";
  CHECK(has(parse_error(joined(broken)), k_where + ":4001:"));
  // Two broken lines, in different parts: the first one is reported.
  broken[100] = "[1]";
  CHECK(has(parse_error(joined(broken)), k_where + ":101: expected a JSON object"));
  // A duplicate of an early id late in the file, before a broken line in
  // the same part: the duplicate, as a line-by-line read would meet it.
  auto dup = lines;
  dup[3999] = line("c5");
  dup[4200] = "{not json";
  CHECK(has(parse_error(joined(dup)), k_where + ":4000: duplicate id \"c5\"; first used on line 5"));
  // Blank lines and CRLF keep the numbering.
  auto crlf = lines;
  for (auto& l : crlf)
    l += "\r";
  crlf.insert(crlf.begin() + 2000, "");
  crlf[4001] = "{not json";
  CHECK(has(parse_error(joined(crlf)), k_where + ":4002:"));
}

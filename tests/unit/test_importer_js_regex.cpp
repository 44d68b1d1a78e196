// gate import's reading of promptfoo's `regex` (JavaScript's RegExp, no
// flags) in gate's dialect (importer/js_regex.cpp). The expected values are
// what node 20's `new RegExp(pattern).test(text)` gave for each row (the
// engine promptfoo 0.121.20 runs on), not what gate's own rules would say.
#include <doctest.h>

#include <string>
#include <vector>

#include <gate/check/regex.hpp>
#include <gate/importer/detail.hpp>

using gate::importer::detail::js_regex_to_gate;

namespace {

struct Row {
  std::string pattern, text;
  bool js;
};

} // namespace

TEST_CASE("a JavaScript pattern matches in gate what it matches in JavaScript") {
  const std::vector<Row> rows = {
      {"^total: \\d+$",
       "total: 42\x0A"
       "",
       false},
      {"^total: \\d+$", "total: 42", true},
      {"\\p{L}", "p{L}", true},
      {"\\p{L}",
       "\xC3"
       "\xA9"
       "",
       false},
      {"a.c",
       "a\x0A"
       "c",
       false},
      {"a.c",
       "a\xE2"
       "\x80"
       "\xA8"
       "c",
       false},
      {"a.c", "abc", true},
      {"a\\sb",
       "a\xC2"
       "\xA0"
       "b",
       true},
      {"a\\sb",
       "a\xE2"
       "\x80"
       "\x8B"
       "b",
       false},
      {"[\\s]x",
       "\xE3"
       "\x80"
       "\x80"
       "x",
       true},
      {"[^]",
       "\x0A"
       "",
       true},
      {"[]", "a", false},
      {"x{,2}", "x{,2}", true},
      {"x{,2}", "xx", false},
      {"a{2}", "aa", true},
      {"a{a}", "a{a}", true},
      {"]", "]", true},
      {"}", "}", true},
      {"[\\b]",
       "\x08"
       "",
       true},
      {"\\bcat\\b", "a cat!", true},
      {"\\cJ",
       "\x0A"
       "",
       true},
      {"\\c1", "\\c1", true},
      {"(?<y>\\d{4})-", "2024-", true},
      {"\\u00e9",
       "\xC3"
       "\xA9"
       "",
       true},
      {"\\uD83D\\uDE00",
       "\xF0"
       "\x9F"
       "\x98"
       "\x80"
       "",
       true},
      {"[a-c]+$",
       "abc\x0A"
       "",
       false},
      {"[\\d-x]", "-", true},
      {"\\x41", "A", true},
      {"\\x4", "x4", true},
      {"\\/path", "/path", true},
      {"(a|b)*c", "ababc", true},
      {"^$", "", true},
      {"\\$5", "$5", true},
      {"[.]", "a", false},
      {"[$^]", "^", true},
      {"\\w+@\\w+\\.com", "me@x.com", true},
      {"D\xC3"
       "\xB3"
       "nde",
       "\xC2"
       "\xBF"
       "D\xC3"
       "\xB3"
       "nde?",
       true},
      {"\\k", "k", true},
      {"[[:alpha:]]", ":]", true},
      {"[[:alpha:]]", "a", false},
  };
  for (const Row& r : rows) {
    CAPTURE(r.pattern);
    CAPTURE(r.text);
    const auto js = js_regex_to_gate(r.pattern);
    REQUIRE(js.error.empty());
    REQUIRE(js.unsupported.empty());
    CAPTURE(js.pattern);
    const gate::check::Regex re(js.pattern, "t.yaml:1");
    CHECK(re.search(r.text) == r.js);
  }
}

TEST_CASE("what JavaScript refuses and what gate cannot express are told apart") {
  // node 20: SyntaxError for each of these ("Invalid group", "Nothing to repeat", ...).
  for (const char* bad :
       {"(?i)total", "(?i:a)", "a**", "*a", "{2}", "(a", "a)", "[ab", "[z-a]", "a\\", "(?<1x>a)"}) {
    CAPTURE(bad);
    CHECK_FALSE(js_regex_to_gate(bad).error.empty());
  }
  for (const char* valid : {"a(?=b)", "(?<!a)b", "(a)\\1", "(?<n>a)\\k<n>", "\\0 1"}) {
    CAPTURE(valid);
    const auto js = js_regex_to_gate(valid);
    CHECK(js.error.empty());
    if (std::string(valid) != "\\0 1") CHECK_FALSE(js.unsupported.empty());
  }
  CHECK(js_regex_to_gate("^total: \\d+$").pattern == "^total: \\d+\\z");
}

#include <doctest.h>

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gate/check/regex.hpp>
#include <gate/util/error.hpp>

using gate::check::Regex;

namespace {

struct Case {
  const char* pattern;
  std::string text;
  bool matches;
};

// Answers by hand; the ones Python's `re` (with re.ASCII) also accepts were
// cross-checked with it.
const std::vector<Case> k_cases = {
    // literals and the empty pattern
    {"abc", "xxabcxx", true},
    {"abc", "ab", false},
    {"", "", true},
    {"", "abc", true},
    {"a", "", false},
    // . is one code point, not \n unless (?s)
    {"a.c", "abc", true},
    {"a.c", "a\nc", false},
    {"(?s)a.c", "a\nc", true},
    {"a.c",
     "a\xC3\xA9"
     "c",
     true}, // é is two bytes, one character
    {"a..c",
     "a\xC3\xA9"
     "c",
     false},
    {"^.$", "\xC3\xA9", true},
    {"^..$", "\xC3\xA9", false},
    {"^.{3}$", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", true}, // 日本語
    // anchors
    {"^abc", "abcd", true},
    {"^abc", "xabc", false},
    {"abc$", "xabc", true},
    {"abc$", "abcx", false},
    {"abc$", "abc\n", true}, // $ also before a final \n
    {"abc$", "abc\n\n", false},
    {"^(?:yes|no)$", "no\n", true},
    {"abc\\z", "abc\n", false},
    {"abc\\Z", "abc\n", true},
    {"^b", "a\nb", false},
    {"(?m)^b", "a\nb", true},
    {"(?m)a$", "a\nb", true},
    {"a$", "a\nb", false},
    {"\\Aab", "ab", true},
    {"x\\Aab", "xab", false},
    {"^$", "", true},
    {"^$", "\n", true},
    {"(?m)^$", "a\n\nb", true},
    {"^$", "a", false},
    {"a^b", "ab", false},
    // word boundaries
    {"\\bcat\\b", "the cat sat", true},
    {"\\bcat\\b", "concatenate", false},
    {"\\bcat", "cat", true},
    {"cat\\B", "cats", true},
    {"cat\\B", "cat", false},
    {"\\b", "", false},
    {"\\bis\\b", "this is", true},
    {"\\bis\\b", "this", false},
    // bracket classes
    {"[abc]", "xbx", true},
    {"[abc]", "xyz", false},
    {"[a-c]+x", "bbx", true},
    {"[^a-c]", "abc", false},
    {"[^a-c]", "abcd", true},
    {"[^\\n]", "\n", false},
    {"[\\d.]+", "v1.2", true},
    {"^[\\w-]+$", "foo-bar_1", true},
    {"^[\\w-]+$", "foo bar", false},
    {"[]a]", "]", true},
    {"[^]a]", "]", false},
    {"[a-]", "-", true},
    {"[-a]", "-", true},
    {"[[:digit:]]+", "abc123", true},
    {"^[[:alpha:]]+$", "abc1", false},
    {"^[[:alpha:][:digit:]_]+$", "ab_1", true},
    {"[\xC3\xA9-\xC3\xAB]", "\xC3\xAA", true}, // [é-ë] on ê
    {"[\xC3\xA9-\xC3\xAB]", "e", false},
    {"[\\x41-\\x43]", "B", true},
    {"[\\x41-\\x43]", "D", false},
    {"\\x{263A}", "\xE2\x98\xBA", true}, // ☺
    {"\\u00e9", "\xC3\xA9", true},
    {"[\\b]", "\b", true}, // \b is backspace inside []
    // shorthand classes (ASCII)
    {"\\d{3}", "ab12c", false},
    {"\\d{3}", "a123", true},
    {"\\D", "123", false},
    {"\\s", "a b", true},
    {"\\S", "  \t", false},
    {"\\w+", "!!", false},
    {"\\W", "abc_1", false},
    // alternation and groups
    {"cat|dog", "hotdog", true},
    {"cat|dog", "bird", false},
    {"^(cat|dog)s?$", "dogs", true},
    {"^(cat|dog)s?$", "dogsx", false},
    {"a(b|c|)d", "ad", true},
    {"(?:ab)+c", "ababc", true},
    {"^(?:ab)+c", "abac", false},
    {"(?<word>ab)c", "abc", true},
    {"(?P<w>x)", "x", true},
    {"a||b", "zzz", true},
    {"()", "", true},
    {"^(a|ab)(c|bcd)$", "abcd", true},
    // quantifiers
    {"^a*$", "", true},
    {"^a+$", "", false},
    {"^a?b$", "b", true},
    {"^a{2}$", "aa", true},
    {"^a{2}$", "aaa", false},
    {"^a{2,}$", "aaaa", true},
    {"^a{2,}$", "a", false},
    {"^a{2,3}$", "aaa", true},
    {"^a{2,3}$", "aaaa", false},
    {"^a{0}b$", "b", true},
    {"^a{,2}b$", "aab", true},
    {"^a{,2}b$", "aaab", false},
    {"^a{0,0}$", "", true},
    {"a{2", "a{2", true}, // not a count: literal
    {"x{a}", "x{a}", true},
    {"^a*?b$", "aab", true},
    {"^a+?$", "aaa", true},
    {"^(ab){2}$", "abab", true},
    {"^(a|b){3}$", "aba", true},
    {"^(a|b){3}$", "abab", false},
    {"^(a*)*$", "aaa", true},
    {"(a*)*b", "aaab", true},
    {"(a*)+$", "xyz", true},
    {"(a|b)*abb", "babababb", true},
    {"(a|b)*abb", "bababab", false},
    // case folding
    {"(?i)paris", "PARIS is nice", true},
    {"paris", "PARIS", false},
    {"(?i)[a-c]+", "XBC", true},
    {"(?i)[^a]", "A", false},
    {"(?i)\xC3\xA9", "\xC3\x89", true}, // é vs É: Unicode simple case folding
    {"\xC3\xA9", "\xC3\x89", false},
    {"a(?i)b", "aB", true},
    {"a(?i)b", "AB", false},
    {"a(?i:b)c", "aBc", true},
    {"a(?i:b)c", "aBC", false},
    {"(?i)\\bCAT\\b", "the cat", true},
    {"(?i)(?-i:a)", "A", false},
    {"(?i)\\w\\d", "Q7", true},
    {"(?i)\xCF\x83", "\xCE\xA3", true}, // σ and Σ
    {"(?i)^\\w$", "\xC3\xA9", false},   // \w stays ASCII
    // Unicode classes
    {"^\\p{L}+$", "caf\xC3\xA9", true},
    {"^\\p{L}+$", "caf\xC3\xA9!", false},
    {"\\p{Greek}", "abc", false},
    {"\\p{Greek}", "\xCE\xB1", true}, // α
    {"^[\\p{Lu}\\d]+$", "AB1", true},
    {"^[\\p{Lu}\\d]+$", "Ab1", false},
    {"\\PL", "abc", false},
    {"\\pN", "x5", true},
    {"\\p{^Greek}", "\xCE\xB1", false},
    // escapes
    {"a\\.b", "a.b", true},
    {"a\\.b", "axb", false},
    {"\\(x\\)", "(x)", true},
    {"\\$5", "costs $5", true},
    {"1\\+1", "1+1", true},
    {"\\t", "a\tb", true},
    {"\\\\", "a\\b", true},
    {"\\}", "}", true},
    {"]", "]", true},
};

bool matches(const char* pattern, std::string_view text) { return Regex(pattern, "t").search(text); }

std::string error_of(std::string_view pattern) {
  try {
    Regex r(pattern, "suite.jsonl:7");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("regex: table of patterns with known answers") {
  for (const auto& c : k_cases) {
    CAPTURE(c.pattern);
    CAPTURE(c.text);
    CHECK(Regex(c.pattern, "t").search(c.text) == c.matches);
  }
}

TEST_CASE("regex: ignore_case option equals a leading (?i)") {
  CHECK(Regex("refund", "t", true).search("REFUND issued"));
  CHECK_FALSE(Regex("refund", "t", false).search("REFUND issued"));
}

TEST_CASE("regex: invalid UTF-8 and NUL bytes in the text") {
  const std::string bad = "\xff";
  CHECK(matches(".", bad)); // an invalid byte is a unit of its own
  CHECK(matches("^.$", bad));
  CHECK(matches("[^a]", bad));
  CHECK_FALSE(matches("a", bad));
  CHECK_FALSE(matches("\\xff", bad)); // U+00FF is C3 BF, not the raw byte
  CHECK(matches("\\xff", "\xC3\xBF"));
  CHECK(matches("^a.b$", "a\xC3"
                         "b")); // truncated sequence: one unit
  CHECK(matches("^a..b$", "a\xE2\x98"
                          "b")); // E2 98 cut short: each byte is one unit
  const std::string nul("a\0b", 3);
  CHECK(matches("a\\x00b", nul));
  CHECK(matches("a\\0b", nul));
  CHECK(matches("^a.b$", nul));
}

TEST_CASE("regex: pathological patterns finish with the right answer") {
  const std::string as(30000, 'a');
  CHECK(matches("(a+)+$", as));
  CHECK_FALSE(matches("(a+)+$", as + "!"));
  CHECK_FALSE(matches("(a|a)*b", as));
  CHECK(matches("(a|a)*b", as + "b"));
  CHECK_FALSE(matches("(x+x+)+y", std::string(30000, 'x')));
  CHECK_FALSE(matches("^(a|aa)*c$", as));
  CHECK(matches("a{1000}", as));
  CHECK_FALSE(matches("a{1000}b", std::string(999, 'a') + "b"));
}

TEST_CASE("regex: many DFA states (cache rebuilt) keep the answer right") {
  // a[ab]{12}c needs the last 13 characters' 'a' positions: up to 2^13
  // DFA states, more than RE2's budget keeps, on text with no 'c' until the end.
  std::string text;
  unsigned x = 12345;
  for (int i = 0; i < 60000; ++i) {
    x = x * 1103515245u + 12345u;
    text.push_back((x >> 16) & 1 ? 'a' : 'b');
  }
  CHECK_FALSE(matches("a[ab]{12}c", text));
  CHECK(matches("a[ab]{12}c", text + "a" + std::string(12, 'b') + "c"));
  CHECK_FALSE(matches("a[ab]{12}c", text + std::string(12, 'b') + "a" + std::string(11, 'b') + "c"));
}

TEST_CASE("regex: search is safe from several threads") {
  Regex r("\\b(\\d+)\\s+items?\\b", "t");
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i)
        ok[t] += r.search("we have 12 items left") && !r.search("12items") ? 1 : 0;
    });
  for (auto& th : threads)
    th.join();
  for (int v : ok)
    CHECK(v == 200);
}

TEST_CASE("regex: rejected patterns name the place and the problem") {
  struct Bad {
    std::string pattern;
    const char* message;
  };
  const std::vector<Bad> bad = {
      {"(a", "missing ')' for this group at position 1"},
      {"a)", "unmatched ')' at position 2"},
      {"*a", "nothing to repeat at position 1"},
      {"a|+", "nothing to repeat at position 3"},
      {"{2}", "nothing to repeat"},
      {"a**", "multiple repeat"},
      {"(\\w)\\1", "backreferences are not supported at position 5"},
      {"\\k<n>", "backreferences"},
      {"(?P<n>a)(?P=n)", "backreferences"},
      {"ab(?=c)", "lookahead is not supported at position 3"},
      {"(?!a)", "lookahead"},
      {"(?<=a)b", "lookbehind"},
      {"(?<!a)b", "lookbehind"},
      {"(?>a)", "atomic groups"},
      {"a++", "possessive"},
      {"a{2}+", "possessive"},
      {"[abc", "missing ']'"},
      {"[z-a]", "range out of order"},
      {"[a-\\d]", "range cannot end"},
      {"\\p{Foo}", "unknown Unicode class \\p{Foo}"},
      {"a\\pX", "class \\p{X} (a category such as Lu or a script such as Greek) at position 2"},
      {"\\p", "bad \\p class"},
      {"\\p{L", "bad \\p{...} class"},
      {"a$b", "pattern after `$` or \\Z is not supported (end the pattern there, or use \\z or (?m)$) at "
              "position 3"},
      {"(a$)\\n", "pattern after `$`"},
      {"a\\Z$", "pattern after `$`"},
      {"(a$)*", "a repeated `$`"},
      {"(?:yes$|no)x", "pattern after `$`"},
      {"\\q", "unknown escape \\q"},
      {"a\\", "trailing backslash"},
      {"a{3,2}", "n < m"},
      {"a{1001}", "count above 1000"},
      {"(?x)a", "unknown group or flag"},
      {"[[:foo:]]", "unknown POSIX class"},
      {"\\xZZ", "bad hex escape"},
      {"(a{1000}){20}", "too large"},
      {"((a{100}){10}){11}", "too large"},
      {std::string(5000, 'a'), "longer than 4096 bytes"},
      {std::string(300, '(') + std::string(300, ')'), "nested deeper"},
      {"\xff", "not valid UTF-8"},
  };
  for (const auto& b : bad) {
    CAPTURE(b.pattern);
    std::string msg = error_of(b.pattern);
    CHECK(msg.find("suite.jsonl:7: regex ") == 0);
    CHECK(msg.find(b.message) != std::string::npos);
  }
}

TEST_CASE("regex: the largest allowed counts compile") {
  CHECK(matches("^(ab){1000}$", [] {
    std::string s;
    for (int i = 0; i < 1000; ++i)
      s += "ab";
    return s;
  }()));
  CHECK(matches("^[a-z]{0,1000}$", "hello"));
}

TEST_CASE("regex: one Regex reused over many texts answers as a fresh one each time") {
  // RE2 keeps its lazily built DFA between searches; its states must not
  // carry anything from one text into the next (anchors, a final "\n",
  // an overflowing state cache).
  const char* patterns[] = {"^ab", "ab$", "(?m)^b", "\\bcat\\b", "x\\B", "(a|b)*a(a|b){11}c", "é+"};
  const std::vector<std::string> texts = {"ab",
                                          "ab\n",
                                          "cab",
                                          "a\nb",
                                          "the cat sat",
                                          "concat",
                                          "xx",
                                          "x y",
                                          "é",
                                          "abab\nbab\n",
                                          "",
                                          "c",
                                          std::string(3000, 'a') + "b" + std::string(11, 'a') + "c"};
  for (const char* p : patterns) {
    Regex reused(p, "test");
    for (int round = 0; round < 3; ++round) {
      for (const auto& t : texts) {
        Regex fresh(p, "test");
        CHECK_MESSAGE(reused.search(t) == fresh.search(t), p << " on " << t.substr(0, 20));
      }
    }
  }
}

TEST_CASE("regex: states kept between searches never change an answer") {
  // The same pattern over texts that alternate between matching and not,
  // through one object, a second object of the same pattern, and the same
  // pattern with other flags (a different program: "abc" vs "(?i)abc").
  const std::vector<std::pair<std::string, bool>> texts = {
      {"xx abc yy", true}, {"ABC", false}, {"ab c", false}, {"zzabc", true}, {"", false}, {"a\nbc", false}};
  Regex first("abc", "t");
  for (int round = 0; round < 3; ++round)
    for (const auto& [text, want] : texts)
      CHECK(first.search(text) == want);
  {
    Regex icase("abc", "t", true);
    CHECK(icase.search("ABC"));
    CHECK_FALSE(first.search("ABC"));
  }
  auto second = std::make_unique<Regex>("abc", "t");
  for (const auto& [text, want] : texts)
    CHECK(second->search(text) == want);
  second.reset(); // the next object of the pattern still answers right
  Regex third("abc", "t");
  CHECK(third.search("--abc--"));
  // Many patterns alive at once, each searched again after the others.
  std::vector<std::unique_ptr<Regex>> many;
  for (int i = 0; i < 40; ++i)
    many.push_back(std::make_unique<Regex>("n" + std::to_string(i) + "\\b", "t"));
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 40; ++i) {
      CHECK(many[static_cast<std::size_t>(i)]->search("x n" + std::to_string(i) + " y"));
      CHECK_FALSE(many[static_cast<std::size_t>(i)]->search("x n" + std::to_string(i) + "0 y"));
    }
}

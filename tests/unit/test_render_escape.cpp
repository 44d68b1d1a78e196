#include <doctest.h>

#include <random>
#include <string>
#include <vector>

#include <gate/render/escape.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

using namespace gate::render;

namespace {

const std::string k_wj = "\xE2\x81\xA0";   // U+2060 WORD JOINER
const std::string k_fffd = "\xEF\xBF\xBD"; // U+FFFD

// The inputs of RELIABILITY.md rel-37 and friends.
const std::vector<std::string> k_nasty = {
    "</details>",
    "<img src=x>",
    "[x](http://evil)",
    "@org/team",
    "```",
    "|",
    "\n::error::x",
    "a\r\nb",
    "\\|",
    "\\",
    "`",
    "``a``",
    "<script>alert(1)</script>",
    "![i](http://evil/i.png)",
    "**bold** _it_ ~~s~~",
    "# heading",
    "&lt;b&gt;",
    "\xff\xfe",
    "\xe2\x80\xae"
    "reversed",
    std::string("x\0y", 3),
    "@@",
    "a@b.c",
    "|||",
    "\t|\t",
    "<!-- c -->",
    "]]>",
    "$x$",
    "\xc3",
    "e\xcc\x81",
    "\xf0\x9f\x98\x80",
};

// Inputs built from the nasty ones: each, each pair, and seeded random
// strings over an alphabet of markup characters and broken bytes.
std::vector<std::string> inputs() {
  std::vector<std::string> out = k_nasty;
  for (const auto& a : k_nasty)
    for (const auto& b : k_nasty)
      out.push_back(a + b);
  const std::vector<std::string> alphabet = {
      "|", "\\", "`", "<", ">", "@", "\n",   "\r",           "[",    "]",  "(", ")",
      "&", "#",  "*", "_", "a", " ", "\xff", "\xe2\x80\xae", "\x01", "\"", "'"};
  std::mt19937 rng(20260101);
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    int len = static_cast<int>(rng() % 24);
    for (int j = 0; j < len; ++j)
      s += alphabet[rng() % alphabet.size()];
    out.push_back(s);
  }
  return out;
}

// Every '|' is escaped. GFM's table scanner (cmark-gfm) keeps any pipe
// preceded by a backslash inside the cell, also in code spans; in text the
// stricter form, an odd number of backslashes, also keeps the backslashes
// themselves literal.
bool escaped(const std::string& s, bool odd = true, char c = '|') {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != c) continue;
    std::size_t slashes = 0;
    while (slashes < i && s[i - 1 - slashes] == '\\')
      ++slashes;
    if (slashes == 0 || (odd && slashes % 2 == 0)) return false;
  }
  return true;
}

bool mentions_neutralized(const std::string& s) {
  for (std::size_t i = s.find('@'); i != std::string::npos; i = s.find('@', i + 1))
    if (s.compare(i + 1, k_wj.size(), k_wj) != 0) return false;
  return true;
}

std::size_t longest_run(const std::string& s, char c) {
  std::size_t best = 0, run = 0;
  for (char x : s) {
    run = x == c ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

} // namespace

TEST_CASE("md_cell escapes markup, entities, line breaks and mentions") {
  CHECK(md_cell("plain text 1.5") == "plain text 1.5");
  CHECK(md_cell("a|b") == "a\\|b");
  CHECK(md_cell("\\|") == "\\\\\\|");
  CHECK(md_cell("<img src=x>") == "&lt;img src=x&gt;");
  CHECK(md_cell("</details>") == "&lt;/details&gt;");
  CHECK(md_cell("[x](http://evil)") == "\\[x\\](http://evil)");
  CHECK(md_cell("@org/team") == "@" + k_wj + "org/team");
  CHECK(md_cell("\n::error::x") == " ::error::x");
  CHECK(md_cell("a\r\nb") == "a  b");
  CHECK(md_cell("```") == "\\`\\`\\`");
  CHECK(md_cell("*_#~$!") == "\\*\\_\\#\\~\\$\\!");
  CHECK(md_cell("AT&T") == "AT&amp;T");
  CHECK(md_cell("x\x01y") == "x y");
  CHECK(md_cell("bad \xff") == "bad " + k_fffd);
  CHECK(md_cell("a\xe2\x80\xae"
                "b") == "a" + k_fffd + "b");
  CHECK(md_cell("caf\xc3\xa9 \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xf0\x9f\x98\x80");
}

TEST_CASE("md_cell output never leaves its table cell (property)") {
  for (const auto& in : inputs()) {
    std::string out = md_cell(in);
    INFO("input: ", in);
    CHECK(gate::valid_utf8(out));
    CHECK(out.find('\n') == std::string::npos);
    CHECK(out.find('\r') == std::string::npos);
    CHECK(out.find('<') == std::string::npos);
    CHECK(out.find('>') == std::string::npos);
    CHECK(escaped(out));
    CHECK(mentions_neutralized(out));
    CHECK(out.find("@org") == std::string::npos);
    // Brackets and backticks escaped the same way: no link, image or code
    // span can form.
    for (char c : {'[', ']', '`', '*', '_'})
      CHECK(escaped(out, true, c));
  }
}

TEST_CASE("md_code_span uses a fence longer than any backtick run inside") {
  CHECK(md_code_span("abc") == "` abc `");
  CHECK(md_code_span("a`b") == "`` a`b ``");
  CHECK(md_code_span("```") == "```` ``` ````");
  CHECK(md_code_span("a\nb") == "` a b `");
  CHECK(md_code_span("a|b") == "` a|b `");
  CHECK(md_code_span("a|b", true) == "` a\\|b `");
  for (const auto& in : inputs()) {
    std::string out = md_code_span(in, true);
    INFO("input: ", in);
    std::size_t fence = 0;
    while (fence < out.size() && out[fence] == '`')
      ++fence;
    REQUIRE(out.size() >= 2 * fence + 2);
    CHECK(out.compare(out.size() - fence, fence, std::string(fence, '`')) == 0);
    std::string body = out.substr(fence, out.size() - 2 * fence);
    CHECK(longest_run(body, '`') < fence);
    CHECK(body.find('\n') == std::string::npos);
    CHECK(escaped(body, false));
    CHECK(gate::valid_utf8(out));
  }
}

TEST_CASE("md_code_block cannot be closed by its content") {
  CHECK(md_code_block("x") == "```\nx\n```\n");
  CHECK(md_code_block("a\r\nb\n") == "```\na\nb\n```\n");
  CHECK(md_code_block("```\nnot the end\n````") == "`````\n```\nnot the end\n````\n`````\n");
  for (const auto& in : inputs()) {
    std::string out = md_code_block(in);
    INFO("input: ", in);
    std::size_t fence = out.find('\n');
    REQUIRE(fence >= 3);
    CHECK(out.substr(0, fence) == std::string(fence, '`'));
    CHECK(out.size() >= 2 * fence + 2);
    CHECK(out.substr(out.size() - fence - 2) == "\n" + std::string(fence, '`') + "\n");
    CHECK(longest_run(out.substr(fence, out.size() - 2 * fence - 1), '`') < fence);
    CHECK(gate::valid_utf8(out));
  }
}

TEST_CASE("html_escape and xml_escape") {
  CHECK(html_escape("<a href=\"x\">&'") == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  CHECK(xml_escape("\"'&<>") == "&quot;&apos;&amp;&lt;&gt;");
  CHECK(xml_escape("a\nb\tc\rd") == "a&#10;b&#9;c&#13;d");
  CHECK(xml_text("a\nb\tc\rd") == "a\nb\tc&#13;d");
  CHECK(xml_escape("]]>") == "]]&gt;");
  // Not allowed in XML 1.0, even as a character reference.
  CHECK(xml_escape(std::string("a\x00"
                               "b\x01\x08\x0b\x1f",
                               7)) == "a" + k_fffd + "b" + k_fffd + k_fffd + k_fffd + k_fffd);
  CHECK(xml_escape("\xef\xbf\xbe\xef\xbf\xbf") == k_fffd + k_fffd); // U+FFFE, U+FFFF
  CHECK(xml_escape("\xff") == k_fffd);
  CHECK(xml_escape("\xed\xa0\x80") == k_fffd + k_fffd + k_fffd); // a surrogate: invalid UTF-8
  CHECK(xml_escape("\xf0\x9f\x98\x80 caf\xc3\xa9") == "\xf0\x9f\x98\x80 caf\xc3\xa9");
  for (const auto& in : inputs()) {
    std::string out = xml_escape(in);
    INFO("input: ", in);
    CHECK(gate::valid_utf8(out));
    for (char c : {'<', '>', '"', '\'', '\n', '\r', '\t'})
      CHECK(out.find(c) == std::string::npos);
    for (unsigned char c : out)
      CHECK((c >= 0x20 || c == '\t' || c == '\n' || c == '\r'));
    for (std::size_t i = out.find('&'); i != std::string::npos; i = out.find('&', i + 1)) {
      bool entity = false;
      for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#9;", "&#10;", "&#13;"})
        entity = entity || out.compare(i, std::string(e).size(), e) == 0;
      CHECK(entity);
    }
  }
}

TEST_CASE("truncate_utf8 cuts on a character boundary and marks the cut") {
  // "h\xc3\xa9llo" is 6 bytes: h, é (2 bytes), l, l, o.
  CHECK(truncate_utf8("h\xc3\xa9llo", 6) == "h\xc3\xa9llo");
  // 5 bytes: room for 5 − 3 (the ellipsis) = 2 bytes, which would cut é → "h".
  CHECK(truncate_utf8("h\xc3\xa9llo", 5) == "h\xe2\x80\xa6");
  // 7 bytes at a limit of 6: 6 − 3 = 3 bytes kept, "hé" whole.
  CHECK(truncate_utf8("h\xc3\xa9llox", 6) == "h\xc3\xa9\xe2\x80\xa6");
  CHECK(truncate_utf8("abcdef", 2) == "ab");
  CHECK(truncate_utf8("", 0).empty());
  std::string long_text(500, 'x');
  CHECK(truncate_utf8(long_text, 120).size() == 120);
}

TEST_CASE("escapers redact registered secrets before escaping") {
  gate::register_secret("sk-canary-7f3a9b1c2d4e5f60");
  // The secret holds '-' only, but escaping an '_' or '|' inside one would
  // hide it from a later redaction; redacting first cannot miss.
  for (auto f : {md_cell, html_escape, xml_escape, xml_text}) {
    std::string out = f("key=sk-canary-7f3a9b1c2d4e5f60|");
    CHECK(out.find("sk-canary") == std::string::npos);
    CHECK(out.find("2d4e5f60") == std::string::npos);
    CHECK(out.find("REDACTED") != std::string::npos);
  }
  CHECK(md_code_span("sk-canary-7f3a9b1c2d4e5f60") == "` [REDACTED] `");
  CHECK(md_code_block("sk-canary-7f3a9b1c2d4e5f60") == "```\n[REDACTED]\n```\n");
}

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

namespace {
std::string literal(std::string_view s, gate::json::Utf8 utf8 = gate::json::Utf8::keep) {
  std::string out;
  gate::json::append_quoted(s, out, utf8);
  return out;
}
} // namespace

TEST_CASE("append_quoted escapes every control byte, quotes and backslash") {
  using namespace std::string_literals;
  // Five by name, the other 27 bytes below 0x20 as \u00xx in lowercase hex.
  CHECK(literal("\b\f\n\r\t") == R"("\b\f\n\r\t")");
  CHECK(literal("\"\\/") == R"("\"\\/")");
  CHECK(literal("\x00"s) == R"("\u0000")");
  CHECK(literal("\x01\x07\x0b\x0e\x1f") == R"("\u0001\u0007\u000b\u000e\u001f")");
  CHECK(literal("\x7f") == "\"\x7f\"");
  for (int c = 0; c < 0x20; ++c) {
    std::string want;
    switch (c) {
    case '\b': want = "\\b"; break;
    case '\t': want = "\\t"; break;
    case '\n': want = "\\n"; break;
    case '\f': want = "\\f"; break;
    case '\r': want = "\\r"; break;
    default: want = std::string("\\u00") + "0123456789abcdef"[c >> 4] + "0123456789abcdef"[c & 0xf];
    }
    CHECK(literal(std::string(1, static_cast<char>(c))) == "\"" + want + "\"");
    char esc[6];
    CHECK(std::string(esc, gate::json::escape_of(static_cast<unsigned char>(c), esc)) == want);
  }
  // Clean spans around escapes are copied whole.
  CHECK(literal("ab\"cd\\ef\ngh") == R"("ab\"cd\\ef\ngh")");
  CHECK(literal("") == R"("")");
}

TEST_CASE("append_quoted keeps or repairs bytes that are not UTF-8") {
  using gate::json::Utf8;
  // Valid multi-byte sequences pass either way: é, 日, 😀.
  CHECK(literal("\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80", Utf8::repair) ==
        "\"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\"");
  // keep: the bytes as given (canonical JSON hashes them).
  CHECK(literal("a\xff"
                "b",
                Utf8::keep) == "\"a\xff"
                               "b\"");
  // repair: one U+FFFD per byte that starts no valid sequence. A lone
  // continuation byte, a truncated 3-byte sequence (two bytes, two
  // replacements), an overlong '/' (c0 af), a surrogate (ed a0 80) and a
  // lead byte at the end.
  const std::string r = "\xef\xbf\xbd";
  CHECK(literal("\x80", Utf8::repair) == "\"" + r + "\"");
  CHECK(literal("x\xe6\x97", Utf8::repair) == "\"x" + r + r + "\"");
  CHECK(literal("\xc0\xaf", Utf8::repair) == "\"" + r + r + "\"");
  CHECK(literal("\xed\xa0\x80", Utf8::repair) == "\"" + r + r + r + "\"");
  CHECK(literal("ok\xf0", Utf8::repair) == "\"ok" + r + "\"");
  // A control byte after repaired bytes is still escaped.
  CHECK(literal("\xff\n", Utf8::repair) == "\"" + r + "\\n\"");
}

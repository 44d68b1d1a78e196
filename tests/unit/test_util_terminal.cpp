// terminal_safe: the one escape for untrusted text on stdout and stderr
// (RELIABILITY.md item 36, issue 21 item 1).
#include <doctest.h>

#include <gate/util/redact.hpp>
#include <gate/util/terminal.hpp>

using gate::Newlines;
using gate::terminal_safe;

TEST_CASE("rel-36: terminal_safe shows control characters instead of sending them") {
  CHECK(terminal_safe("plain text, café, 日本") == "plain text, café, 日本");
  CHECK(terminal_safe("a\n::set-output name=x::y") == "a\\n::set-output name=x::y");
  CHECK(terminal_safe("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(terminal_safe("cr\rlf\ttab\x7f\x01") == "cr\\rlf\\ttab\\x7f\\x01");
  CHECK(terminal_safe(std::string_view("nul\0end", 7)) == "nul\\x00end");
  // C1 CSI (U+009B) starts an escape sequence on some terminals; U+2028 is a
  // line break to some viewers; U+202E reorders what follows.
  CHECK(terminal_safe("\xC2\x9B"
                      "2J") == "\\u009b2J");
  CHECK(terminal_safe("a\xE2\x80\xA8"
                      "b\xE2\x80\xAE"
                      "c") == "a\\u2028b\\u202ec");
}

TEST_CASE("rel-36: invalid UTF-8 bytes become U+FFFD, one each") {
  CHECK(terminal_safe("a\xff"
                      "b") == "a\xEF\xBF\xBD"
                              "b");
  CHECK(terminal_safe("\xC3") == "\xEF\xBF\xBD");                 // truncated
  CHECK(terminal_safe("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD"); // overlong
}

TEST_CASE("rel-36: Newlines::keep keeps line feeds and tabs, nothing else") {
  CHECK(terminal_safe("a\nb\tc\r\x1b", Newlines::keep) == "a\nb\tc\\r\\x1b");
}

TEST_CASE("terminal_safe redacts registered secrets first") {
  gate::register_secret("sk-terminal-test-secret-0001");
  CHECK(terminal_safe("key sk-terminal-test-secret-0001\n") == "key [REDACTED]\\n");
}

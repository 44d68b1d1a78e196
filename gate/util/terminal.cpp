#include <gate/util/terminal.hpp>

#include <cstdint>
#include <cstdio>

#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate {

namespace {

bool shown_as_code_point(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f || cp == 0x061c;
}

} // namespace

std::string terminal_safe(std::string_view text, Newlines newlines) {
  const std::string s = redact(text);
  const bool keep = newlines == Newlines::keep;
  std::string out;
  out.reserve(s.size());
  char buf[16];
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    std::size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      out += "\xEF\xBF\xBD"; // U+FFFD for the one byte that starts no valid sequence
      ++i;
      continue;
    }
    if (cp == '\n') {
      out += keep ? "\n" : "\\n";
    } else if (cp == '\t') {
      out += keep ? "\t" : "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      out += buf;
    } else if (shown_as_code_point(cp)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s, i, len);
    }
    i += len;
  }
  return out;
}

} // namespace gate

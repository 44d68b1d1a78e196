#include <gate/render/escape.hpp>

#include <algorithm>

#include <gate/report/report.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::render {

namespace {

constexpr std::string_view k_replacement = "\xEF\xBF\xBD"; // U+FFFD
constexpr std::string_view k_word_joiner = "\xE2\x81\xA0"; // U+2060
constexpr std::string_view k_ellipsis = "\xE2\x80\xA6";    // U+2026

// Decodes one code point of valid UTF-8 at s[i]; returns its length.
std::size_t decode(std::string_view s, std::size_t i, char32_t& cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4;
  cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
  for (std::size_t j = 1; j < len; ++j)
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + j]) & 0x3f);
  return len;
}

bool is_bidi_control(char32_t cp) {
  return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f ||
         cp == 0x061c;
}

std::size_t longest_backtick_run(std::string_view s) {
  std::size_t best = 0, run = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

bool xml_char(char32_t cp) {
  return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
         (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

std::string xml(std::string_view text, bool attribute) {
  std::string s = safe_text(text);
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp;
    std::size_t len = decode(s, i, cp);
    switch (cp) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    case '\r': out += "&#13;"; break;
    case '\n': attribute ? out += "&#10;" : out += '\n'; break;
    case '\t': attribute ? out += "&#9;" : out += '\t'; break;
    default:
      if (xml_char(cp))
        out.append(s, i, len);
      else
        out += k_replacement;
    }
    i += len;
  }
  return out;
}

} // namespace

std::string safe_text(std::string_view text) { return to_valid_utf8(redact(text)); }

std::string md_cell(std::string_view text) {
  std::string s = safe_text(text);
  std::string out;
  out.reserve(s.size() + s.size() / 4 + 8);
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp;
    std::size_t len = decode(s, i, cp);
    switch (cp) {
    case '\\':
    case '`':
    case '*':
    case '_':
    case '[':
    case ']':
    case '#':
    case '|':
    case '~':
    case '$':
    case '!':
      out += '\\';
      out += static_cast<char>(cp);
      break;
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '@':
      out += '@';
      out += k_word_joiner;
      break;
    default:
      if (cp < 0x20 || cp == 0x7f || cp == 0x85 || cp == 0x2028 || cp == 0x2029)
        out += ' ';
      else if (is_bidi_control(cp))
        out += k_replacement;
      else
        out.append(s, i, len);
    }
    i += len;
  }
  return out;
}

std::string md_code_span(std::string_view text, bool in_table) {
  std::string s = safe_text(text);
  std::string body;
  body.reserve(s.size() + 2);
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp;
    std::size_t len = decode(s, i, cp);
    if (cp < 0x20 || cp == 0x7f || cp == 0x85 || cp == 0x2028 || cp == 0x2029)
      body += ' ';
    else if (is_bidi_control(cp))
      body += k_replacement;
    else if (cp == '|' && in_table)
      body += "\\|";
    else
      body.append(s, i, len);
    i += len;
  }
  std::string fence(longest_backtick_run(body) + 1, '`');
  // CommonMark strips one space on each side when both are present, so the
  // padding keeps a leading or trailing backtick from touching the fence.
  return fence + ' ' + body + ' ' + fence;
}

std::string md_code_block(std::string_view text) {
  std::string s = safe_text(text);
  std::string body;
  body.reserve(s.size() + 1);
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp;
    std::size_t len = decode(s, i, cp);
    if (cp == '\r' && i + 1 < s.size() && s[i + 1] == '\n') {
      // CRLF → LF; a lone CR is a line ending too in CommonMark.
    } else if (cp == '\r') {
      body += '\n';
    } else if (cp == 0 || is_bidi_control(cp)) {
      body += k_replacement;
    } else {
      body.append(s, i, len);
    }
    i += len;
  }
  if (body.empty() || body.back() != '\n') body += '\n';
  std::string fence(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
  return fence + '\n' + body + fence + '\n';
}

std::string html_escape(std::string_view text) {
  std::string s = safe_text(text);
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string xml_escape(std::string_view text) { return xml(text, true); }

std::string xml_text(std::string_view text) { return xml(text, false); }

std::string truncate_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  if (max_bytes < k_ellipsis.size()) return std::string(utf8_prefix(text, max_bytes));
  std::string out(utf8_prefix(text, max_bytes - k_ellipsis.size()));
  out += k_ellipsis;
  return out;
}

std::string_view question_excerpt(std::string_view input) {
  const std::size_t last = input.rfind("\n\nuser: ");
  if (last != std::string_view::npos) return input.substr(last + 2);
  return input;
}

} // namespace gate::render

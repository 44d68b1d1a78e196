#include <gate/util/text.hpp>

#include <cstdint>
#include <cstring>

#include <gate/util/json.hpp>

namespace gate {

void append_utf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | cp >> 6);
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | cp >> 12);
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | cp >> 18);
    out += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

namespace {

constexpr std::string_view k_replacement = "\xEF\xBF\xBD";

std::string maximal_subpart(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    std::size_t needed = 0;
    unsigned char lower = 0x80, upper = 0xBF;
    if (b <= 0x7F) {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    if (b >= 0xC2 && b <= 0xDF) {
      needed = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      needed = 2;
      if (b == 0xE0) lower = 0xA0; // no overlongs
      if (b == 0xED) upper = 0x9F; // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      needed = 3;
      if (b == 0xF0) lower = 0x90; // no overlongs
      if (b == 0xF4) upper = 0x8F; // nothing above U+10FFFF
    } else {
      out += k_replacement;
      ++i;
      continue;
    }
    // The continuation bytes that fit form the maximal subpart; a byte that
    // does not fit is not consumed but starts the next sequence.
    std::size_t j = i + 1;
    std::size_t seen = 0;
    while (seen < needed && j < s.size()) {
      auto c = static_cast<unsigned char>(s[j]);
      if (c < lower || c > upper) break;
      lower = 0x80;
      upper = 0xBF;
      ++seen;
      ++j;
    }
    if (seen == needed)
      out.append(s.substr(i, j - i));
    else
      out += k_replacement;
    i = j;
  }
  return out;
}

std::string per_byte(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  std::uint32_t cp = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      out += k_replacement;
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

} // namespace

std::string to_valid_utf8(std::string_view s, Utf8Repair how) {
  if (valid_utf8(s)) return std::string(s);
  return how == Utf8Repair::per_byte ? per_byte(s) : maximal_subpart(s);
}

std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t len;
  if ((c & 0xe0) == 0xc0) {
    len = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t j = 1; j < len; ++j) {
    const auto cc = static_cast<unsigned char>(s[i + j]);
    if ((cc & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

bool valid_utf8(std::string_view s) {
  // ASCII eight bytes at a time: most text gate checks (every string of
  // every cache entry it replays) is ASCII.
  std::size_t i = 0;
  for (; s.size() - i >= 8; i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + i, 8);
    if ((w & 0x8080808080808080u) != 0) break;
  }
  std::uint32_t cp = 0;
  for (; i < s.size();) {
    const std::size_t len = decode_utf8(s, i, cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t end = max_bytes;
  // Step back over continuation bytes so the cut lands on a sequence start.
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80)
    --end;
  return s.substr(0, end);
}

std::string quote_excerpt(std::string_view s, std::size_t max_bytes) {
  std::string out;
  json::append_quoted(utf8_prefix(s, max_bytes), out);
  if (s.size() > max_bytes) out += "...";
  return out;
}

std::string_view trim_space(std::string_view s) {
  constexpr std::string_view k_space = " \t\n\v\f\r";
  auto b = s.find_first_not_of(k_space);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(k_space) - b + 1);
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_word(std::string_view s) {
  bool plain = !s.empty();
  for (char c : s)
    plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      (c != 0 && std::strchr("-_./:@%+=,", c) != nullptr));
  return plain ? std::string(s) : shell_quote(s);
}

bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

} // namespace gate

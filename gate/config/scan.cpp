#include <gate/config/keys.hpp>

#include <algorithm>

#include <gate/util/error.hpp>
#include <gate/util/text.hpp>

namespace gate::config::detail {
namespace {

std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC0 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF7) return 4;
  return 0;
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// True when the rest of the line after `i` holds more than blanks.
bool content_follows(std::string_view text, std::size_t i) {
  for (; i < text.size() && text[i] != '\n'; ++i) {
    if (!blank(text[i])) return true;
  }
  return false;
}

} // namespace

// One pass that follows just enough YAML to know whether a character is in
// a comment, a quoted scalar or a flow collection. It need not be exact:
// yaml-cpp parses afterwards, and its own depth guard stays as a backstop.
void prescan(std::string_view text, const std::string& where) {
  auto fail = [&](std::size_t line, std::size_t col, const std::string& msg) {
    throw Error(Exit::bad_input, located(where, line, col, msg));
  };
  if (text.size() > k_max_config_bytes) {
    fail(0, 0, "config is larger than 1 MiB; expected a small YAML file");
  }
  std::size_t i = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  std::size_t line = 1, col = 1;
  int depth = 0;
  char quote = 0; // ' or " while inside a quoted scalar
  std::size_t quote_line = 0, quote_col = 0;
  bool escaped = false; // the previous character was a backslash inside "..."
  bool comment = false;
  bool indentation = true; // still in the line's leading blanks
  char prev = '\n';        // the previous character
  char last = '\n';        // the last non-blank character on this line, '\n' if none
  // yaml-cpp 0.7 loops forever, allocating, on a ',' outside a flow
  // collection before the document's root mapping has begun (",", "\"a\" ,",
  // "- a\n,"); once a "key:" is open it reports an error instead.
  bool mapping_open = false;
  // It also loops on a ',' left of the root collection's column when the
  // root is indented ("  a: 0\n,b: 1"); 0 = no content in this document yet.
  std::size_t root_col = 0;
  // ... and on a ',' anywhere on a line that starts left of that column
  // ("  a:\n &b: ,c", the third fuzz finding): such a line has left the
  // root collection, which yaml-cpp does not notice before it loops.
  std::size_t line_col = 0; // column of the line's first content, 0 = none yet
  // The same for a line left of the line that opened the first key, when
  // that key is more indented than the document's first content ("do\n
  // name:\n &b: ,c", the fourth finding).
  std::size_t key_line_col = 0;
  // Inside an anchor, alias or tag ("&a:", "!t"): a ':' there is part of its
  // name, not a key's, and a ',' after it still comes before the first key.
  bool property = false;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\0') fail(line, col, "NUL byte; expected UTF-8 text");
    const std::size_t len = utf8_length(static_cast<unsigned char>(c));
    if (len == 0 || i + len > text.size() || !valid_utf8(text.substr(i, len))) {
      fail(line, col, "invalid UTF-8; expected UTF-8 text");
    }
    if (c == '\n') {
      ++line, ++i;
      col = 1;
      comment = false;
      property = false;
      indentation = true;
      line_col = 0;
      prev = last = '\n';
      continue;
    }
    if (indentation && quote == 0 && depth == 0) {
      // YAML indents with spaces only, and yaml-cpp's own message for a tab
      // ("illegal map value") does not say so.
      if (c == '\t' && content_follows(text, i)) {
        fail(line, col, "tab character in indentation; YAML indents with spaces only");
      }
    }
    if (c != ' ' && c != '\t') indentation = false;
    if (comment) {
      // Nothing inside a comment counts.
    } else if (quote == '\'') {
      if (c == '\'') {
        if (i + 1 < text.size() && text[i + 1] == '\'') {
          ++i, ++col; // '' is an escaped quote
        } else {
          quote = 0;
        }
      }
    } else if (quote == '"') {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        quote = 0;
      }
    } else if (property && !blank(c) && std::string_view(",[]{}").find(c) == std::string_view::npos) {
      // Still the property's name.
    } else {
      property = false;
      // A quote or bracket starts a node only where a node can start: first
      // on the line, after "key:", "- ", "? " or inside a flow collection.
      // Elsewhere it is part of a plain scalar ("it's", "a[1]").
      const bool node_start =
          std::string_view("\n:-?[{,").find(last) != std::string_view::npos && (blank(prev) || prev == last);
      if (c == '#' && (blank(prev) || prev == '\n')) {
        comment = true;
      } else if ((c == '&' || c == '!' || c == '*') && node_start) {
        property = true;
      } else if (c == ',' && depth == 0 && !mapping_open) {
        fail(line, col, "',' before the first key; expected key: value lines");
      } else if (c == ',' && depth == 0 &&
                 (line_col != 0 ? line_col : col) < std::max(root_col, key_line_col)) {
        fail(line, col, "',' left of the first key's column; expected key: value lines");
      } else if (c == ':' && depth == 0 &&
                 (i + 1 == text.size() || blank(text[i + 1]) || text[i + 1] == '\n')) {
        mapping_open = true;
        if (key_line_col == 0) key_line_col = line_col;
      } else if (c == '-' && prev == '\n' && text.substr(i, 3) == "---") {
        mapping_open = false; // a new document
        root_col = 0;
        key_line_col = 0;
      } else if ((c == '\'' || c == '"') && node_start) {
        quote = c;
        quote_line = line, quote_col = col;
      } else if ((c == '[' || c == '{') && (depth > 0 || node_start)) {
        if (++depth > k_max_flow_depth) {
          fail(line, col,
               "brackets nested deeper than " + std::to_string(k_max_flow_depth) +
                   " levels; expected a shallow config");
        }
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      }
    }
    if (!comment && !blank(c)) {
      if (line_col == 0 && quote == 0 && depth == 0) line_col = col;
      last = c;
      if (root_col == 0 && quote == 0 && depth == 0) root_col = col;
    }
    prev = c;
    i += len;
    ++col;
  }
  // yaml-cpp takes an unclosed quoted scalar up to the end of the file.
  if (quote != 0) {
    fail(quote_line, quote_col, std::string("quoted string never closed; expected a closing ") + quote);
  }
}

} // namespace gate::config::detail

#include <gate/importer/detail.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

#include <gate/util/text.hpp>

// promptfoo's `regex` is `new RegExp(value)`: JavaScript's syntax, no flags,
// so the non-Unicode grammar with its web-compatibility rules (ECMA-262
// Annex B). This file reads that grammar and writes the same pattern in
// gate's dialect (check/regex.hpp), every literal as \x{...}, so that
// nothing of it is read by gate's own rules ($ before a final newline, {,n},
// POSIX names, \p classes).

namespace gate::importer::detail {

namespace {

// JavaScript's \s (WhiteSpace and LineTerminator), as class items.
constexpr const char* k_js_space =
    "\\x{9}-\\x{d}\\x{20}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"
    "\\x{feff}";

// A literal character: as itself where gate's dialect reads it as itself
// in a class and out of one (letters, digits, some punctuation, any
// printable non-ASCII character), else as \x{...}, so the suite stays readable.
std::string hex_literal(std::uint32_t cp) {
  static constexpr std::string_view k_plain = " :,'\"@#%&=!<>;/~`_";
  const bool alnum = (cp >= '0' && cp <= '9') || ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z');
  if (alnum || (cp < 0x80 && k_plain.find(static_cast<char>(cp)) != std::string_view::npos) ||
      (cp >= 0xA0 && cp <= 0x10FFFF && cp != 0x2028 && cp != 0x2029 && (cp < 0xD800 || cp > 0xDFFF))) {
    std::string out;
    append_utf8(cp, out);
    return out;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\x{%x}", static_cast<unsigned>(cp));
  return buf;
}

bool is_digit(std::uint32_t c) { return c >= '0' && c <= '9'; }
int hex_value(std::uint32_t c) { return c < 0x80 ? hex_digit(static_cast<char>(c)) : -1; }
bool is_word(std::uint32_t c) {
  return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_' || c == '$';
}

struct Reader {
  std::vector<std::uint32_t> cps;
  std::size_t i = 0;
  std::string out;
  JsRegex result;
  int groups = 0;     // capturing groups, for \N
  bool named = false; // a (?<name>...) anywhere: \k is a backreference
  bool atom = false;  // something a quantifier can follow
  int depth = 0;

  bool done() const { return i >= cps.size(); }
  std::uint32_t peek(std::size_t ahead = 0) const { return i + ahead < cps.size() ? cps[i + ahead] : 0; }
  bool has(std::size_t ahead = 0) const { return i + ahead < cps.size(); }
  void syntax(const std::string& what) {
    if (result.error.empty() && result.unsupported.empty())
      result.error = what + " at character " + std::to_string(i + 1);
  }
  void unsupported(const std::string& what) {
    if (result.error.empty() && result.unsupported.empty())
      result.unsupported = what + " at character " + std::to_string(i + 1);
  }
  // The character the last escape() stood for, when it was one (a range end).
  std::optional<std::uint32_t> last_escape;
  std::string ch(std::uint32_t v) {
    last_escape = v;
    return hex_literal(v);
  }
  bool failed() const { return !result.error.empty() || !result.unsupported.empty(); }

  // \uHHHH (a surrogate pair written as two escapes is one character), or
  // nullopt when it is not four hex digits (then Annex B reads `u`).
  std::optional<std::uint32_t> unicode_escape() { // i at the 'u'
    auto four = [&](std::size_t at) -> std::optional<std::uint32_t> {
      std::uint32_t v = 0;
      for (std::size_t k = 0; k < 4; ++k) {
        if (at + k >= cps.size() || hex_value(cps[at + k]) < 0) return std::nullopt;
        v = v * 16 + static_cast<std::uint32_t>(hex_value(cps[at + k]));
      }
      return v;
    };
    auto v = four(i + 1);
    if (!v) return std::nullopt;
    i += 5;
    if (*v >= 0xD800 && *v <= 0xDBFF && peek() == '\\' && peek(1) == 'u') {
      auto low = four(i + 2);
      if (low && *low >= 0xDC00 && *low <= 0xDFFF) {
        i += 6;
        return 0x10000 + ((*v - 0xD800) << 10) + (*low - 0xDC00);
      }
    }
    if (*v >= 0xD800 && *v <= 0xDFFF) unsupported("a lone surrogate \\u escape (gate matches code points)");
    return v;
  }

  // One escape after `\` (i at the character after it). Returns a class item
  // or an atom in gate's syntax; `in_class` changes \b and the sets.
  std::string escape(bool in_class) {
    last_escape.reset();
    if (done()) {
      syntax("\\ at end of pattern");
      return {};
    }
    const std::uint32_t c = peek();
    switch (c) {
    case 'd': ++i; return "\\d";
    case 'D': ++i; return "\\D";
    case 'w': ++i; return "\\w";
    case 'W': ++i; return "\\W";
    case 's': ++i; return in_class ? std::string(k_js_space) : std::string("[") + k_js_space + "]";
    case 'S':
      ++i;
      if (in_class) unsupported("\\S inside a class");
      return std::string("[^") + k_js_space + "]";
    case 'b': ++i; return in_class ? ch(8) : "\\b";
    case 'B':
      ++i;
      if (in_class) return ch('B');
      return "\\B";
    case 'n': ++i; return ch('\n');
    case 't': ++i; return ch('\t');
    case 'r': ++i; return ch('\r');
    case 'f': ++i; return ch('\f');
    case 'v': ++i; return ch('\v');
    case 'x':
      if (hex_value(peek(1)) >= 0 && hex_value(peek(2)) >= 0) {
        const auto v = static_cast<std::uint32_t>(hex_value(peek(1)) * 16 + hex_value(peek(2)));
        i += 3;
        return ch(v);
      }
      ++i;
      return ch('x');
    case 'u': {
      if (auto v = unicode_escape()) return ch(*v);
      ++i;
      return ch('u');
    }
    case 'c':
      if (((peek(1) | 0x20) >= 'a' && (peek(1) | 0x20) <= 'z')) {
        const std::uint32_t v = peek(1) % 32;
        i += 2;
        return ch(v);
      }
      return ch('\\'); // Annex B: the backslash is literal, `c` comes next
    case 'k':
      if (named && !in_class) {
        unsupported("a named backreference \\k (gate has no backreferences)");
        return {};
      }
      ++i;
      return ch('k');
    default: break;
    }
    if (c == '0' && !is_digit(peek(1))) {
      ++i;
      return ch(0);
    }
    if (is_digit(c)) {
      if (!in_class && c != '0')
        unsupported("a backreference or octal escape \\" + std::string(1, char(c)));
      else
        unsupported("an octal escape");
      return {};
    }
    // An identity escape: \p{L} without the u flag is the text p{L}.
    ++i;
    return ch(c);
  }

  void klass() { // i after '['
    std::string items;
    bool negated = false;
    if (peek() == '^') negated = true, ++i;
    if (peek() == ']') {
      ++i;
      out += negated ? "(?s:.)" : "[^\\x{0}-\\x{10ffff}]";
      return;
    }
    std::optional<std::uint32_t> last; // the previous single character, for a range check
    while (true) {
      if (done()) {
        syntax("Unterminated character class");
        return;
      }
      std::uint32_t c = peek();
      if (c == ']') {
        ++i;
        break;
      }
      std::string item;
      std::optional<std::uint32_t> single;
      if (c == '\\') {
        ++i;
        const std::size_t at = i;
        item = escape(true);
        if (failed()) return;
        // A single character escape (\x{...}) can be a range end.
        single = last_escape;
        (void)at;
      } else {
        ++i;
        item = hex_literal(c);
        single = c;
      }
      if (peek() == '-' && has(1) && peek(1) != ']' && single) {
        // A range: the end is a character or a single-character escape.
        const std::size_t save = i;
        ++i;
        std::uint32_t end = peek();
        std::string end_item;
        std::optional<std::uint32_t> end_single;
        if (end == '\\') {
          ++i;
          end_item = escape(true);
          if (failed()) return;
          end_single = last_escape;
        } else {
          ++i;
          end_item = hex_literal(end);
          end_single = end;
        }
        if (end_single) {
          if (*end_single < *single) {
            syntax("Range out of order in character class");
            return;
          }
          items += item + "-" + end_item;
          continue;
        }
        // Annex B: a range with a set at one end is the three items.
        (void)save;
        items += item + hex_literal('-') + end_item;
        continue;
      }
      items += item;
      last = single;
    }
    (void)last;
    out += (negated ? "[^" : "[") + items + "]";
  }

  void quantifier_check(const char* what) {
    if (!atom) syntax(std::string("Nothing to repeat (") + what + ")");
  }

  // After an atom: *, +, ?, {n}, {n,}, {n,m}, each optionally lazy.
  bool braced(std::string& q) { // i at '{'; true when it is a count
    std::size_t k = i + 1;
    std::string text = "{";
    auto digits = [&]() {
      std::size_t start = k;
      while (k < cps.size() && is_digit(cps[k]))
        text.push_back(static_cast<char>(cps[k++]));
      return k > start;
    };
    if (!digits()) return false;
    if (k < cps.size() && cps[k] == ',') {
      text.push_back(',');
      ++k;
      digits();
    }
    if (k >= cps.size() || cps[k] != '}') return false;
    text.push_back('}');
    q = text;
    i = k + 1;
    return true;
  }

  void sequence() {
    while (!done() && !failed()) {
      const std::uint32_t c = peek();
      switch (c) {
      case '|':
        ++i;
        out += '|';
        atom = false;
        continue;
      case ')':
        if (depth == 0) {
          syntax("Unmatched ')'");
          return;
        }
        return;
      case '(': {
        ++i;
        bool capture = true;
        if (peek() == '?') {
          const std::uint32_t d = peek(1);
          if (d == ':') {
            i += 2;
            capture = false;
            out += "(?:";
          } else if (d == '=' || d == '!' || (d == '<' && (peek(2) == '=' || peek(2) == '!'))) {
            unsupported("lookaround (gate's regex matches in linear time and has none)");
            return;
          } else if (d == '<') {
            std::size_t k = i + 2;
            std::string name;
            while (k < cps.size() && is_word(cps[k]))
              name.push_back(static_cast<char>(cps[k++]));
            if (name.empty() || k >= cps.size() || cps[k] != '>' ||
                is_digit(static_cast<unsigned char>(name[0]))) {
              syntax("Invalid capture group name");
              return;
            }
            i = k + 1;
            out += "(?:";
          } else {
            syntax("Invalid group");
            return;
          }
        } else {
          out += "(?:";
        }
        if (capture) ++groups;
        ++depth;
        atom = false;
        sequence();
        if (failed()) return;
        if (done()) {
          syntax("Unterminated group");
          return;
        }
        ++i; // ')'
        --depth;
        out += ')';
        atom = true;
        continue;
      }
      case '*':
      case '+':
      case '?': {
        quantifier_check("quantifier");
        if (failed()) return;
        ++i;
        out += static_cast<char>(c);
        if (peek() == '?') ++i; // lazy: only whether it matches is asked
        atom = false;           // so a second quantifier is "Nothing to repeat"
        continue;
      }
      case '{': {
        std::string q;
        if (braced(q)) {
          quantifier_check("{}");
          if (failed()) return;
          out += q;
          if (peek() == '?') ++i;
          atom = false;
          continue;
        }
        ++i;
        out += hex_literal('{');
        atom = true;
        continue;
      }
      case '^':
        ++i;
        out += '^';
        atom = false;
        continue;
      case '$':
        ++i;
        out += "\\z";
        atom = false;
        continue;
      case '.':
        ++i;
        out += "[^\\x{a}\\x{d}\\x{2028}\\x{2029}]";
        atom = true;
        continue;
      case '[':
        ++i;
        klass();
        atom = true;
        continue;
      case '\\': {
        ++i;
        const bool assertion = peek() == 'b' || peek() == 'B';
        out += escape(false);
        atom = !assertion;
        continue;
      }
      default:
        ++i;
        out += hex_literal(c);
        atom = true;
        continue;
      }
    }
  }
};

} // namespace

JsRegex js_regex_to_gate(std::string_view js) {
  Reader r;
  for (std::size_t i = 0; i < js.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = decode_utf8(js, i, cp);
    r.cps.push_back(n == 0 ? 0xFFFD : cp);
    i += n == 0 ? 1 : n;
  }
  // Annex B: \k is a backreference only where the pattern has a named group.
  for (std::size_t i = 0; i + 2 < r.cps.size(); ++i)
    if (r.cps[i] == '(' && r.cps[i + 1] == '?' && r.cps[i + 2] == '<' &&
        (i + 3 >= r.cps.size() || (r.cps[i + 3] != '=' && r.cps[i + 3] != '!')))
      r.named = true;
  r.sequence();
  if (!r.failed() && !r.done()) r.syntax("Unmatched ')'");
  if (!r.failed()) r.result.pattern = std::move(r.out);
  return r.result;
}

} // namespace gate::importer::detail

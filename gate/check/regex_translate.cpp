#include <gate/check/regex_translate.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include <gate/util/error.hpp>
#include <gate/util/text.hpp>

namespace gate::check::detail {

namespace {

constexpr std::size_t k_max_pattern_bytes = 4096;
constexpr int k_max_count = 1000;
constexpr int k_max_nesting = 200;
constexpr int k_unbounded = -1;

bool ascii_alnum(std::uint32_t c) {
  return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

int hex_value(std::uint32_t c) { return c < 0x80 ? hex_digit(static_cast<char>(c)) : -1; }

bool posix_name(const std::string& name) {
  static const char* const k_names[] = {"alpha", "digit", "upper", "lower", "punct", "xdigit", "cntrl",
                                        "print", "graph", "alnum", "word",  "space", "blank"};
  for (const char* n : k_names)
    if (name == n) return true;
  return false;
}

// A character in RE2 syntax: ASCII letters and digits as they are, anything
// else as \x{...}, which RE2 reads as that code point everywhere, in a
// class or out of one.
std::string literal(std::uint32_t cp) {
  if (ascii_alnum(cp)) return std::string(1, static_cast<char>(cp));
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\x{%X}", static_cast<unsigned>(cp));
  return buf;
}

std::string count_suffix(int min, int max) {
  if (max == k_unbounded) return min == 0 ? "*" : min == 1 ? "+" : "{" + std::to_string(min) + ",}";
  if (min == 0 && max == 1) return "?";
  if (min == max) return "{" + std::to_string(min) + "}";
  return "{" + std::to_string(min) + "," + std::to_string(max) + "}";
}

struct Flags {
  bool icase = false, multiline = false, dotall = false;
};

std::string folded(std::string re, const Flags& f) { return f.icase ? "(?i:" + re + ")" : re; }

// Translated text that a quantifier may follow as a whole. `open_dollar`:
// it may end at a gate `$`, which RE2 can only express by consuming the
// final \n (RE2 has no lookahead), so nothing may come after it.
struct Piece {
  std::string re;
  bool open_dollar = false;
};

Piece dollar(bool multiline) {
  if (multiline) return {"(?m:$)", false};
  return {"(?:\\n?\\z)", true};
}

// One escape: a character, a class item (RE2 syntax, valid inside []), or a
// zero-width assertion.
struct Escape {
  std::optional<std::uint32_t> cp;
  std::string set;
  bool ascii_set = false; // \d \w \s and their negations: never case-folded
  std::string assertion;
  bool dollar = false; // \Z
};

bool known_property(const std::string& re) {
  RE2::Options quiet;
  quiet.set_log_errors(false);
  return RE2(re, quiet).ok();
}

// Recursive descent over the decoded pattern. Positions in messages are
// 1-based characters of the pattern.
class Translator {
public:
  Translator(std::vector<std::uint32_t> cps, const std::string& prefix)
      : cps_(std::move(cps)), prefix_(prefix) {}

  std::string run(Flags flags) {
    Piece p = alternation(flags);
    if (pos_ < cps_.size()) fail(pos_, "unmatched ')'");
    return p.re;
  }

private:
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw_bad_input(prefix_ + what + " at position " + std::to_string(at + 1));
  }

  bool at(std::uint32_t c) const { return pos_ < cps_.size() && cps_[pos_] == c; }
  bool at(std::size_t offset, std::uint32_t c) const {
    return pos_ + offset < cps_.size() && cps_[pos_ + offset] == c;
  }

  Piece alternation(Flags& flags) {
    Piece out = concatenation(flags);
    while (at('|')) {
      ++pos_;
      Piece next = concatenation(flags);
      out.re += "|" + next.re;
      out.open_dollar = out.open_dollar || next.open_dollar;
    }
    return out;
  }

  Piece concatenation(Flags& flags) {
    Piece cat;
    while (pos_ < cps_.size() && !at('|') && !at(')')) {
      std::size_t start = pos_;
      if (at('*') || at('+') || at('?') || count_ahead()) fail(start, "nothing to repeat");
      std::optional<Piece> atom_piece = atom(flags);
      if (!atom_piece) continue; // a flag group such as (?i)
      if (cat.open_dollar)
        fail(start, "pattern after `$` or \\Z is not supported (end the pattern there, or use \\z or (?m)$)");
      Piece n = std::move(*atom_piece);
      bool repeated = false;
      int min = 0, max = 0;
      while (quantifier(min, max)) {
        if (repeated) fail(start, "multiple repeat (use a group)");
        repeated = true;
        if (at('?'))
          ++pos_; // lazy: same answer for a yes/no search
        else if (at('+'))
          fail(pos_, "possessive quantifiers are not supported");
        if (n.open_dollar && max != 1) fail(start, "a repeated `$` or \\Z (use \\z or (?m)$)");
        n.re = "(?:" + n.re + ")" + count_suffix(min, max);
      }
      cat.re += n.re;
      cat.open_dollar = n.open_dollar;
    }
    return cat;
  }

  // {m}, {m,}, {m,n} or {,n} at pos_: returns the position after it and
  // sets min and max, leaving pos_ unchanged; nullopt when `{` is literal.
  std::optional<std::size_t> count_ahead(int* min = nullptr, int* max = nullptr) const {
    if (!at('{')) return std::nullopt;
    std::size_t p = pos_ + 1;
    auto number = [&](long& out) {
      std::size_t first = p;
      out = 0;
      while (p < cps_.size() && cps_[p] >= '0' && cps_[p] <= '9') {
        out = std::min<long>(out * 10 + (cps_[p] - '0'), 1000000);
        ++p;
      }
      return p > first;
    };
    long lo = 0, hi = 0;
    const bool has_lo = number(lo);
    const bool comma = p < cps_.size() && cps_[p] == ',';
    bool has_hi = false;
    if (comma) {
      ++p;
      has_hi = number(hi);
    }
    if (p >= cps_.size() || cps_[p] != '}' || (!has_lo && !has_hi)) return std::nullopt;
    const bool unbounded = comma && !has_hi;
    if (!comma) hi = lo;
    if (lo > k_max_count || (!unbounded && hi > k_max_count))
      fail(pos_, "count above " + std::to_string(k_max_count));
    if (!unbounded && hi < lo) fail(pos_, "count {m,n} with n < m");
    if (min != nullptr) *min = static_cast<int>(lo);
    if (max != nullptr) *max = unbounded ? k_unbounded : static_cast<int>(hi);
    return p + 1;
  }

  bool quantifier(int& min, int& max) {
    if (pos_ >= cps_.size()) return false;
    switch (cps_[pos_]) {
    case '*': min = 0, max = k_unbounded; break;
    case '+': min = 1, max = k_unbounded; break;
    case '?': min = 0, max = 1; break;
    case '{': {
      auto end = count_ahead(&min, &max);
      if (!end) return false;
      pos_ = *end;
      return true;
    }
    default: return false;
    }
    ++pos_;
    return true;
  }

  std::optional<Piece> atom(Flags& flags) {
    std::size_t start = pos_;
    std::uint32_t c = cps_[pos_++];
    switch (c) {
    case '(': return group(start, flags);
    case '[': return Piece{folded(bracket(start), flags)};
    case '.': return Piece{flags.dotall ? "(?s:.)" : "[^\\n]"};
    case '^': return Piece{flags.multiline ? "(?m:^)" : "\\A"};
    case '$': return dollar(flags.multiline);
    case '\\': {
      Escape e = escape(start, false);
      if (e.dollar) return dollar(false);
      if (!e.assertion.empty()) return Piece{e.assertion};
      if (!e.set.empty()) return Piece{e.ascii_set ? "[" + e.set + "]" : folded("[" + e.set + "]", flags)};
      return Piece{folded(literal(*e.cp), flags)};
    }
    default: return Piece{folded(literal(c), flags)};
    }
  }

  std::optional<Piece> group(std::size_t start, Flags& flags) {
    if (++depth_ > k_max_nesting) fail(start, "groups nested deeper than " + std::to_string(k_max_nesting));
    Flags inner = flags;
    if (at('?')) {
      ++pos_;
      if (at('=') || at('!')) fail(start, "lookahead is not supported");
      if (at('<') && (at(1, '=') || at(1, '!'))) fail(start, "lookbehind is not supported");
      if (at('>')) fail(start, "atomic groups are not supported");
      if (at('P') && at(1, '=')) fail(start, "backreferences are not supported");
      if (at('P') && at(1, '>')) fail(start, "recursion is not supported");
      if (at('<') || (at('P') && at(1, '<'))) {
        pos_ += at('<') ? 1 : 2;
        std::size_t name_start = pos_;
        while (pos_ < cps_.size() && (ascii_alnum(cps_[pos_]) || cps_[pos_] == '_'))
          ++pos_;
        if (pos_ == name_start || !at('>')) fail(start, "bad group name (expected (?<name>...))");
        ++pos_;
      } else if (at(':')) {
        ++pos_;
      } else {
        bool on = true;
        while (pos_ < cps_.size() && !at(')') && !at(':')) {
          std::uint32_t f = cps_[pos_];
          if (f == '-' && on)
            on = false;
          else if (f == 'i')
            inner.icase = on;
          else if (f == 'm')
            inner.multiline = on;
          else if (f == 's')
            inner.dotall = on;
          else
            fail(pos_, "unknown group or flag after \"(?\" (supported: (?:, (?<name>, flags i m s)");
          ++pos_;
        }
        if (pos_ >= cps_.size()) fail(start, "missing ')'");
        if (at(')')) { // (?i): applies to the rest of the enclosing group
          ++pos_;
          --depth_;
          flags = inner;
          return std::nullopt;
        }
        ++pos_; // ':' scoped flags
      }
    }
    Piece body = alternation(inner);
    if (!at(')')) fail(start, "missing ')' for this group");
    ++pos_;
    --depth_;
    body.re = "(?:" + body.re + ")";
    return body;
  }

  // \pL, \p{Name}, \p{^Name} and \P...: RE2's Unicode classes, checked here
  // so that an unknown name is reported at its position.
  std::string property(std::size_t start, bool negated) {
    std::string name;
    if (at('{')) {
      ++pos_;
      while (pos_ < cps_.size() && (ascii_alnum(cps_[pos_]) || cps_[pos_] == '_' || cps_[pos_] == '^'))
        name.push_back(static_cast<char>(cps_[pos_++]));
      if (!at('}')) fail(start, "bad \\p{...} class (expected a name such as \\p{L} or \\p{Greek})");
      ++pos_;
    } else if (pos_ < cps_.size() && ascii_alnum(cps_[pos_])) {
      name.push_back(static_cast<char>(cps_[pos_++]));
    } else {
      fail(start, "bad \\p class (expected \\pL or \\p{Name})");
    }
    std::string re = std::string(negated ? "\\P{" : "\\p{") + name + "}";
    if (!known_property(re))
      fail(start, "unknown Unicode class " + re + " (a category such as Lu or a script such as Greek)");
    return re;
  }

  Escape escape(std::size_t start, bool in_class) {
    if (pos_ >= cps_.size()) fail(start, "trailing backslash");
    std::uint32_t c = cps_[pos_++];
    Escape e;
    auto hex = [&](std::size_t max_digits, bool braced) {
      std::uint32_t v = 0;
      std::size_t n = 0;
      for (int d; n < max_digits && pos_ < cps_.size() && (d = hex_value(cps_[pos_])) >= 0; ++pos_, ++n) {
        v = v * 16 + static_cast<std::uint32_t>(d);
        if (v > 0x10ffff) fail(start, "code point above U+10FFFF");
      }
      if (n == 0 || (!braced && n != max_digits)) fail(start, "bad hex escape");
      return v;
    };
    switch (c) {
    // RE2's \s leaves out \v; [:space:] is gate's \s exactly.
    case 'd': e.set = "\\d", e.ascii_set = true; break;
    case 'D': e.set = "\\D", e.ascii_set = true; break;
    case 'w': e.set = "\\w", e.ascii_set = true; break;
    case 'W': e.set = "\\W", e.ascii_set = true; break;
    case 's': e.set = "[:space:]", e.ascii_set = true; break;
    case 'S': e.set = "[:^space:]", e.ascii_set = true; break;
    case 'p':
    case 'P': e.set = property(start, c == 'P'); break;
    case 'n': e.cp = '\n'; break;
    case 't': e.cp = '\t'; break;
    case 'r': e.cp = '\r'; break;
    case 'f': e.cp = '\f'; break;
    case 'v': e.cp = '\v'; break;
    case 'a': e.cp = 0x07; break;
    case 'e': e.cp = 0x1b; break;
    case '0': e.cp = 0; break;
    case 'x':
      if (at('{')) {
        ++pos_;
        e.cp = hex(8, true);
        if (!at('}')) fail(start, "bad \\x{...} escape");
        ++pos_;
      } else {
        e.cp = hex(2, false);
      }
      break;
    case 'u': e.cp = hex(4, false); break;
    case 'b':
      if (in_class)
        e.cp = 0x08;
      else
        e.assertion = "\\b";
      break;
    case 'B': e.assertion = "\\B"; break;
    case 'A': e.assertion = "\\A"; break;
    case 'z': e.assertion = "\\z"; break;
    case 'Z': e.dollar = true; break;
    case 'k': fail(start, "backreferences are not supported");
    default:
      if (c >= '1' && c <= '9')
        fail(start,
             in_class ? "octal escapes are not supported (use \\xHH)" : "backreferences are not supported");
      if (ascii_alnum(c)) fail(start, std::string("unknown escape \\") + static_cast<char>(c));
      e.cp = c; // escaped punctuation or a non-ASCII character stands for itself
    }
    if (in_class && (!e.assertion.empty() || e.dollar))
      fail(start, "\\" + std::string(1, static_cast<char>(c)) + " inside []");
    return e;
  }

  std::string bracket(std::size_t start) {
    bool negated = at('^');
    if (negated) ++pos_;
    std::string items;
    bool first = true;
    for (;;) {
      if (pos_ >= cps_.size()) fail(start, "missing ']' for this class");
      std::size_t item = pos_;
      if (at(']') && !first) {
        ++pos_;
        break;
      }
      first = false;
      if (at('[') && at(1, ':')) {
        std::size_t p = pos_ + 2;
        std::string name;
        while (p < cps_.size() && cps_[p] >= 'a' && cps_[p] <= 'z')
          name.push_back(static_cast<char>(cps_[p++]));
        if (p + 1 < cps_.size() && cps_[p] == ':' && cps_[p + 1] == ']') {
          if (!posix_name(name)) fail(item, "unknown POSIX class [:" + name + ":]");
          items += "[:" + name + ":]";
          pos_ = p + 2;
          continue;
        }
      }
      Escape lo = class_item();
      if (!lo.set.empty()) {
        items += lo.set;
        continue;
      }
      if (at('-') && pos_ + 1 < cps_.size() && !at(1, ']')) {
        ++pos_;
        Escape hi = class_item();
        if (!hi.set.empty()) fail(item, "a range cannot end in a class like \\d");
        if (*hi.cp < *lo.cp) fail(item, "range out of order");
        items += literal(*lo.cp) + "-" + literal(*hi.cp);
      } else {
        items += literal(*lo.cp);
      }
    }
    return (negated ? "[^" : "[") + items + "]";
  }

  Escape class_item() {
    std::size_t start = pos_;
    if (at('\\')) {
      ++pos_;
      return escape(start, true);
    }
    Escape e;
    e.cp = cps_[pos_++];
    return e;
  }

  std::vector<std::uint32_t> cps_;
  const std::string& prefix_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

} // namespace

std::string translate_regex(std::string_view pattern, bool ignore_case, const std::string& prefix) {
  if (pattern.size() > k_max_pattern_bytes)
    throw_bad_input(prefix + "pattern longer than " + std::to_string(k_max_pattern_bytes) + " bytes");
  if (!valid_utf8(pattern)) throw_bad_input(prefix + "pattern is not valid UTF-8");
  std::vector<std::uint32_t> cps;
  for (std::size_t i = 0; i < pattern.size();) {
    std::uint32_t cp = 0;
    i += decode_utf8(pattern, i, cp);
    cps.push_back(cp);
  }
  Flags flags;
  flags.icase = ignore_case;
  return Translator(std::move(cps), prefix).run(flags);
}

} // namespace gate::check::detail

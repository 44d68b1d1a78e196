#include <gate/check/regex_program.hpp>

#include <algorithm>
#include <optional>
#include <string>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::check {

namespace {

using detail::Assertion;
using detail::fold_ascii;
using detail::Inst;
using detail::named_class;
using detail::negate;
using detail::normalize;
using detail::Op;
using detail::posix_class;
using detail::Ranges;

constexpr std::size_t k_max_pattern_bytes = 4096;
constexpr std::size_t k_max_states = 10000;
constexpr int k_max_count = 1000;
constexpr int k_max_nesting = 200;
constexpr int k_unbounded = -1;

int hex_digit(std::uint32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return static_cast<int>((c | 0x20) - 'a' + 10);
  return -1;
}

bool ascii_alnum(std::uint32_t c) {
  return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

struct Flags {
  bool icase = false, multiline = false, dotall = false;
};

enum class Kind { empty, unit, assert, concat, alt, repeat };

struct Node {
  Kind kind = Kind::empty;
  std::uint32_t cls = 0;
  Assertion assertion = Assertion::begin_text;
  int min = 0, max = 0; // repeat; max may be k_unbounded
  std::vector<Node> kids;
  std::size_t size = 0; // instructions it compiles to, saturated above k_max_states
};

Node make(Kind k) {
  Node n;
  n.kind = k;
  return n;
}

std::size_t sat_add(std::size_t a, std::size_t b) { return std::min(a + b, k_max_states + 1); }
std::size_t sat_mul(std::size_t a, std::size_t b) {
  return (b != 0 && a > (k_max_states + 1) / b) ? k_max_states + 1 : std::min(a * b, k_max_states + 1);
}

// One escape: a code point, a set, or an assertion.
struct Escape {
  std::optional<std::uint32_t> cp;
  std::optional<Ranges> set;
  std::optional<Assertion> assertion;
};

// Recursive descent over the decoded pattern. Positions in messages are
// 1-based characters of the pattern.
class Parser {
public:
  Parser(std::vector<std::uint32_t> cps, std::string prefix)
      : cps_(std::move(cps)), prefix_(std::move(prefix)) {}

  Node parse(Flags flags, detail::Program &prog) {
    prog_ = &prog;
    Node n = alternation(flags);
    if (pos_ < cps_.size()) fail(pos_, "unmatched ')'");
    if (n.size + 1 > k_max_states)
      fail(cps_.size(), "pattern too large: it expands to more than " + std::to_string(k_max_states) +
                            " states (lower the {m,n} counts)");
    return n;
  }

  [[noreturn]] void fail(std::size_t at, const std::string &what) const {
    throw_bad_input(prefix_ + what + " at position " + std::to_string(at + 1));
  }

private:
  bool at(std::uint32_t c) const { return pos_ < cps_.size() && cps_[pos_] == c; }
  bool at(std::size_t offset, std::uint32_t c) const {
    return pos_ + offset < cps_.size() && cps_[pos_ + offset] == c;
  }

  Node leaf_set(Ranges r) {
    normalize(r);
    prog_->classes.push_back(std::move(r));
    Node n = make(Kind::unit);
    n.cls = static_cast<std::uint32_t>(prog_->classes.size() - 1);
    n.size = 1;
    return n;
  }
  Node leaf_char(std::uint32_t cp, const Flags &f) {
    Ranges r{{cp, cp}};
    if (f.icase) fold_ascii(r);
    return leaf_set(std::move(r));
  }
  static Node leaf_assert(Assertion a) {
    Node n = make(Kind::assert);
    n.assertion = a;
    n.size = 1;
    return n;
  }

  Node alternation(Flags &flags) {
    Node first = concatenation(flags);
    if (!at('|')) return first;
    Node alt = make(Kind::alt);
    alt.size = first.size;
    alt.kids.push_back(std::move(first));
    while (at('|')) {
      ++pos_;
      alt.kids.push_back(concatenation(flags));
      alt.size = sat_add(alt.size, sat_add(alt.kids.back().size, 2));
    }
    return alt;
  }

  Node concatenation(Flags &flags) {
    Node cat = make(Kind::concat);
    while (pos_ < cps_.size() && !at('|') && !at(')')) {
      std::size_t start = pos_;
      if (at('*') || at('+') || at('?') || count_ahead()) fail(start, "nothing to repeat");
      std::optional<Node> atom_node = atom(flags);
      if (!atom_node) continue; // a flag group such as (?i)
      Node n = std::move(*atom_node);
      bool repeated = false;
      int min = 0, max = 0;
      while (quantifier(min, max)) {
        if (repeated) fail(start, "multiple repeat (use a group)");
        repeated = true;
        if (at('?'))
          ++pos_; // lazy: same answer for a yes/no search
        else if (at('+'))
          fail(pos_, "possessive quantifiers are not supported");
        n = repeat(std::move(n), min, max);
      }
      cat.size = sat_add(cat.size, n.size);
      cat.kids.push_back(std::move(n));
    }
    return cat;
  }

  static Node repeat(Node kid, int min, int max) {
    Node r = make(Kind::repeat);
    r.min = min;
    r.max = max;
    std::size_t s = kid.size;
    if (max == k_unbounded)
      r.size = min == 0 ? sat_add(s, 2) : sat_add(sat_mul(s, min), 1);
    else
      r.size = sat_add(sat_mul(s, min), sat_mul(s + 1, static_cast<std::size_t>(max - min)));
    r.kids.push_back(std::move(kid));
    return r;
  }

  // {m}, {m,}, {m,n} or {,n} at pos_: returns the position after it and
  // sets min and max, leaving pos_ unchanged; nullopt when `{` is literal.
  std::optional<std::size_t> count_ahead(int *min = nullptr, int *max = nullptr) const {
    if (!at('{')) return std::nullopt;
    std::size_t p = pos_ + 1;
    auto number = [&](long &out) {
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

  bool quantifier(int &min, int &max) {
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

  std::optional<Node> atom(Flags &flags) {
    std::size_t start = pos_;
    std::uint32_t c = cps_[pos_++];
    switch (c) {
    case '(': return group(start, flags);
    case '[': return leaf_set(bracket(start, flags));
    case '.': return leaf_set(flags.dotall ? Ranges{{0, detail::k_max_unit}} : negate({{'\n', '\n'}}));
    case '^': return leaf_assert(flags.multiline ? Assertion::begin_line : Assertion::begin_text);
    case '$': return leaf_assert(flags.multiline ? Assertion::end_line : Assertion::end_text_or_nl);
    case '\\': {
      Escape e = escape(start, false);
      if (e.assertion) return leaf_assert(*e.assertion);
      if (e.set) {
        if (flags.icase) fold_ascii(*e.set);
        return leaf_set(std::move(*e.set));
      }
      return leaf_char(*e.cp, flags);
    }
    default: return leaf_char(c, flags);
    }
  }

  std::optional<Node> group(std::size_t start, Flags &flags) {
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
    Node body = alternation(inner);
    if (!at(')')) fail(start, "missing ')' for this group");
    ++pos_;
    --depth_;
    return body;
  }

  Escape escape(std::size_t start, bool in_class) {
    if (pos_ >= cps_.size()) fail(start, "trailing backslash");
    std::uint32_t c = cps_[pos_++];
    Escape e;
    auto hex = [&](std::size_t max_digits, bool braced) {
      std::uint32_t v = 0;
      std::size_t n = 0;
      for (int d; n < max_digits && pos_ < cps_.size() && (d = hex_digit(cps_[pos_])) >= 0; ++pos_, ++n) {
        v = v * 16 + static_cast<std::uint32_t>(d);
        if (v > 0x10ffff) fail(start, "code point above U+10FFFF");
      }
      if (n == 0 || (!braced && n != max_digits)) fail(start, "bad hex escape");
      return v;
    };
    switch (c) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 's':
    case 'S': e.set = named_class(static_cast<char>(c)); break;
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
        e.assertion = Assertion::word_boundary;
      break;
    case 'B': e.assertion = Assertion::not_word_boundary; break;
    case 'A': e.assertion = Assertion::begin_text; break;
    case 'z': e.assertion = Assertion::end_text; break;
    case 'Z': e.assertion = Assertion::end_text_or_nl; break;
    case 'k': fail(start, "backreferences are not supported");
    case 'p':
    case 'P': fail(start, "\\p{...} property classes are not supported");
    default:
      if (c >= '1' && c <= '9')
        fail(start,
             in_class ? "octal escapes are not supported (use \\xHH)" : "backreferences are not supported");
      if (ascii_alnum(c)) fail(start, std::string("unknown escape \\") + static_cast<char>(c));
      e.cp = c; // escaped punctuation or a non-ASCII character stands for itself
    }
    if (in_class && e.assertion) fail(start, "\\" + std::string(1, static_cast<char>(c)) + " inside []");
    return e;
  }

  Ranges bracket(std::size_t start, const Flags &flags) {
    bool negated = at('^');
    if (negated) ++pos_;
    Ranges r;
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
          auto set = posix_class(name);
          if (!set) fail(item, "unknown POSIX class [:" + name + ":]");
          r.insert(r.end(), set->begin(), set->end());
          pos_ = p + 2;
          continue;
        }
      }
      Escape lo = class_item();
      if (lo.set) {
        r.insert(r.end(), lo.set->begin(), lo.set->end());
        continue;
      }
      if (at('-') && pos_ + 1 < cps_.size() && !at(1, ']')) {
        ++pos_;
        Escape hi = class_item();
        if (hi.set) fail(item, "a range cannot end in a class like \\d");
        if (*hi.cp < *lo.cp) fail(item, "range out of order");
        r.push_back({*lo.cp, *hi.cp});
      } else {
        r.push_back({*lo.cp, *lo.cp});
      }
    }
    normalize(r);
    if (flags.icase) fold_ascii(r);
    return negated ? negate(r) : r;
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
  std::string prefix_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  detail::Program *prog_ = nullptr;
};

std::uint32_t here(const detail::Program &p) { return static_cast<std::uint32_t>(p.insts.size()); }

void emit(const Node &n, detail::Program &p) {
  switch (n.kind) {
  case Kind::empty: break;
  case Kind::unit: p.insts.push_back({Op::unit, Assertion::begin_text, n.cls, 0}); break;
  case Kind::assert: p.insts.push_back({Op::assert, n.assertion, 0, 0}); break;
  case Kind::concat:
    for (const auto &k : n.kids)
      emit(k, p);
    break;
  case Kind::alt: {
    std::vector<std::uint32_t> jumps;
    for (std::size_t i = 0; i < n.kids.size(); ++i) {
      if (i + 1 == n.kids.size()) {
        emit(n.kids[i], p);
        break;
      }
      std::uint32_t split = here(p);
      p.insts.push_back({Op::split, Assertion::begin_text, split + 1, 0});
      emit(n.kids[i], p);
      jumps.push_back(here(p));
      p.insts.push_back({Op::jump, Assertion::begin_text, 0, 0});
      p.insts[split].y = here(p);
    }
    for (auto j : jumps)
      p.insts[j].x = here(p);
    break;
  }
  case Kind::repeat: {
    const Node &kid = n.kids.front();
    if (n.max == k_unbounded) {
      for (int i = 0; i + 1 < n.min; ++i)
        emit(kid, p);
      if (n.min == 0) { // L: split(body, out); body; jump L
        std::uint32_t loop = here(p);
        p.insts.push_back({Op::split, Assertion::begin_text, loop + 1, 0});
        emit(kid, p);
        p.insts.push_back({Op::jump, Assertion::begin_text, loop, 0});
        p.insts[loop].y = here(p);
      } else { // L: body; split(L, out)
        std::uint32_t loop = here(p);
        emit(kid, p);
        p.insts.push_back({Op::split, Assertion::begin_text, loop, here(p) + 1});
      }
      break;
    }
    for (int i = 0; i < n.min; ++i)
      emit(kid, p);
    for (int i = n.min; i < n.max; ++i) {
      std::uint32_t split = here(p);
      p.insts.push_back({Op::split, Assertion::begin_text, split + 1, 0});
      emit(kid, p);
      p.insts[split].y = here(p);
    }
    break;
  }
  }
}

} // namespace

Regex::Regex(std::string_view pattern, const std::string& where, bool ignore_case)
    : pattern_(pattern), key_(std::string(ignore_case ? "i" : "c") + std::string(pattern)),
      prog_(std::make_shared<detail::Program>()) {
  std::string shown;
  json::append_quoted(utf8_prefix(pattern, 80), shown);
  if (shown.size() > 0 && pattern.size() > 80) shown.insert(shown.size() - 1, "...");
  std::string prefix = where + ": regex " + shown + ": ";
  if (pattern.size() > k_max_pattern_bytes)
    throw_bad_input(prefix + "pattern longer than " + std::to_string(k_max_pattern_bytes) + " bytes");
  if (!valid_utf8(pattern)) throw_bad_input(prefix + "pattern is not valid UTF-8");
  std::vector<std::uint32_t> cps;
  for (std::size_t i = 0; i < pattern.size();) {
    std::uint32_t u = 0;
    i += detail::decode_unit(pattern, i, u);
    cps.push_back(u);
  }
  Flags flags;
  flags.icase = ignore_case;
  Parser parser(std::move(cps), prefix);
  Node root = parser.parse(flags, *prog_);
  emit(root, *prog_);
  prog_->insts.push_back({Op::match, Assertion::begin_text, 0, 0});
}

Regex::~Regex() = default;

} // namespace gate::check

#include <gate/check/check.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <new>
#include <stdexcept>
#include <string>

#include <gate/check/detail.hpp>
#include <gate/check/regex.hpp>
#include <gate/check/unicode.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::check {

namespace {

constexpr std::size_t k_snippet_bytes = 80;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  return s;
}
std::string_view trim(std::string_view s) {
  s = trim_left(s);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

std::string collapse(std::string_view s) {
  std::string out;
  bool prev_space = false;
  for (char c : s) {
    if (!is_space(c))
      out.push_back(c);
    else if (!prev_space)
      out.push_back(' ');
    prev_space = is_space(c);
  }
  return out;
}

} // namespace

namespace detail {

// A short, quoted, printable form of text that may come from the model: the
// secret is redacted before cutting (a cut secret would no longer match),
// invalid UTF-8 becomes U+FFFD and control bytes are escaped.
std::string snippet(std::string_view text) {
  const std::string redacted = redact(text);
  std::string_view cut = utf8_prefix(redacted, k_snippet_bytes);
  std::string out;
  json::append_quoted(to_valid_utf8(cut), out);
  if (cut.size() < redacted.size()) out.insert(out.size() - 1, "...");
  return out;
}

std::string show_number(double d) {
  std::string out;
  json::append_number(d, out);
  return out;
}

std::string show_rounded(double d) {
  return show_number(static_cast<double>(static_cast<long long>(d * 1000 + 0.5)) / 1000);
}

// Values may come from the answer, so they are redacted like snippets.
std::string show_json(const boost::json::value& v) {
  std::string text = redact(json::canonical(v));
  return std::string(utf8_prefix(text, k_snippet_bytes)) + (text.size() > k_snippet_bytes ? "..." : "");
}

std::string quoted_list(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values)
    out += (out.empty() ? "" : ", ") + snippet(v);
  return out;
}

// Redacted, cut at `limit` bytes ("..." when cut), invalid UTF-8 as
// U+FFFD and control bytes as \xHH: readable as written (not JSON-quoted),
// yet nothing in it can move the cursor or forge a line.
std::string printable(std::string_view text, std::size_t limit) {
  const std::string redacted = redact(text);
  std::string_view cut = utf8_prefix(redacted, limit);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < cut.size();) {
    std::uint32_t u = 0;
    std::size_t n = decode_utf8(cut, i, u);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      n = 1;
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out.append(cut.substr(i, n));
    }
    i += n;
  }
  return out + (cut.size() < redacted.size() ? "..." : "");
}

// A pattern as written, between slashes: not JSON-quoted, so a reader (and
// the Markdown, which escapes it once) sees `\d` as `\d`; a control byte as
// \xHH reads as the same byte to a regex, so nothing is hidden.
std::string show_pattern(std::string_view pattern) { return "/" + printable(pattern, k_snippet_bytes) + "/"; }

std::string pointer_token(std::string_view s) {
  std::string out;
  for (char c : s)
    out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) {
    std::uint32_t u = 0;
    const std::size_t len = decode_utf8(s, i, u);
    i += len == 0 ? 1 : len; // an invalid byte is one unit
  }
  return n;
}

// What came, for a failure detail: `<subject> is "<text>"`, or `<subject>
// starts with "<text>..."` when cut (subject: "the answer", or "stdout" in
// an agent case).
std::string what_came(std::string_view subject, std::string_view text) {
  if (text.empty()) return std::string(subject) + " is empty";
  std::string s = snippet(text);
  const bool cut = s.size() > 4 && s.compare(s.size() - 4, 4, "...\"") == 0;
  return std::string(subject) + (cut ? " starts with " : " is ") + s;
}

} // namespace detail

namespace {

using detail::quoted_list;
using detail::show_json;
using detail::show_number;
using detail::show_pattern;
using detail::snippet;
using detail::what_came;

bool is_number(const boost::json::value& v) { return v.is_int64() || v.is_uint64() || v.is_double(); }
using detail::parse_json;

// The body of the first ```json block, else of the first ``` block.
std::optional<std::string_view> fenced_json(std::string_view text) {
  std::optional<std::string_view> first;
  for (std::size_t pos = 0;;) {
    std::size_t open = text.find("```", pos);
    if (open == std::string_view::npos) break;
    std::size_t info_start = open + 3;
    std::size_t eol = std::min(text.find('\n', info_start), text.size());
    std::size_t inline_close = text.substr(0, eol).find("```", info_start);
    std::string_view info, body;
    std::size_t close;
    if (inline_close != std::string_view::npos) { // ```{"a": 1}``` on one line
      body = text.substr(info_start, inline_close - info_start);
      close = inline_close;
    } else {
      info = trim(text.substr(info_start, eol - info_start));
      std::size_t body_start = std::min(eol + 1, text.size());
      close = std::min(text.find("```", body_start), text.size());
      body = text.substr(body_start, close - body_start);
    }
    if (detail::fold_case(info) == "json") return body;
    if (!first) first = body;
    pos = close + 3;
    if (pos >= text.size()) break;
  }
  return first;
}

std::string json_failure(const Check& c, std::string_view answer, std::string_view subject) {
  if (c.find_anywhere)
    return detail::anywhere_failure(
        answer, subject, [&](const boost::json::value& doc) { return json_paths_failure(c, doc); });
  std::optional<boost::json::value> doc = detail::answer_json(answer);
  if (!doc) return detail::not_json(answer, subject);
  return json_paths_failure(c, *doc);
}

} // namespace

std::optional<boost::json::value> detail::answer_json(std::string_view answer) {
  std::optional<boost::json::value> doc = parse_json(trim(answer));
  if (!doc) {
    if (auto body = fenced_json(answer)) doc = parse_json(trim(*body));
  }
  return doc;
}

std::string detail::not_json(std::string_view answer, std::string_view subject) {
  return "expected JSON (or a ```json block); " + what_came(subject, answer);
}

std::string json_paths_failure(const Check& c, const boost::json::value& doc_value) {
  const boost::json::value* doc = &doc_value;
  using Test = Check::JsonPath::Test;
  for (const auto& p : c.json_paths) {
    const boost::json::value* v = resolve_pointer(*doc, p.tokens);
    const std::string at = p.pointer.empty() ? "(root)" : snippet(p.pointer);
    // "expected <pointer> <condition>; it is <value>", the shape of every detail.
    std::string want;
    switch (p.test) {
    case Test::exists: want = p.exists ? "to exist" : "to be absent"; break;
    case Test::equals: want = "to equal " + show_json(*p.equals); break;
    case Test::one_of:
      want = "to be one of " + show_json(boost::json::array(p.one_of.begin(), p.one_of.end()));
      break;
    case Test::range:
      want = "to be a number in [" + (p.min ? show_number(*p.min) : "") + ", " +
             (p.max ? show_number(*p.max) : "") + "]";
      break;
    }
    const std::string expected = "expected " + at + " " + want + "; ";
    if (p.test == Test::exists) {
      if (p.exists && v == nullptr) return expected + "it is missing";
      if (!p.exists && v != nullptr) return expected + "it is " + show_json(*v);
      continue;
    }
    if (v == nullptr) return expected + "it is missing";
    switch (p.test) {
    case Test::equals:
      if (!json_equal(*v, *p.equals)) return expected + "it is " + show_json(*v);
      break;
    case Test::one_of:
      if (std::none_of(p.one_of.begin(), p.one_of.end(), [&](const auto& o) { return json_equal(*v, o); }))
        return expected + "it is " + show_json(*v);
      break;
    case Test::range: {
      if (!is_number(*v)) return expected + "it is " + show_json(*v);
      double x = json::to_double(*v);
      if ((p.min && x < *p.min) || (p.max && x > *p.max)) return expected + "it is " + show_number(x);
      break;
    }
    case Test::exists: break;
    }
  }
  return {};
}

namespace {

std::string bounds_text(const std::optional<double>& min, const std::optional<double>& max) {
  if (min && max) return "between " + show_number(*min) + " and " + show_number(*max);
  if (min) return "at least " + show_number(*min);
  return "at most " + show_number(*max);
}

// "" when the check holds, else why not, in one shape: "expected <what>;
// <subject> <what came>".
std::string failure(const Check& c, const Reply& reply, std::string_view subject) {
  const std::string_view answer = reply.text;
  // parse() guarantees operands; a hand-built Check without one is a bug.
  const bool operand = c.type != Type::json && c.type != Type::number && c.type != Type::length;
  if (operand && c.values.empty())
    throw std::logic_error("check \"" + type_name(c.type) + "\" has no operand");
  switch (c.type) {
  case Type::llm_judge:
    // The judge's call is the runner's (run/runner.cpp): a grader model, the
    // client and the cache are not a pure function of the answer.
    throw std::logic_error("llm_judge is evaluated by the runner's judge call");
  case Type::equals: {
    auto norm = [&](std::string_view s) {
      std::string out(c.trim ? trim(s) : s);
      if (c.collapse_whitespace) out = collapse(out);
      return c.ignore_case ? detail::fold_case(out) : out;
    };
    if (norm(answer) == norm(c.values.front())) return {};
    return "expected " + snippet(c.values.front()) + (c.ignore_case ? " (any case)" : "") + "; " +
           what_came(subject, answer);
  }
  case Type::contains:
  case Type::not_contains: {
    const std::size_t at = answer.find(c.values.front());
    const bool found = at != std::string_view::npos;
    if (found == (c.type == Type::contains)) return {};
    if (!found) return "expected to contain " + snippet(c.values.front()) + "; " + what_came(subject, answer);
    return "expected not to contain " + snippet(c.values.front()) + "; " + std::string(subject) +
           " has it at byte " + std::to_string(at) + ": " + snippet(answer.substr(at));
  }
  case Type::icontains:
    if (detail::fold_case(answer).find(detail::fold_case(c.values.front())) != std::string::npos) return {};
    return "expected to contain " + snippet(c.values.front()) + " (any case); " + what_came(subject, answer);
  case Type::starts_with:
    if (trim_left(answer).substr(0, c.values.front().size()) == c.values.front()) return {};
    return "expected to start with " + snippet(c.values.front()) + "; " +
           what_came(subject, trim_left(answer));
  case Type::contains_any:
    for (const auto& v : c.values)
      if (answer.find(v) != std::string_view::npos) return {};
    return "expected to contain one of " + quoted_list(c.values) + "; " + what_came(subject, answer);
  case Type::contains_all: {
    std::vector<std::string> missing;
    for (const auto& v : c.values)
      if (answer.find(v) == std::string_view::npos) missing.push_back(v);
    if (missing.empty()) return {};
    return "expected to contain all of " + quoted_list(c.values) + " (missing " + quoted_list(missing) +
           "); " + what_came(subject, answer);
  }
  case Type::regex:
    if (!c.regex) throw std::logic_error("regex check without a compiled pattern");
    if (c.regex->search(answer)) return {};
    return "expected to match " + show_pattern(c.values.front()) + "; " + what_came(subject, answer);
  case Type::json: return json_failure(c, answer, subject);
  case Type::number: {
    std::optional<double> x = first_number(answer);
    std::string want = show_number(c.number) + (c.tolerance > 0 ? " ± " + show_number(c.tolerance) : "");
    if (!x) return "expected " + want + "; " + std::string(subject) + " has no number: " + snippet(answer);
    // Decimal operands are not exact in binary (|1.1 − 1.0| > 0.1): allow a
    // relative hair so that a bound written in decimal is inclusive.
    double slack = 1e-9 * std::max(1.0, std::fabs(c.number));
    if (std::fabs(*x - c.number) <= c.tolerance + slack) return {};
    return "expected " + want + "; " + std::string(subject) + "'s first number is " + show_number(*x);
  }
  case Type::length: {
    const bool words = c.unit == "words";
    double n = static_cast<double>(words ? detail::count_words(answer) : detail::code_points(answer));
    if ((!c.min || n >= *c.min) && (!c.max || n <= *c.max)) return {};
    return "expected " + bounds_text(c.min, c.max) + (words ? " words" : " chars") + "; " +
           std::string(subject) + " has " + show_number(n);
  }
  default: break;
  }
  throw std::logic_error("check type \"" + type_name(c.type) + "\" has no evaluator here");
}

// The types evaluated here; the rest are reply_eval.cpp's.
bool own_type(Type t) { return t <= Type::length || t == Type::llm_judge; }

} // namespace

std::optional<double> first_number(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!is_digit(s[i])) continue;
    // ".5" is 0.5 unless the dot ends a word or another number ("v.5", "1..5").
    const bool dot_first = i >= 1 && s[i - 1] == '.' && (i == 1 || (!is_alnum(s[i - 2]) && s[i - 2] != '.'));
    const std::size_t lead = dot_first ? i - 1 : i;
    // A sign counts when it stands alone ("is -5"), not inside a word
    // ("COVID-19" is 19; in "3-5" the first number is 3 anyway).
    auto sign_ok = [&](std::size_t sign_start) { return sign_start == 0 || !is_alnum(s[sign_start - 1]); };
    bool negative = false;
    if (lead >= 1 && (s[lead - 1] == '-' || s[lead - 1] == '+') && sign_ok(lead - 1))
      negative = s[lead - 1] == '-';
    else if (lead >= 3 && s.substr(lead - 3, 3) == "\xE2\x88\x92" && sign_ok(lead - 3)) // U+2212 minus
      negative = true;
    std::string digits = dot_first ? "0." : "";
    std::size_t j = i;
    while (j < s.size() && is_digit(s[j]))
      digits.push_back(s[j++]);
    // Thousands groups only after a lead of 1-3 digits, exactly 3 per group.
    if (!dot_first && digits.size() <= 3) {
      while (j + 3 < s.size() && s[j] == ',' && is_digit(s[j + 1]) && is_digit(s[j + 2]) &&
             is_digit(s[j + 3]) && (j + 4 == s.size() || !is_digit(s[j + 4]))) {
        digits.append(s.substr(j + 1, 3));
        j += 4;
      }
    }
    if (!dot_first && j + 1 < s.size() && s[j] == '.' && is_digit(s[j + 1])) {
      digits.push_back('.');
      ++j;
      while (j < s.size() && is_digit(s[j]))
        digits.push_back(s[j++]);
    }
    double value = HUGE_VAL;
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (res.ec == std::errc::result_out_of_range) value = HUGE_VAL;
    return negative ? -value : value;
  }
  return std::nullopt;
}

const boost::json::value* resolve_pointer(const boost::json::value& doc,
                                          const std::vector<std::string>& tokens) {
  const boost::json::value* v = &doc;
  for (const auto& tok : tokens) {
    if (v->is_object()) {
      v = v->get_object().if_contains(tok);
    } else if (v->is_array()) {
      // RFC 6901 indices: "0" or digits without a leading zero; "-" (past
      // the end) and anything else resolve to nothing.
      if (tok.empty() || tok.size() > 18 || (tok.size() > 1 && tok[0] == '0') ||
          !std::all_of(tok.begin(), tok.end(), is_digit))
        return nullptr;
      std::size_t index = std::stoull(tok);
      const auto& arr = v->get_array();
      v = index < arr.size() ? &arr[index] : nullptr;
    } else {
      return nullptr;
    }
    if (v == nullptr) return nullptr;
  }
  return v;
}

bool json_equal(const boost::json::value& a, const boost::json::value& b) {
  if (is_number(a) && is_number(b)) {
    // Integers compare exactly (doubles lose precision above 2^53).
    if (a.is_int64() && b.is_int64()) return a.get_int64() == b.get_int64();
    if (a.is_uint64() && b.is_uint64()) return a.get_uint64() == b.get_uint64();
    if ((a.is_int64() && b.is_uint64()) || (a.is_uint64() && b.is_int64())) {
      const auto& i = a.is_int64() ? a : b;
      const auto& u = a.is_uint64() ? a : b;
      return i.get_int64() >= 0 && static_cast<std::uint64_t>(i.get_int64()) == u.get_uint64();
    }
    return json::to_double(a) == json::to_double(b);
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
  case boost::json::kind::array: {
    const auto &x = a.get_array(), &y = b.get_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!json_equal(x[i], y[i])) return false;
    return true;
  }
  case boost::json::kind::object: {
    const auto &x = a.get_object(), &y = b.get_object();
    if (x.size() != y.size()) return false;
    for (const auto& kv : x) {
      const auto* other = y.if_contains(kv.key());
      if (other == nullptr || !json_equal(kv.value(), *other)) return false;
    }
    return true;
  }
  default: return a == b;
  }
}

Result evaluate(const Check& c, const Reply& reply, std::string_view subject) {
  Result r;
  r.label = c.label;
  const Kind kind = info(c.type).kind;
  if (kind == Kind::agent) {
    r.errored = true;
    r.detail = "an agent check needs an agent run (suite kind \"agent\")";
    return r;
  }
  if (kind == Kind::reply && !reply.from_model) {
    r.errored = true;
    r.detail = "a reply check needs a model's reply, not " + std::string(subject);
    return r;
  }
  try {
    bool errored = false;
    r.detail = own_type(c.type) ? failure(c, reply, subject)
                                : detail::extra_failure(c, reply, subject, errored, r.reason);
    r.errored = errored;
    r.passed = r.detail.empty() && !errored;
  } catch (const std::bad_alloc&) {
    r.errored = true;
    r.detail = "could not evaluate: out of memory";
  } catch (const std::exception& e) {
    r.errored = true;
    r.detail = "could not evaluate: " + redact(e.what());
  }
  return r;
}

} // namespace gate::check

namespace gate::check {

Result evaluate(const Check& c, std::string_view text, std::string_view subject) {
  Reply reply;
  reply.text = text;
  reply.from_model = false;
  return evaluate(c, reply, subject);
}

} // namespace gate::check

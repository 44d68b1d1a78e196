#include <gate/util/json.hpp>

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>
#include <charconv>
#include <cmath>
#include <set>
#include <vector>

#include <gate/util/error.hpp>
#include <gate/util/text.hpp>

namespace gate::json {

namespace {

// A basic_parser handler that builds nothing: it only tracks the keys of
// each open object so that a duplicate can be reported with its position,
// and rejects non-finite numbers. Boost.JSON itself keeps the last
// duplicate silently.
struct StrictChecker {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  std::vector<std::set<std::string>> keys;
  std::string key;
  std::string problem;

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    keys.emplace_back();
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) {
    keys.pop_back();
    return true;
  }
  bool on_array_begin(boost::system::error_code&) { return true; }
  bool on_array_end(std::size_t, boost::system::error_code&) { return true; }
  bool on_key_part(boost::json::string_view s, std::size_t, boost::system::error_code&) {
    key.append(s.data(), s.size());
    return true;
  }
  bool on_key(boost::json::string_view s, std::size_t, boost::system::error_code& ec) {
    key.append(s.data(), s.size());
    bool fresh = keys.back().insert(key).second;
    if (!fresh) {
      problem = "duplicate key \"" + key + "\"";
      ec = boost::json::error::syntax;
      key.clear();
      return false;
    }
    key.clear();
    return true;
  }
  bool on_string_part(boost::json::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_string(boost::json::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_number_part(boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_int64(std::int64_t, boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_uint64(std::uint64_t, boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_double(double d, boost::json::string_view, boost::system::error_code& ec) {
    if (!std::isfinite(d)) {
      problem = "number out of range";
      ec = boost::json::error::syntax;
      return false;
    }
    return true;
  }
  bool on_bool(bool, boost::system::error_code&) { return true; }
  bool on_null(boost::system::error_code&) { return true; }
  bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }
};

} // namespace

std::string located_at(std::string_view text, std::size_t offset, const std::string& where,
                       std::size_t first_line, const std::string& what) {
  offset = std::min(offset, text.size());
  std::size_t line = first_line;
  std::size_t col = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return located(where, line, col, what);
}

std::string describe(const boost::system::error_code& ec) {
  using boost::json::error;
  if (ec == error::too_deep) return "nesting deeper than the limit";
  if (ec == error::syntax) return "invalid JSON syntax";
  if (ec == error::extra_data) return "unexpected data after the JSON value";
  if (ec == error::incomplete) return "incomplete JSON (truncated?)";
  if (ec == error::exponent_overflow) return "number out of range";
  if (ec == error::syntax) return "invalid JSON";
  return ec.message();
}

boost::json::value parse_strict(std::string_view text, const std::string& where, std::size_t first_line,
                                ParseLimits limits) {
  boost::json::parse_options opts;
  opts.max_depth = limits.max_depth;
  opts.allow_invalid_utf8 = false;
  boost::json::basic_parser<StrictChecker> checker(opts);
  boost::system::error_code ec;
  std::size_t used = checker.write_some(false, text.data(), text.size(), ec);
  if (!ec && used < text.size()) ec = boost::json::error::extra_data;
  if (ec) {
    std::string what = checker.handler().problem.empty() ? describe(ec) : checker.handler().problem;
    throw_bad_input(located_at(text, used, where, first_line, what));
  }
  boost::json::value v = boost::json::parse(boost::json::string_view(text.data(), text.size()), ec, {}, opts);
  if (ec) throw_bad_input(located_at(text, 0, where, first_line, describe(ec)));
  return v;
}

std::size_t escape_of(unsigned char c, char esc[6]) {
  static constexpr char k_hex[] = "0123456789abcdef";
  esc[0] = '\\';
  switch (c) {
  case '"': esc[1] = '"'; return 2;
  case '\\': esc[1] = '\\'; return 2;
  case '\n': esc[1] = 'n'; return 2;
  case '\r': esc[1] = 'r'; return 2;
  case '\t': esc[1] = 't'; return 2;
  case '\b': esc[1] = 'b'; return 2;
  case '\f': esc[1] = 'f'; return 2;
  default:
    esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = k_hex[c >> 4], esc[5] = k_hex[c & 0xf];
    return 6;
  }
}

void append_quoted(std::string_view s, std::string& out, Utf8 utf8) {
  out.push_back('"');
  const char* p = s.data();
  const char* const end = p + s.size();
  // Plain ASCII is copied in spans between the bytes that need work: this is
  // the hot loop of a large report.
  const char* clean = p;
  while (p < end) {
    const auto c = static_cast<unsigned char>(*p);
    if (c >= 0x20 && c != '"' && c != '\\' && (c < 0x80 || utf8 == Utf8::keep)) {
      ++p;
      continue;
    }
    out.append(clean, p);
    if (c < 0x80) {
      char esc[6];
      out.append(esc, escape_of(c, esc));
      ++p;
    } else {
      std::uint32_t cp = 0;
      const std::size_t len = decode_utf8(s, static_cast<std::size_t>(p - s.data()), cp);
      if (len != 0) {
        out.append(p, len);
        p += len;
      } else {
        out += "\xEF\xBF\xBD"; // U+FFFD
        ++p;
      }
    }
    clean = p;
  }
  out.append(clean, p);
  out.push_back('"');
}

void append_number(double d, std::string& out) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  // Integral values print without a fraction so that 1.0 and 1 agree.
  if (d == std::trunc(d) && std::fabs(d) < 9.007199254740992e15) {
    out += std::to_string(static_cast<std::int64_t>(d));
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  out.append(buf, res.ptr);
}

void append_canonical(const boost::json::value& v, std::string& out) {
  switch (v.kind()) {
  case boost::json::kind::null: out += "null"; break;
  case boost::json::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
  case boost::json::kind::int64: out += std::to_string(v.get_int64()); break;
  case boost::json::kind::uint64: out += std::to_string(v.get_uint64()); break;
  case boost::json::kind::double_: append_number(v.get_double(), out); break;
  case boost::json::kind::string: append_quoted(std::string_view(v.get_string()), out); break;
  case boost::json::kind::array: {
    out.push_back('[');
    bool first = true;
    for (const auto& e : v.get_array()) {
      if (!first) out.push_back(',');
      first = false;
      append_canonical(e, out);
    }
    out.push_back(']');
    break;
  }
  case boost::json::kind::object: {
    const auto& o = v.get_object();
    std::vector<const boost::json::key_value_pair*> items;
    items.reserve(o.size());
    for (const auto& kv : o)
      items.push_back(&kv);
    std::sort(items.begin(), items.end(), [](const auto* a, const auto* b) { return a->key() < b->key(); });
    out.push_back('{');
    bool first = true;
    for (const auto* kv : items) {
      if (!first) out.push_back(',');
      first = false;
      append_quoted(std::string_view(kv->key()), out);
      out.push_back(':');
      append_canonical(kv->value(), out);
    }
    out.push_back('}');
    break;
  }
  }
}

std::string canonical(const boost::json::value& v) {
  std::string out;
  append_canonical(v, out);
  return out;
}

const char* kind_name(const boost::json::value& v) {
  switch (v.kind()) {
  case boost::json::kind::null: return "null";
  case boost::json::kind::bool_: return "a boolean";
  case boost::json::kind::int64:
  case boost::json::kind::uint64:
  case boost::json::kind::double_: return "a number";
  case boost::json::kind::string: return "a string";
  case boost::json::kind::array: return "an array";
  case boost::json::kind::object: return "an object";
  }
  return "a value";
}

const boost::json::object& as_object(const boost::json::value& v, std::string_view where) {
  if (!v.is_object()) throw_bad_input(std::string(where) + ": expected a JSON object");
  return v.get_object();
}

namespace {
const boost::json::value& field(const boost::json::object& o, std::string_view key,
                                const std::string& where) {
  const auto* p = o.if_contains(boost::json::string_view(key.data(), key.size()));
  if (p == nullptr) throw_bad_input(where + ": missing field \"" + std::string(key) + "\"");
  return *p;
}
[[noreturn]] void wrong_type(std::string_view key, const std::string& where, const char* expected) {
  throw_bad_input(where + ": field \"" + std::string(key) + "\" must be " + expected);
}
} // namespace

std::string get_string(const boost::json::object& o, std::string_view key, const std::string& where) {
  const auto& v = field(o, key, where);
  if (!v.is_string()) wrong_type(key, where, "a string");
  return std::string(v.get_string());
}

double to_double(const boost::json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  return v.get_double();
}

double get_number(const boost::json::object& o, std::string_view key, const std::string& where) {
  const auto& v = field(o, key, where);
  if (!v.is_number()) wrong_type(key, where, "a number");
  return to_double(v);
}

std::int64_t get_int(const boost::json::object& o, std::string_view key, const std::string& where) {
  const auto& v = field(o, key, where);
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v.get_uint64());
  wrong_type(key, where, "an integer");
}

bool get_bool(const boost::json::object& o, std::string_view key, const std::string& where) {
  const auto& v = field(o, key, where);
  if (!v.is_bool()) wrong_type(key, where, "true or false");
  return v.get_bool();
}

} // namespace gate::json

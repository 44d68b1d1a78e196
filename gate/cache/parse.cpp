// decode()'s full path (line.hpp): the JSON line parsed into a tree with
// exact numbers, every field checked for presence and type. entry.cpp then
// compares the line with what encode would write for what was read.
#include <gate/cache/line.hpp>

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value_stack.hpp>
#include <charconv>
#include <cmath>
#include <limits>

#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::cache::detail {

namespace {

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// ---- JSON with exact numbers ----

// Boost 1.81 reads some 16- and 17-digit numbers as a neighbouring double,
// so the shortest round-trip text encode writes would read back as another
// number and no longer be canonical. Doubles are read here with
// std::from_chars (correctly rounded) instead; everything else is what
// boost::json::parse does.
struct ExactNumbers {
  static constexpr std::size_t max_object_size = boost::json::object::max_size();
  static constexpr std::size_t max_array_size = boost::json::array::max_size();
  static constexpr std::size_t max_key_size = boost::json::string::max_size();
  static constexpr std::size_t max_string_size = boost::json::string::max_size();
  using sv = boost::json::string_view;
  using ec_t = boost::system::error_code;

  boost::json::value_stack st;
  std::string number; // the text of a number split across parts

  ExactNumbers(unsigned char* temp, std::size_t size) : st({}, temp, size) {}

  bool on_document_begin(ec_t&) { return true; }
  bool on_document_end(ec_t&) { return true; }
  bool on_object_begin(ec_t&) { return true; }
  bool on_object_end(std::size_t n, ec_t&) { return st.push_object(n), true; }
  bool on_array_begin(ec_t&) { return true; }
  bool on_array_end(std::size_t n, ec_t&) { return st.push_array(n), true; }
  bool on_key_part(sv s, std::size_t, ec_t&) { return st.push_chars(s), true; }
  bool on_key(sv s, std::size_t, ec_t&) { return st.push_key(s), true; }
  bool on_string_part(sv s, std::size_t, ec_t&) { return st.push_chars(s), true; }
  bool on_string(sv s, std::size_t, ec_t&) { return st.push_string(s), true; }
  bool on_number_part(sv s, ec_t&) { return number.append(s.data(), s.size()), true; }
  bool on_int64(std::int64_t i, sv, ec_t&) { return number.clear(), st.push_int64(i), true; }
  bool on_uint64(std::uint64_t u, sv, ec_t&) { return number.clear(), st.push_uint64(u), true; }
  bool on_double(double d, sv s, ec_t&) {
    number.append(s.data(), s.size());
    double exact = 0;
    auto [end, err] = std::from_chars(number.data(), number.data() + number.size(), exact);
    // Out of range (1e999) keeps Boost's value: not finite, so never canonical.
    if (err == std::errc() && end == number.data() + number.size()) d = exact;
    number.clear();
    st.push_double(d);
    return true;
  }
  bool on_bool(bool b, ec_t&) { return st.push_bool(b), true; }
  bool on_null(ec_t&) { return st.push_null(), true; }
  bool on_comment_part(sv, ec_t&) { return true; }
  bool on_comment(sv, ec_t&) { return true; }
};

// One JSON text, nothing after it; values are allocated from `sp`.
} // namespace

boost::json::value parse_exact(std::string_view text, boost::json::storage_ptr sp,
                               boost::system::error_code& ec) {
  unsigned char temp[1024];
  boost::json::basic_parser<ExactNumbers> p(boost::json::parse_options{}, temp, sizeof temp);
  p.handler().st.reset(std::move(sp));
  std::size_t n = p.write_some(false, text.data(), text.size(), ec);
  if (!ec && n != text.size()) ec = boost::json::error::extra_data;
  if (ec) return nullptr;
  return p.handler().st.release();
}

namespace {

struct Fields {
  const boost::json::object& o;
  std::string reason;

  const boost::json::value* get(std::string_view name) {
    if (!reason.empty()) return nullptr;
    const auto* v = o.if_contains(boost::json::string_view(name.data(), name.size()));
    if (v == nullptr) reason = "missing field " + std::string(name);
    return v;
  }
  void wrong(std::string_view name, const char* expected) {
    reason = "field " + std::string(name) + " must be " + expected;
  }
  void text(std::string_view name, std::string& out) {
    const auto* v = get(name);
    if (v == nullptr) return;
    if (!v->is_string()) return wrong(name, "a string");
    out.assign(v->get_string().data(), v->get_string().size());
  }
  std::optional<std::int64_t> integer(const boost::json::value& v) {
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
      return static_cast<std::int64_t>(v.get_uint64());
    return std::nullopt;
  }
  void small_int(std::string_view name, int& out) {
    const auto* v = get(name);
    if (v == nullptr) return;
    auto i = integer(*v);
    if (!i || *i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max())
      return wrong(name, "an integer");
    out = static_cast<int>(*i);
  }
  void number(std::string_view name, double& out) {
    const auto* v = get(name);
    if (v == nullptr) return;
    if (v->is_double())
      out = v->get_double();
    else if (auto i = integer(*v))
      out = static_cast<double>(*i);
    else
      wrong(name, "a number");
  }
  void json_text(std::string_view name, std::string& out) {
    const auto* v = get(name);
    if (v == nullptr) return;
    out.clear();
    if (!v->is_null()) json::append_canonical(*v, out);
  }
  void headers(std::vector<std::pair<std::string, std::string>>& out) {
    const auto* v = get("headers");
    if (v == nullptr) return;
    if (!v->is_object()) return wrong("headers", "an object");
    for (const auto& kv : v->get_object()) {
      if (!kv.value().is_string()) return wrong("headers", "an object of strings");
      std::string_view name(kv.key().data(), kv.key().size());
      // Not only a canonical-form matter: a header off the list may carry a
      // credential, and must never be served even from a checksummed file.
      if (!header_allowed(name)) {
        reason = "header ";
        json::append_quoted(utf8_prefix(name, 64), reason);
        reason += " is not on the allow-list";
        return;
      }
      out.emplace_back(std::string(name), std::string(kv.value().get_string()));
    }
    std::sort(out.begin(), out.end());
  }
  // Optional: present exactly in version 2 entries.
  void event_times(int version, std::vector<double>& out) {
    if (!reason.empty()) return;
    const auto* v = o.if_contains("event_ms");
    if (v == nullptr) {
      if (version >= 2) reason = "missing field event_ms (format version 2)";
      return;
    }
    if (version < 2) {
      reason = "field event_ms needs format version 2";
      return;
    }
    const auto* a = v->if_array();
    if (a != nullptr)
      for (const auto& t : *a) {
        if (auto i = integer(t))
          out.push_back(static_cast<double>(*i));
        else if (t.is_double())
          out.push_back(t.get_double());
        else
          break;
      }
    if (a == nullptr || a->empty() || out.size() != a->size() || !detail::valid_event_times(out))
      wrong("event_ms", "a non-empty list of non-decreasing milliseconds");
  }
  void usage(std::optional<std::pair<std::int64_t, std::int64_t>>& out) {
    const auto* v = get("usage");
    if (v == nullptr || v->is_null()) return;
    const auto* u = v->if_object();
    if (u == nullptr || u->size() != 2) return wrong("usage", "null or {completion_tokens, prompt_tokens}");
    const auto* p = u->if_contains("prompt_tokens");
    const auto* c = u->if_contains("completion_tokens");
    std::optional<std::int64_t> pi = p ? integer(*p) : std::nullopt;
    std::optional<std::int64_t> ci = c ? integer(*c) : std::nullopt;
    if (!pi || !ci) return wrong("usage", "null or {completion_tokens, prompt_tokens}");
    out = std::make_pair(*pi, *ci);
  }
};

} // namespace

bool valid_event_times(const std::vector<double>& ms) {
  double last = 0;
  for (double t : ms) {
    if (!std::isfinite(t) || t < last) return false;
    last = t;
  }
  return true;
}

DecodeResult read_fields(std::string_view json_line, int version, std::string_view expected_key) {
  DecodeResult r;
  // The checksum already vouches for these bytes: a plain, fast parse into a
  // stack arena is enough.
  unsigned char arena[8192];
  boost::json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  boost::json::value v = parse_exact(json_line, &mr, ec);
  if (ec || !v.is_object()) {
    r.reason = "invalid JSON";
    return r;
  }
  const auto& o = v.get_object();
  for (const auto& kv : o) {
    std::string_view name(kv.key().data(), kv.key().size());
    if (std::find(k_fields.begin(), k_fields.end(), name) == k_fields.end()) {
      r.reason = "unknown field " + std::string(name);
      return r;
    }
  }
  Entry e;
  Fields f{o, {}};
  f.text("key", e.key);
  if (f.reason.empty() && !is_hex64(e.key)) f.reason = "field key must be 64 lowercase hex digits";
  if (f.reason.empty() && !expected_key.empty() && e.key != expected_key)
    f.reason = "key does not match file name";
  f.text("body", e.body);
  f.event_times(version, e.event_ms);
  f.headers(e.headers);
  f.number("latency_ms", e.latency_ms);
  f.text("path", e.path);
  f.text("provider", e.provider);
  f.text("recorded_at", e.recorded_at);
  f.small_int("replica", e.replica);
  f.json_text("request", e.request);
  f.json_text("route", e.route);
  f.small_int("status", e.status);
  f.usage(e.usage);
  if (!f.reason.empty()) {
    r.reason = std::move(f.reason);
    return r;
  }
  r.entry = std::move(e);
  return r;
}

} // namespace gate::cache::detail

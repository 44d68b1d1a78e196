#include <gate/cache/entry.hpp>

#include <algorithm>
#include <array>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value_stack.hpp>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <openssl/evp.h>

#include <gate/cache/line.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

namespace gate::cache {

namespace {

constexpr std::string_view k_magic_prefix = "gate-cache ";
constexpr std::string_view k_checksum_prefix = "sha256 ";
constexpr std::size_t k_checksum_line_size = 7 + 64 + 1; // "sha256 " hex64 "\n"
constexpr std::string_view k_truncated = "truncated (no checksum line)";

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

constexpr std::array<std::string_view, 13> k_fields = {
    "body",        "event_ms", "headers", "key",   "latency_ms", "path", "provider",
    "recorded_at", "replica",  "request", "route", "status",     "usage"};

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

// ---- the JSON line ----

[[noreturn]] void unrecordable(const Entry& e, const std::string& what) {
  throw_bad_input("cannot record cache entry " + e.key + ": " + what);
}

// Where encode's JSON line goes: appended to the file being written...
struct Append {
  std::string& out;
  void field(std::size_t) {}
  void lit(std::string_view s) { out += s; }
  void quoted(std::string_view s) { json::append_quoted(s, out); }
};

// ...or compared with the line decode read, without building a copy (that
// copy, a character at a time, cost as much again as the parse). Quoting
// here must agree with json::append_quoted, which encode uses: if it did not,
// decode would reject encode's own output, which the round-trip tests catch.
struct Match {
  std::string_view line;
  std::size_t pos = 0;
  std::size_t current = 0; // index in k_fields of the field being compared
  bool ok = true;

  void field(std::size_t i) {
    if (ok) current = i;
  }
  void lit(std::string_view s) {
    if (ok && line.substr(pos, s.size()) == s)
      pos += s.size();
    else
      ok = false;
  }
  void quoted(std::string_view s) {
    static constexpr char k_hex[] = "0123456789abcdef";
    lit("\"");
    if (!ok) return;
    const char* p = line.data() + pos;
    const char* const end = line.data() + line.size();
    for (std::size_t i = 0; i < s.size();) {
      // Eight bytes at a time while they agree and need no escape: this
      // check runs on every entry served, over a kilobyte of body.
      while (s.size() - i >= 8 && end - p >= 8) {
        std::uint64_t want = 0, got = 0;
        std::memcpy(&want, s.data() + i, 8);
        std::memcpy(&got, p, 8);
        if (want != got || needs_escape(want)) break;
        i += 8;
        p += 8;
      }
      if (i == s.size()) break;
      auto c = static_cast<unsigned char>(s[i++]);
      if (c >= 0x20 && c != '"' && c != '\\') {
        if (p == end || static_cast<unsigned char>(*p) != c) return fail();
        ++p;
        continue;
      }
      char esc[6] = {'\\', static_cast<char>(c), 0, 0, 0, 0};
      std::size_t n = 2;
      switch (c) {
      case '"':
      case '\\': break;
      case '\n': esc[1] = 'n'; break;
      case '\r': esc[1] = 'r'; break;
      case '\t': esc[1] = 't'; break;
      case '\b': esc[1] = 'b'; break;
      case '\f': esc[1] = 'f'; break;
      default:
        esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = k_hex[c >> 4], esc[5] = k_hex[c & 0xf];
        n = 6;
      }
      if (static_cast<std::size_t>(end - p) < n || std::memcmp(p, esc, n) != 0) return fail();
      p += n;
    }
    pos = static_cast<std::size_t>(p - line.data());
    lit("\"");
  }
  void fail() { ok = false; }

  // Whether any of the eight bytes is below 0x20, '"' or '\\' (the
  // classic has-zero-byte / has-less-than tests, exact for any input).
  static bool needs_escape(std::uint64_t w) {
    constexpr std::uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    auto has_zero = [](std::uint64_t v) { return (v - ones) & ~v & highs; };
    std::uint64_t below_space = (w - ones * 0x20) & ~w & highs;
    return (below_space | has_zero(w ^ (ones * '"')) | has_zero(w ^ (ones * '\\'))) != 0;
  }
};

// Writes the JSON line of `e` to `sink`, with `request` and `route` given
// already canonical ("" for null). Recording (encode) redacts every text and
// refuses text that is not UTF-8. Checking (decode) takes the decoded
// strings as they are: they came out of the file, are valid UTF-8, and what
// redact() would change depends on the secrets this process happens to
// know, not on the file.
template <class Sink> class LineWriter {
public:
  LineWriter(const Entry& e, bool recording, Sink& sink) : e_(e), recording_(recording), sink_(sink) {}

  void write(std::string_view request, std::string_view route) {
    field(0);
    text("body", e_.body);
    if (!e_.event_ms.empty()) {
      field(1);
      std::string times = "[";
      for (double ms : e_.event_ms) {
        if (times.size() > 1) times += ',';
        json::append_number(ms, times);
      }
      sink_.lit(times + "]");
    }
    field(2);
    headers();
    // The key is a hash computed here, never upstream text; redacting a
    // chance match of a secret's last 8 characters would only corrupt it.
    field(3);
    sink_.quoted(e_.key);
    field(4);
    std::string number;
    json::append_number(std::isfinite(e_.latency_ms) ? e_.latency_ms : 0.0, number);
    sink_.lit(number);
    field(5);
    text("path", e_.path);
    field(6);
    text("provider", e_.provider);
    field(7);
    text("recorded_at", e_.recorded_at);
    field(8);
    sink_.lit(std::to_string(e_.replica));
    field(9);
    sink_.lit(request.empty() ? "null" : request);
    field(10);
    sink_.lit(route.empty() ? "null" : route);
    field(11);
    sink_.lit(std::to_string(e_.status));
    field(12);
    if (e_.usage) {
      sink_.lit("{\"completion_tokens\":" + std::to_string(e_.usage->second) +
                ",\"prompt_tokens\":" + std::to_string(e_.usage->first) + "}");
    } else {
      sink_.lit("null");
    }
    sink_.lit("}");
  }

private:
  const Entry& e_;
  bool recording_;
  Sink& sink_;

  void field(std::size_t i) {
    // The separator still belongs to the field before: "12.50" where 12.5 is
    // due fails on the ',' and is the latency's fault, not the path's.
    sink_.lit(i == 0 ? "{\"" : ",\"");
    sink_.field(i);
    sink_.lit(k_fields[i]);
    sink_.lit("\":");
  }

  void text(const char* field, const std::string& value) {
    if (!recording_) return sink_.quoted(value);
    std::string clean = redact(value);
    if (!valid_utf8(clean)) unrecordable(e_, std::string("field ") + field + " is not valid UTF-8");
    sink_.quoted(clean);
  }

  void headers() {
    std::vector<std::pair<std::string, std::string>> kept;
    for (const auto& [name, value] : e_.headers) {
      if (!header_allowed(name)) continue;
      std::string clean = recording_ ? redact(value) : value;
      // An optional header is not worth failing a recording over.
      if (!valid_utf8(clean)) continue;
      kept.emplace_back(lowercase(name), std::move(clean));
    }
    std::stable_sort(kept.begin(), kept.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    sink_.lit("{");
    for (std::size_t i = 0; i < kept.size();) {
      std::string value = kept[i].second;
      std::size_t j = i + 1;
      for (; j < kept.size() && kept[j].first == kept[i].first; ++j)
        value += ", " + kept[j].second;
      if (i > 0) sink_.lit(",");
      sink_.quoted(kept[i].first);
      sink_.lit(":");
      sink_.quoted(value);
      i = j;
    }
    sink_.lit("}");
  }
};

// The canonical, redacted form of a `request` or `route` text ("" for none).
std::string canonical_json_text(const Entry& e, const char* field, const std::string& text) {
  if (text.empty()) return {};
  boost::system::error_code ec;
  boost::json::value v = parse_exact(text, {}, ec);
  if (ec) unrecordable(e, std::string("field ") + field + " is not JSON (" + ec.message() + ")");
  return redact(json::canonical(v));
}

// ---- decode ----

// True when sha256(data) is the lowercase hex in `hex`. Replay checks every
// entry it serves, so this avoids the per-call digest lookup and strings of
// gate::sha256_hex.
bool digest_matches(std::string_view data, std::string_view hex) {
  static EVP_MD* const k_sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (k_sha256 == nullptr || EVP_Digest(data.data(), data.size(), digest, &len, k_sha256, nullptr) != 1 ||
      len * 2 != hex.size())
    return sha256_hex(data) == hex;
  static constexpr char k_hex[] = "0123456789abcdef";
  for (unsigned int i = 0; i < len; ++i)
    if (hex[2 * i] != k_hex[digest[i] >> 4] || hex[2 * i + 1] != k_hex[digest[i] & 0xf]) return false;
  return true;
}

// The version text after the magic prefix: "" when this gate reads it (and
// `version` is set), else the reason to reject.
std::string check_version(std::string_view v, int& version) {
  bool digits = !v.empty() && v.size() <= 9 && v[0] != '0' &&
                std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) return "unknown format version";
  version = std::stoi(std::string(v));
  if (version <= k_format_version) return {};
  return "format version " + std::string(v) + " is newer than this gate (" +
         std::to_string(k_format_version) + ")";
}

// Splits `bytes` into the checksummed part and the checksum line, or says
// why it cannot. Nothing here looks inside the JSON.
std::string check_frame(std::string_view bytes, std::string_view& covered, std::string_view& json_line,
                        int& version) {
  if (bytes.empty()) return "empty file";
  std::size_t nl1 = bytes.find('\n');
  std::string_view first = bytes.substr(0, nl1);
  if (!first.starts_with(k_magic_prefix)) {
    if (nl1 == std::string_view::npos && k_magic_prefix.starts_with(bytes)) return std::string(k_truncated);
    return "wrong magic";
  }
  if (nl1 == std::string_view::npos) return std::string(k_truncated);
  if (std::string reason = check_version(first.substr(k_magic_prefix.size()), version); !reason.empty())
    return reason;

  std::size_t nl2 = bytes.find('\n', nl1 + 1);
  if (nl2 == std::string_view::npos) return std::string(k_truncated);
  json_line = bytes.substr(nl1 + 1, nl2 - nl1 - 1);
  std::string_view rest = bytes.substr(nl2 + 1);
  if (rest.size() < k_checksum_line_size) {
    // A damaged line break before an intact checksum line also leaves
    // nothing after the JSON line: that is damage, not truncation.
    bool joined =
        rest.empty() && json_line.size() >= k_checksum_line_size - 1 &&
        json_line.substr(json_line.size() - (k_checksum_line_size - 1)).starts_with(k_checksum_prefix);
    if (joined || rest.find('\n') != std::string_view::npos) return "checksum mismatch";
    return std::string(k_truncated);
  }
  if (rest.size() != k_checksum_line_size || !rest.starts_with(k_checksum_prefix) || rest.back() != '\n')
    return "checksum mismatch";
  covered = bytes.substr(0, nl2 + 1);
  if (!digest_matches(covered, rest.substr(k_checksum_prefix.size(), 64))) return "checksum mismatch";
  return {};
}

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

bool header_allowed(std::string_view lowercase_name) {
  // Content metadata and response ids only: anything that could carry a
  // credential, a session or an account identity stays out by default.
  static constexpr std::array<std::string_view, 5> k_allowed = {
      "anthropic-request-id", "content-type", "openai-processing-ms", "request-id", "x-request-id"};
  std::string name = lowercase(lowercase_name);
  return std::find(k_allowed.begin(), k_allowed.end(), name) != k_allowed.end();
}

std::string encode(const Entry& e) {
  const std::string request = canonical_json_text(e, "request", e.request);
  const std::string route = canonical_json_text(e, "route", e.route);
  std::string out;
  out.reserve(300 + e.body.size() + request.size() + route.size());
  if (!detail::valid_event_times(e.event_ms))
    unrecordable(e, "event times must be finite, >= 0 and non-decreasing");
  out += k_magic_prefix;
  out += e.event_ms.empty() ? '1' : '2';
  out += '\n';
  Append sink{out};
  LineWriter<Append>(e, true, sink).write(request, route);
  out += '\n';
  std::string sum = sha256_hex(out);
  out += k_checksum_prefix;
  out += sum;
  out += '\n';
  return out;
}

DecodeResult decode(std::string_view bytes, std::string_view expected_key) {
  DecodeResult r;
  std::string_view covered, json_line;
  int version = 0;
  r.reason = check_frame(bytes, covered, json_line, version);
  if (!r.reason.empty()) return r;
  r.entry = detail::scan_line(json_line, version, expected_key);
  if (r.entry) return r;
  return detail::parse_line(json_line, version, expected_key);
}

namespace detail {

bool valid_event_times(const std::vector<double>& ms) {
  double last = 0;
  for (double t : ms) {
    if (!std::isfinite(t) || t < last) return false;
    last = t;
  }
  return true;
}

DecodeResult parse_line(std::string_view json_line, int version, std::string_view expected_key) {
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
  // Only what encode writes is accepted, byte for byte: whitespace, key
  // order, escapes, number spelling, header case or order, or a number that
  // does not survive a read (a 100-digit integer) would each make the
  // entry's bytes depend on who rewrote it last. `request` and `route` are
  // already canonical here, and with exact numbers canonical text reads back
  // to itself, so they need no second parse.
  Match match{json_line};
  LineWriter<Match>(e, false, match).write(e.request, e.route);
  if (!match.ok || match.pos != json_line.size()) {
    r.reason = "not in canonical form (field " + std::string(k_fields[match.current]) + ")";
    return r;
  }
  r.entry = std::move(e);
  return r;
}

} // namespace detail

} // namespace gate::cache

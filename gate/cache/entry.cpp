#include <gate/cache/entry.hpp>

#include <algorithm>
#include <array>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <cmath>
#include <limits>
#include <openssl/evp.h>

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
  for (char &c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// ---- encode ----

[[noreturn]] void unrecordable(const Entry &e, const std::string &what) {
  throw_bad_input("cannot record cache entry " + e.key + ": " + what);
}

void append_text(const Entry &e, const char *field, std::string_view value, std::string &out) {
  std::string clean = redact(value);
  if (!valid_utf8(clean)) unrecordable(e, std::string("field ") + field + " is not valid UTF-8");
  json::append_quoted(clean, out);
}

void append_json_text(const Entry &e, const char *field, const std::string &text, std::string &out) {
  if (text.empty()) {
    out += "null";
    return;
  }
  boost::system::error_code ec;
  boost::json::value v = boost::json::parse(text, ec);
  if (ec) unrecordable(e, std::string("field ") + field + " is not JSON (" + ec.message() + ")");
  out += redact(json::canonical(v));
}

void append_headers(const Entry &e, std::string &out) {
  std::vector<std::pair<std::string, std::string>> kept;
  for (const auto &[name, value] : e.headers) {
    if (!header_allowed(name)) continue;
    std::string clean = redact(value);
    // An optional header is not worth failing a recording over.
    if (!valid_utf8(clean)) continue;
    kept.emplace_back(lowercase(name), std::move(clean));
  }
  std::stable_sort(kept.begin(), kept.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  out.push_back('{');
  for (std::size_t i = 0; i < kept.size();) {
    std::string value = kept[i].second;
    std::size_t j = i + 1;
    for (; j < kept.size() && kept[j].first == kept[i].first; ++j)
      value += ", " + kept[j].second;
    if (i > 0) out.push_back(',');
    json::append_quoted(kept[i].first, out);
    out.push_back(':');
    json::append_quoted(value, out);
    i = j;
  }
  out.push_back('}');
}

// ---- decode ----

// True when sha256(data) is the lowercase hex in `hex`. Replay checks every
// entry it serves, so this avoids the per-call digest lookup and strings of
// gate::sha256_hex.
bool digest_matches(std::string_view data, std::string_view hex) {
  static EVP_MD *const k_sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
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

// The version text after the magic prefix: "" when it is version 1, else the
// reason to reject.
std::string check_version(std::string_view v) {
  bool digits = !v.empty() && v.size() <= 9 && v[0] != '0' &&
                std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) return "unknown format version";
  if (v == "1") return {};
  return "format version " + std::string(v) + " is newer than this gate (" +
         std::to_string(k_format_version) + ")";
}

// Splits `bytes` into the checksummed part and the checksum line, or says
// why it cannot. Nothing here looks inside the JSON.
std::string check_frame(std::string_view bytes, std::string_view &covered, std::string_view &json_line) {
  if (bytes.empty()) return "empty file";
  std::size_t nl1 = bytes.find('\n');
  std::string_view first = bytes.substr(0, nl1);
  if (!first.starts_with(k_magic_prefix)) {
    if (nl1 == std::string_view::npos && k_magic_prefix.starts_with(bytes)) return std::string(k_truncated);
    return "wrong magic";
  }
  if (nl1 == std::string_view::npos) return std::string(k_truncated);
  if (std::string reason = check_version(first.substr(k_magic_prefix.size())); !reason.empty()) return reason;

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
  const boost::json::object &o;
  std::string reason;

  const boost::json::value *get(std::string_view name) {
    if (!reason.empty()) return nullptr;
    const auto *v = o.if_contains(boost::json::string_view(name.data(), name.size()));
    if (v == nullptr) reason = "missing field " + std::string(name);
    return v;
  }
  void wrong(std::string_view name, const char *expected) {
    reason = "field " + std::string(name) + " must be " + expected;
  }
  void text(std::string_view name, std::string &out) {
    const auto *v = get(name);
    if (v == nullptr) return;
    if (!v->is_string()) return wrong(name, "a string");
    out.assign(v->get_string().data(), v->get_string().size());
  }
  std::optional<std::int64_t> integer(const boost::json::value &v) {
    if (v.is_int64()) return v.get_int64();
    if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
      return static_cast<std::int64_t>(v.get_uint64());
    return std::nullopt;
  }
  void small_int(std::string_view name, int &out) {
    const auto *v = get(name);
    if (v == nullptr) return;
    auto i = integer(*v);
    if (!i || *i < std::numeric_limits<int>::min() || *i > std::numeric_limits<int>::max())
      return wrong(name, "an integer");
    out = static_cast<int>(*i);
  }
  void number(std::string_view name, double &out) {
    const auto *v = get(name);
    if (v == nullptr) return;
    if (v->is_double())
      out = v->get_double();
    else if (auto i = integer(*v))
      out = static_cast<double>(*i);
    else
      wrong(name, "a number");
  }
  void json_text(std::string_view name, std::string &out) {
    const auto *v = get(name);
    if (v == nullptr) return;
    out.clear();
    if (!v->is_null()) json::append_canonical(*v, out);
  }
  void headers(std::vector<std::pair<std::string, std::string>> &out) {
    const auto *v = get("headers");
    if (v == nullptr) return;
    if (!v->is_object()) return wrong("headers", "an object");
    for (const auto &kv : v->get_object()) {
      if (!kv.value().is_string()) return wrong("headers", "an object of strings");
      out.emplace_back(std::string(kv.key()), std::string(kv.value().get_string()));
    }
    std::sort(out.begin(), out.end());
  }
  void usage(std::optional<std::pair<std::int64_t, std::int64_t>> &out) {
    const auto *v = get("usage");
    if (v == nullptr || v->is_null()) return;
    const auto *u = v->if_object();
    if (u == nullptr || u->size() != 2) return wrong("usage", "null or {completion_tokens, prompt_tokens}");
    const auto *p = u->if_contains("prompt_tokens");
    const auto *c = u->if_contains("completion_tokens");
    std::optional<std::int64_t> pi = p ? integer(*p) : std::nullopt;
    std::optional<std::int64_t> ci = c ? integer(*c) : std::nullopt;
    if (!pi || !ci) return wrong("usage", "null or {completion_tokens, prompt_tokens}");
    out = std::make_pair(*pi, *ci);
  }
};

constexpr std::array<std::string_view, 12> k_fields = {"body",    "headers",  "key",         "latency_ms",
                                                       "path",    "provider", "recorded_at", "replica",
                                                       "request", "route",    "status",      "usage"};

} // namespace

bool header_allowed(std::string_view lowercase_name) {
  // Content metadata and response ids only: anything that could carry a
  // credential, a session or an account identity stays out by default.
  static constexpr std::array<std::string_view, 5> k_allowed = {
      "anthropic-request-id", "content-type", "openai-processing-ms", "request-id", "x-request-id"};
  std::string name = lowercase(lowercase_name);
  return std::find(k_allowed.begin(), k_allowed.end(), name) != k_allowed.end();
}

std::string encode(const Entry &e) {
  std::string j;
  j.reserve(256 + e.body.size() + e.request.size() + e.route.size());
  j += "{\"body\":";
  append_text(e, "body", e.body, j);
  j += ",\"headers\":";
  append_headers(e, j);
  // The key is a hash computed here, never upstream text; redacting a chance
  // match of a secret's last 8 characters would only corrupt it.
  j += ",\"key\":";
  json::append_quoted(e.key, j);
  j += ",\"latency_ms\":";
  json::append_number(std::isfinite(e.latency_ms) ? e.latency_ms : 0.0, j);
  j += ",\"path\":";
  append_text(e, "path", e.path, j);
  j += ",\"provider\":";
  append_text(e, "provider", e.provider, j);
  j += ",\"recorded_at\":";
  append_text(e, "recorded_at", e.recorded_at, j);
  j += ",\"replica\":" + std::to_string(e.replica);
  j += ",\"request\":";
  append_json_text(e, "request", e.request, j);
  j += ",\"route\":";
  append_json_text(e, "route", e.route, j);
  j += ",\"status\":" + std::to_string(e.status);
  j += ",\"usage\":";
  if (e.usage) {
    j += "{\"completion_tokens\":" + std::to_string(e.usage->second) +
         ",\"prompt_tokens\":" + std::to_string(e.usage->first) + "}";
  } else {
    j += "null";
  }
  j += "}";

  std::string out;
  out.reserve(j.size() + 100);
  out += k_magic_prefix;
  out += std::to_string(k_format_version);
  out += '\n';
  out += j;
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
  r.reason = check_frame(bytes, covered, json_line);
  if (!r.reason.empty()) return r;

  // The checksum already vouches for these bytes: a plain, fast parse into a
  // stack arena is enough.
  unsigned char arena[8192];
  boost::json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  boost::json::value v =
      boost::json::parse(boost::json::string_view(json_line.data(), json_line.size()), ec, &mr);
  if (ec || !v.is_object()) {
    r.reason = "invalid JSON";
    return r;
  }
  const auto &o = v.get_object();
  for (const auto &kv : o) {
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

} // namespace gate::cache

#include <gate/cache/entry.hpp>

#include <algorithm>
#include <array>
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

using detail::k_fields;
using detail::needs_escape;
using detail::parse_exact;

constexpr std::string_view k_magic_prefix = "gate-cache ";
constexpr std::string_view k_checksum_prefix = "sha256 ";
constexpr std::size_t k_checksum_line_size = 7 + 64 + 1; // "sha256 " hex64 "\n"
constexpr std::string_view k_truncated = "truncated (no checksum line)";

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
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
// copy, a character at a time, cost as much again as the parse). Escapes
// come from json::escape_of, as those of json::append_quoted (which encode
// uses) do, so the two agree by construction.
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
      char esc[6];
      const std::size_t n = json::escape_of(c, esc);
      if (static_cast<std::size_t>(end - p) < n || std::memcmp(p, esc, n) != 0) return fail();
      p += n;
    }
    pos = static_cast<std::size_t>(p - line.data());
    lit("\"");
  }
  void fail() { ok = false; }
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

DecodeResult parse_line(std::string_view json_line, int version, std::string_view expected_key) {
  DecodeResult r = read_fields(json_line, version, expected_key);
  if (!r.entry) return r;
  // Only what encode writes is accepted, byte for byte: whitespace, key
  // order, escapes, number spelling, header case or order, or a number that
  // does not survive a read (a 100-digit integer) would each make the
  // entry's bytes depend on who rewrote it last. `request` and `route` are
  // already canonical here, and with exact numbers canonical text reads back
  // to itself, so they need no second parse.
  const Entry& e = *r.entry;
  Match match{json_line};
  LineWriter<Match>(e, false, match).write(e.request, e.route);
  if (!match.ok || match.pos != json_line.size()) {
    r.reason = "not in canonical form (field " + std::string(k_fields[match.current]) + ")";
    r.entry.reset();
  }
  return r;
}

} // namespace detail

} // namespace gate::cache

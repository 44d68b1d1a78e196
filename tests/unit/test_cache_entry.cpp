#include <doctest.h>

#include <limits>
#include <string>
#include <vector>

#include <gate/cache/entry.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>

using gate::cache::decode;
using gate::cache::encode;
using gate::cache::Entry;

namespace {

const std::string k_key = std::string(64, 'a');

Entry sample() {
  Entry e;
  e.key = k_key;
  e.provider = "openai";
  e.path = "/chat/completions";
  e.replica = 3;
  e.request = R"({"messages":[{"content":"hi","role":"user"}],"model":"m","temperature":0})";
  e.status = 200;
  e.headers = {{"content-type", "application/json"}, {"x-request-id", "req_123"}};
  // About 1 KiB of body, with quotes, escapes and non-ASCII text.
  e.body = R"({"choices":[{"message":{"content":"Gr\u00fc\u00dfe \"quoted\" line\nnext ü 日本"}}],"id":"x"})";
  while (e.body.size() < 1000)
    e.body += " padding";
  e.usage = std::make_pair(std::int64_t{12}, std::int64_t{34});
  e.latency_ms = 123.25;
  e.recorded_at = "2026-01-02T03:04:05Z";
  e.route = R"({"base_url":"https://api.example.com/v1","key_alias":"default"})";
  return e;
}

// A well-framed entry around any JSON line: magic, line, correct checksum.
std::string frame(const std::string& json, const std::string& magic = "gate-cache 1") {
  std::string covered = magic + "\n" + json + "\n";
  return covered + "sha256 " + gate::sha256_hex(covered) + "\n";
}

std::string reason_of(std::string_view bytes, std::string_view key = k_key) {
  auto r = decode(bytes, key);
  CHECK_FALSE(r.entry.has_value());
  return r.reason;
}

void check_equal(const Entry& a, const Entry& b) {
  CHECK(a.key == b.key);
  CHECK(a.provider == b.provider);
  CHECK(a.path == b.path);
  CHECK(a.replica == b.replica);
  CHECK(a.request == b.request);
  CHECK(a.status == b.status);
  CHECK(a.headers == b.headers);
  CHECK(a.body == b.body);
  CHECK(a.usage == b.usage);
  CHECK(a.latency_ms == b.latency_ms);
  CHECK(a.recorded_at == b.recorded_at);
  CHECK(a.route == b.route);
  CHECK(a.event_ms == b.event_ms);
}

} // namespace

TEST_CASE("rel-10/11: round trip keeps every field and re-encodes to identical bytes") {
  const Entry e = sample();
  const std::string bytes = encode(e);
  CHECK(bytes.starts_with("gate-cache 1\n{\"body\":"));
  auto r = decode(bytes, k_key);
  REQUIRE_MESSAGE(r.entry.has_value(), r.reason);
  CHECK(r.reason.empty());
  check_equal(*r.entry, e);
  CHECK(encode(*r.entry) == bytes);
}

TEST_CASE("encode is byte-stable: header order, request whitespace and key order do not matter") {
  Entry a = sample();
  Entry b = sample();
  b.headers = {{"X-Request-Id", "req_123"}, {"Content-Type", "application/json"}};
  b.request = R"({ "temperature": 0, "model": "m", "messages": [ {"role":"user", "content":"hi"} ] })";
  CHECK(encode(a) == encode(b));
}

TEST_CASE("encode: exact layout of a small entry") {
  Entry e;
  e.key = k_key;
  e.provider = "p";
  e.path = "/x";
  e.request = R"({"b":1,"a":2})";
  e.body = "ok";
  e.latency_ms = 1.5;
  e.recorded_at = "t";
  const std::string json = R"({"body":"ok","headers":{},"key":")" + k_key +
                           R"(","latency_ms":1.5,"path":"/x","provider":"p","recorded_at":"t","replica":0,)"
                           R"("request":{"a":2,"b":1},"route":null,"status":200,"usage":null})";
  CHECK(encode(e) == frame(json));
  // Empty route reads back as empty; absent usage stays absent.
  auto r = decode(encode(e), k_key);
  REQUIRE(r.entry);
  CHECK(r.entry->route.empty());
  CHECK_FALSE(r.entry->usage.has_value());
}

TEST_CASE("event times: only in version 2, exact layout, round trip") {
  Entry e;
  e.key = k_key;
  e.provider = "p";
  e.path = "/x";
  e.body = "data: a\n\ndata: b\n\n";
  e.latency_ms = 40;
  e.recorded_at = "t";
  // Without event times the entry is version 1, as before they existed.
  CHECK(encode(e).starts_with("gate-cache 1\n{\"body\":"));
  CHECK(encode(e).find("event_ms") == std::string::npos);

  e.event_ms = {12.5, 12.5, 39};
  const std::string json =
      R"({"body":"data: a\n\ndata: b\n\n","event_ms":[12.5,12.5,39],"headers":{},"key":")" + k_key +
      R"(","latency_ms":40,"path":"/x","provider":"p","recorded_at":"t","replica":0,)"
      R"("request":null,"route":null,"status":200,"usage":null})";
  const std::string bytes = encode(e);
  CHECK(bytes == frame(json, "gate-cache 2"));
  auto r = decode(bytes, k_key);
  REQUIRE_MESSAGE(r.entry.has_value(), r.reason);
  check_equal(*r.entry, e);
  CHECK(encode(*r.entry) == bytes);

  // The field and the version go together.
  CHECK(reason_of(frame(json, "gate-cache 1")) == "field event_ms needs format version 2");
  std::string without = json;
  without.erase(without.find(R"("event_ms")"), std::string(R"("event_ms":[12.5,12.5,39],)").size());
  CHECK(reason_of(frame(without, "gate-cache 2")) == "missing field event_ms (format version 2)");
  const std::string bad = "field event_ms must be a non-empty list of non-decreasing milliseconds";
  for (const char* times : {"[]", "[3,2]", "[-1]", "[1,\"2\"]", "{}", "null", "[[1]]"}) {
    CAPTURE(times);
    std::string j = json;
    j.replace(j.find("[12.5,12.5,39]"), 14, times);
    CHECK(reason_of(frame(j, "gate-cache 2")) == bad);
  }
  // Spelled otherwise than encode would (12.50): not canonical.
  std::string spelled = json;
  spelled.replace(spelled.find("12.5,"), 5, "12.50,");
  CHECK(reason_of(frame(spelled, "gate-cache 2")) == "not in canonical form (field event_ms)");

  // Encode refuses times it could not read back.
  for (std::vector<double> times : {std::vector<double>{2, 1}, std::vector<double>{-0.5},
                                    std::vector<double>{std::numeric_limits<double>::quiet_NaN()}}) {
    e.event_ms = times;
    CHECK_THROWS_AS(encode(e), gate::Error);
  }
}

TEST_CASE("rel-02: only allow-listed headers are stored") {
  using gate::cache::header_allowed;
  for (const char* ok : {"content-type", "x-request-id", "request-id", "openai-processing-ms",
                         "anthropic-request-id", "Content-Type"})
    CHECK_MESSAGE(header_allowed(ok), ok);
  for (const char* no : {"authorization", "Authorization", "x-api-key", "api-key", "cookie", "set-cookie",
                         "openai-organization", "anthropic-organization-id", "proxy-authorization",
                         "x-unknown", "", "content-type "})
    CHECK_FALSE_MESSAGE(header_allowed(no), no);

  Entry e = sample();
  e.headers = {{"authorization", "Bearer abc"},
               {"set-cookie", "s=1"},
               {"openai-organization", "org-9"},
               {"x-request-id", "b"},
               {"x-request-id", "a"},
               {"x-api-key", "k"},
               {"content-type", "application/json"}};
  const std::string bytes = encode(e);
  CHECK(bytes.find("Bearer abc") == std::string::npos);
  CHECK(bytes.find("s=1") == std::string::npos);
  CHECK(bytes.find("org-9") == std::string::npos);
  CHECK(bytes.find("authorization") == std::string::npos);
  auto r = decode(bytes, k_key);
  REQUIRE(r.entry);
  // A repeated header is joined in arrival order, as HTTP allows.
  std::vector<std::pair<std::string, std::string>> want = {{"content-type", "application/json"},
                                                           {"x-request-id", "b, a"}};
  CHECK(r.entry->headers == want);
}

TEST_CASE("rel-10: one flipped byte anywhere is rejected") {
  const std::string bytes = encode(sample());
  for (unsigned char mask : {0x01, 0x20, 0x80}) {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      auto r = decode(bad, k_key);
      if (r.entry.has_value() || r.reason.empty())
        FAIL("flip at offset " << i << " mask " << int(mask) << " accepted");
    }
  }
  // A flip inside the JSON line is a checksum mismatch, not anything vaguer.
  std::string bad = bytes;
  bad[40] = static_cast<char>(bad[40] ^ 0x01);
  CHECK(reason_of(bad) == "checksum mismatch");
  // So is a damaged checksum digit, and a damaged line break before it.
  bad = bytes;
  bad[bad.size() - 2] = bad[bad.size() - 2] == '0' ? '1' : '0';
  CHECK(reason_of(bad) == "checksum mismatch");
  bad = bytes;
  bad[bad.size() - 73] = ' ';
  CHECK(reason_of(bad) == "checksum mismatch");
}

TEST_CASE("rel-11: empty and truncated entries name the reason") {
  CHECK(reason_of("") == "empty file");
  const std::string bytes = encode(sample());
  // Every proper prefix: inside the magic, the JSON line, right after it,
  // and inside the checksum line.
  for (std::size_t n = 1; n < bytes.size(); ++n) {
    std::string r = reason_of(std::string_view(bytes).substr(0, n));
    if (r != "truncated (no checksum line)") FAIL("prefix of " << n << " bytes: " << r);
  }
}

TEST_CASE("rel-11: wrong magic, future and unknown versions") {
  const std::string bytes = encode(sample());
  CHECK(reason_of("hello world\n") == "wrong magic");
  CHECK(reason_of("GATE-cache 1\n{}\n") == "wrong magic");
  CHECK(reason_of("\x89PNG\r\n") == "wrong magic");
  std::string future = bytes;
  future[11] = '3';
  CHECK(reason_of(future) == "format version 3 is newer than this gate (2)");
  // A future version's checksum line may look different: not looked at.
  CHECK(reason_of("gate-cache 17\nanything\n") == "format version 17 is newer than this gate (2)");
  CHECK(reason_of(frame("{}", "gate-cache 0")) == "unknown format version");
  CHECK(reason_of(frame("{}", "gate-cache x")) == "unknown format version");
  CHECK(reason_of(frame("{}", "gate-cache 01")) == "unknown format version");
  CHECK(reason_of(frame("{}", "gate-cache ")) == "unknown format version");
}

TEST_CASE("key must match the file name") {
  const std::string bytes = encode(sample());
  CHECK(reason_of(bytes, std::string(64, 'b')) == "key does not match file name");
  // An empty expected key skips the check (for tools reading one file).
  CHECK(decode(bytes, "").entry.has_value());
}

namespace {

// The JSON line of a valid entry as (field, value) pairs, to take apart.
std::vector<std::pair<std::string, std::string>> fields() {
  return {{"body", R"("ok")"},
          {"headers", "{}"},
          {"key", "\"" + k_key + "\""},
          {"latency_ms", "1.5"},
          {"path", R"("/x")"},
          {"provider", R"("p")"},
          {"recorded_at", R"("t")"},
          {"replica", "3"},
          {"request", "{}"},
          {"route", "null"},
          {"status", "200"},
          {"usage", R"({"completion_tokens":2,"prompt_tokens":1})"}};
}

std::string json_line(const std::vector<std::pair<std::string, std::string>>& f) {
  std::string out = "{";
  for (const auto& [name, value] : f)
    out += (out.size() > 1 ? ",\"" : "\"") + name + "\":" + value;
  return out + "}";
}

std::string with(const std::string& field, const std::string& value) {
  auto f = fields();
  for (auto& [name, v] : f)
    if (name == field) v = value;
  return frame(json_line(f));
}

std::string without(const std::string& field) {
  auto f = fields();
  std::erase_if(f, [&](const auto& kv) { return kv.first == field; });
  return frame(json_line(f));
}

} // namespace

TEST_CASE("well-framed but malformed JSON is rejected with the field") {
  REQUIRE(decode(frame(json_line(fields())), k_key).entry.has_value());
  CHECK(reason_of(frame("{not json")) == "invalid JSON");
  CHECK(reason_of(frame("[1,2]")) == "invalid JSON");

  for (const auto& [name, value] : fields())
    CHECK(reason_of(without(name)) == "missing field " + name);

  std::string extra = json_line(fields());
  extra.insert(1, "\"aaa\":1,");
  CHECK(reason_of(frame(extra)) == "unknown field aaa");

  CHECK(reason_of(with("status", R"("200")")) == "field status must be an integer");
  CHECK(reason_of(with("replica", "1e99")) == "field replica must be an integer");
  CHECK(reason_of(with("replica", "4294967296")) == "field replica must be an integer");
  CHECK(reason_of(with("body", "1")) == "field body must be a string");
  CHECK(reason_of(with("latency_ms", "null")) == "field latency_ms must be a number");
  CHECK(reason_of(with("headers", R"({"content-type":1})")) == "field headers must be an object of strings");
  CHECK(reason_of(with("usage", R"({"completion_tokens":2,"prompt_tokens":null})")) ==
        "field usage must be null or {completion_tokens, prompt_tokens}");
  CHECK(reason_of(with("usage", R"({"completion_tokens":2})")) ==
        "field usage must be null or {completion_tokens, prompt_tokens}");
  CHECK(reason_of(with("key", "\"" + std::string(64, 'A') + "\""), "") ==
        "field key must be 64 lowercase hex digits");
}

TEST_CASE("encode refuses what could never be read back") {
  Entry e = sample();
  e.request = "{not json";
  CHECK_THROWS_AS(encode(e), gate::Error);
  e = sample();
  e.body = "\xff\xfe";
  try {
    encode(e);
    FAIL("accepted invalid UTF-8");
  } catch (const gate::Error& err) {
    CHECK(err.code() == gate::Exit::bad_input);
    CHECK(std::string(err.what()).find(k_key) != std::string::npos);
  }
  // A header value that is not UTF-8 is dropped, not fatal.
  e = sample();
  e.headers = {{"x-request-id", "\xff"}};
  auto r = decode(encode(e), k_key);
  REQUIRE(r.entry);
  CHECK(r.entry->headers.empty());
  // Non-finite latency is stored as 0 so that the entry stays readable.
  e = sample();
  e.latency_ms = std::numeric_limits<double>::infinity();
  r = decode(encode(e), k_key);
  REQUIRE(r.entry);
  CHECK(r.entry->latency_ms == 0);
}

TEST_CASE("rel-01/03: a registered secret in any field never reaches the encoded bytes") {
  const std::string canary = "sk-canary-7f3a9b1c2d4e5f60";
  gate::register_secret(canary);
  Entry e = sample();
  e.body = R"({"error":{"message":"Incorrect API key provided: )" + canary + R"("}})";
  e.request = R"({"api_key":")" + canary + R"(","model":"m"})";
  e.headers = {{"x-request-id", "id-" + canary}, {"authorization", "Bearer " + canary}};
  e.route = R"({"url":"https://h/v1?key=)" + canary + R"("})";
  e.path = "/chat?key=" + canary;
  const std::string bytes = encode(e);
  CHECK(bytes.find(canary) == std::string::npos);
  CHECK(bytes.find(gate::base64_encode(canary)) == std::string::npos);
  CHECK(bytes.find("2d4e5f60") == std::string::npos); // its last 8 characters
  CHECK_FALSE(gate::contains_secret(bytes));
  CHECK(bytes.find("[REDACTED]") != std::string::npos);
  // Still a valid entry.
  auto r = decode(bytes, k_key);
  REQUIRE_MESSAGE(r.entry, r.reason);
  CHECK(r.entry->body == R"({"error":{"message":"Incorrect API key provided: [REDACTED]"}})");
}

// Inputs the cache_entry fuzz target found (fuzz/fuzz_cache_entry.cpp), kept
// as literals so the tests do not depend on fuzz/findings/.
#include <doctest.h>

#include <string>

#include <gate/cache/entry.hpp>
#include <gate/util/sha256.hpp>

using gate::cache::decode;
using gate::cache::encode;
using gate::cache::Entry;

namespace {

// fuzz/findings/cache_entry-unstable-encoding without its mode byte (0x01:
// the harness frames the JSON line with magic and a correct checksum).
const std::string k_unstable_line =
    R"json({"body":"{\"id\":\"chatcmpl-fake-111\",\"object\":\"chat.completion\",\"model\":\"demo-model\",\"cho)json"
    R"json(ices\":[{\"index\":0,\"message\":{\"role\":\"assistant\t\":\"Product\"},\"finish_reason\":\"stop\"}])json"
    R"json(,\"usage\":8,\"completion_tokens\":2,\"total_tokens\":11}}","headers":{"content-$ype":"application/j)json"
    R"json(son"},"key":"001af53528cf339b56aa3817c3fe8581f8c00fbfcc27127b732b3e65d5e26ec0","latency_ms":0.078216)json"
    R"json(,"path":"/chat/completions","provider":"openai","recorded_at":"2026-11-29T09:50:01Z","replica":2,"re)json"
    R"json(quest":{"max_tokens":6666666666666666666666666666666666666666666666666666666666666666666666666666666)json"
    R"json(666666666666666666666666666256,"messages":[{"content":"Classify the mssage\r.","role":"system"},{"co)json"
    R"json(ntent":"Does the Ridge Parka run small? I'm usually a medium.","role":"user"}],"model":"demo-model",)json"
    R"json("seed":7,"temperature":0},"route":{"base_url_host":"127.0.0.1:18089","bYse_url_path":"/v1","concurre)json"
    R"json(nci":"1","gate_version":"0.1.0","key_alias":"demo-recorder","max_tokens":"256","model":"demo`-model")json"
    R"json(,"provider":"openai","seed":"7","temperature":"0","tool_schema_version":"none","top_p":"unset"},"sta)json"
    R"json(tus":200,"usage":{"completion_tokens":2,"prompt_tokens":28}})json";

// What the harness does with an odd mode byte.
std::string frame(const std::string& json) {
  std::string covered = "gate-cache 1\n" + json + "\n";
  return covered + "sha256 " + gate::sha256_hex(covered) + "\n";
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// The fuzz target's property: an accepted entry re-encodes to bytes that
// decode to the same encoding.
void check_stable(const std::string& bytes) {
  auto r = decode(bytes, "");
  REQUIRE_MESSAGE(r.entry, r.reason);
  const std::string again = encode(*r.entry);
  auto r2 = decode(again, r.entry->key);
  REQUIRE_MESSAGE(r2.entry, r2.reason);
  CHECK(encode(*r2.entry) == again);
  // Accepted means canonical: the very bytes encode writes.
  CHECK(again == bytes);
}

const std::string k_key = std::string(64, 'a');

Entry sample() {
  Entry e;
  e.key = k_key;
  e.provider = "openai";
  e.path = "/chat/completions";
  e.request = R"({"messages":[{"content":"hi","role":"user"}],"model":"m"})";
  e.headers = {{"content-type", "application/json"}, {"x-request-id", "req_1"}};
  e.body = R"({"choices":[{"message":{"content":"ok"}}]})";
  e.usage = std::make_pair(std::int64_t{3}, std::int64_t{1});
  e.latency_ms = 12.5;
  e.recorded_at = "2026-01-02T03:04:05Z";
  e.route = R"({"key_alias":"default"})";
  return e;
}

// The JSON line of an encoded entry, edited, then framed again with a
// correct checksum: only the decoder's own checks can catch the edit.
std::string edited(const std::string& from, const std::string& to) {
  std::string bytes = encode(sample());
  std::size_t nl1 = bytes.find('\n');
  std::size_t nl2 = bytes.find('\n', nl1 + 1);
  return frame(replaced(bytes.substr(nl1 + 1, nl2 - nl1 - 1), from, to));
}

std::string reason_of(const std::string& bytes) {
  auto r = decode(bytes, "");
  CHECK_FALSE(r.entry.has_value());
  return r.reason;
}

} // namespace

TEST_CASE("fuzz cache_entry-unstable-encoding: rejected, each defect with its own reason") {
  // As found: the header off the allow-list is reported first.
  CHECK(reason_of(frame(k_unstable_line)) == R"(header "content-$ype" is not on the allow-list)");

  // With that header fixed, the 100-digit max_tokens remains: it reads as a
  // double and re-encodes as 6.666666666666667e+99, so the line is not what
  // encode would write.
  const std::string allowed = replaced(k_unstable_line, "content-$ype", "content-type");
  CHECK(reason_of(frame(allowed)) == "not in canonical form (field request)");

  // With that fixed too, the route's keys are out of order ("bYse_url_path"
  // sorts before "base_url_host").
  const std::string digits(97, '6');
  const std::string small = replaced(allowed, digits + "256", "256");
  CHECK(reason_of(frame(small)) == "not in canonical form (field route)");

  // With all three fixed the same entry is canonical and round-trips exactly.
  check_stable(frame(replaced(small, "bYse_url_path", "base_url_path")));
}

TEST_CASE("a checksummed entry with a header off the allow-list is rejected") {
  for (const char* name : {"authorization", "x-api-key", "set-cookie", "x-unknown"}) {
    CAPTURE(name);
    CHECK(reason_of(edited("\"x-request-id\"", std::string("\"") + name + "\"")) ==
          std::string("header \"") + name + "\" is not on the allow-list");
  }
  // Allowed names in the wrong case or order are not what encode writes.
  CHECK(reason_of(edited("\"content-type\"", "\"Content-Type\"")) == "not in canonical form (field headers)");
  CHECK(reason_of(edited(R"("content-type":"application/json","x-request-id":"req_1")",
                         R"("x-request-id":"req_1","content-type":"application/json")")) ==
        "not in canonical form (field headers)");
  // Control: the unedited entry is accepted.
  check_stable(encode(sample()));
}

TEST_CASE("every other departure from encode's bytes is rejected and names the field") {
  CHECK(reason_of(edited("\"body\":", "\"body\": ")) == "not in canonical form (field body)");
  CHECK(reason_of(edited("\"key_alias\"", " \"key_alias\"")) == "not in canonical form (field route)");
  CHECK(reason_of(edited(R"({"messages":[{"content":"hi","role":"user"}],"model":"m"})",
                         R"({"model":"m","messages":[{"content":"hi","role":"user"}]})")) ==
        "not in canonical form (field request)");
  // Escapes encode does not use: \/ and \u0041 for plain characters.
  CHECK(reason_of(edited("/chat/completions", "\\/chat/completions")) ==
        "not in canonical form (field path)");
  CHECK(reason_of(edited("\"openai\"", "\"open\\u0061i\"")) == "not in canonical form (field provider)");
  // Number spellings: 12.50, 1.25e1, -0.
  CHECK(reason_of(edited("12.5", "12.50")) == "not in canonical form (field latency_ms)");
  CHECK(reason_of(edited("12.5", "1.25e1")) == "not in canonical form (field latency_ms)");
  CHECK(reason_of(edited("\"replica\":0", "\"replica\":-0")) == "not in canonical form (field replica)");
  CHECK(reason_of(edited("\"status\":200", "\"status\":2e2")) == "field status must be an integer");
  CHECK(reason_of(edited("\"prompt_tokens\":3", "\"prompt_tokens\":03")) == "invalid JSON");
  // Fields out of order.
  CHECK(reason_of(edited(R"("path":"/chat/completions","provider":"openai")",
                         R"("provider":"openai","path":"/chat/completions")")) ==
        "not in canonical form (field path)");
}

TEST_CASE("numbers Boost misreads still round-trip: they are read exactly") {
  // Boost 1.81's parser reads "13.387664401253275" as 13.387664401253277
  // (one ulp off; std::from_chars gets it right), so without exact reading
  // an entry encode just wrote would fail its own canonical-form check.
  Entry e = sample();
  e.latency_ms = 13.387664401253275;
  e.request = R"({"temperature":0.30000000000000004,"top_p":13.387664401253275})";
  const std::string bytes = encode(e);
  CHECK(bytes.find(R"("latency_ms":13.387664401253275,)") != std::string::npos);
  CHECK(bytes.find(R"({"temperature":0.30000000000000004,"top_p":13.387664401253275})") != std::string::npos);
  auto r = decode(bytes, k_key);
  REQUIRE_MESSAGE(r.entry, r.reason);
  CHECK(r.entry->latency_ms == 13.387664401253275);
  check_stable(bytes);
}

TEST_CASE("every character that needs escaping round-trips through the canonical check") {
  // decode compares escapes without calling json::append_quoted; this pins
  // the two to the same spelling for every control character.
  Entry e = sample();
  e.body.clear();
  for (int c = 1; c < 0x20; ++c)
    e.body.push_back(static_cast<char>(c));
  e.body += "\"\\/\x7f ü 日本";
  e.path = "tab\there";
  const std::string bytes = encode(e);
  CHECK(bytes.find(R"(\u0001\u0002)") != std::string::npos);
  CHECK(bytes.find(R"(\b\t\n\u000b\f\r)") != std::string::npos);
  auto r = decode(bytes, k_key);
  REQUIRE_MESSAGE(r.entry, r.reason);
  CHECK(r.entry->body == e.body);
  check_stable(bytes);
  // The same character written as a \u escape instead is not canonical.
  std::size_t nl1 = bytes.find('\n');
  std::size_t nl2 = bytes.find('\n', nl1 + 1);
  CHECK(reason_of(frame(replaced(bytes.substr(nl1 + 1, nl2 - nl1 - 1), R"(\t)", R"(\u0009)"))) ==
        "not in canonical form (field body)");
}

TEST_CASE("a non-canonical escape is caught at every offset of a long string") {
  // decode compares strings eight bytes at a time; a difference must be
  // found wherever it falls in such a block, and so must a needed escape.
  Entry e = sample();
  e.body = std::string(40, 'A');
  const std::string bytes = encode(e);
  std::size_t nl1 = bytes.find('\n');
  std::size_t nl2 = bytes.find('\n', nl1 + 1);
  const std::string line = bytes.substr(nl1 + 1, nl2 - nl1 - 1);
  const std::size_t start = line.find(e.body);
  REQUIRE(start != std::string::npos);
  for (std::size_t i = 0; i < e.body.size(); ++i) {
    CAPTURE(i);
    std::string bad = line;
    bad.replace(start + i, 1, "\\u0041"); // the same 'A', spelled as an escape
    CHECK(reason_of(frame(bad)) == "not in canonical form (field body)");
    Entry quoted = sample();
    quoted.body = std::string(40, 'A');
    quoted.body[i] = '"';
    check_stable(encode(quoted));
  }
}

#include <doctest.h>

#include <string>

#include <gate/util/redact.hpp>

// The secret set is process-wide: every key registered here stays
// registered for the rest of this file's tests (ctest runs each file alone).

namespace {

const std::string k_key = "sk-canary-7f3a9b1c2d4e5f60";

// "\uXXXX" for every byte of an ASCII text, as a JSON encoder that escapes
// everything would write it.
std::string u_escaped(const std::string& s) {
  static const char* k_hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += "\\u00";
    out += k_hex[c >> 4];
    out += k_hex[c & 15];
  }
  return out;
}

bool leaks(const std::string& text) {
  return text.find(k_key) != std::string::npos || text.find("sk-canary") != std::string::npos ||
         text.find("2d4e5f60") != std::string::npos;
}

} // namespace

TEST_CASE("a key written with JSON \\u escapes is redacted, the JSON stays valid") {
  gate::register_secret(k_key);
  const std::string body =
      R"({"choices":[{"message":{"content":"your key is )" + u_escaped(k_key) + R"("}}]})";
  REQUIRE_FALSE(leaks(body)); // the test's own premise: no raw form in the bytes
  CHECK(gate::contains_secret(body));
  CHECK(gate::redact(body) == R"({"choices":[{"message":{"content":"your key is [REDACTED]"}}]})");

  // Only some characters escaped, and "\/" where nothing needs escaping.
  std::string mixed = "\"sk\\u002dcanary\\u002d7f3a9b1c2d4e5f60\"";
  CHECK(gate::redact(mixed) == "\"[REDACTED]\"");
  // Escaped twice: a JSON string holding JSON (tool call arguments).
  std::string twice = R"({"arguments":"{\"k\":\"\\u0073k-canary-7f3a9b1c2d4e5f60\"}"})";
  CHECK(gate::redact(twice) == R"({"arguments":"{\"k\":\"[REDACTED]\"}"})");
  // An escaped backslash before "u" is a backslash, not an escape.
  CHECK(gate::redact(R"("\\u0073k")") == R"("\\u0073k")");
}

TEST_CASE("a key split across stream events is redacted in every event that holds part of it") {
  gate::register_secret(k_key);
  auto chunk = [](const std::string& text) {
    return "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n";
  };
  // Split so that neither piece holds the last 8 characters whole.
  const std::string sse =
      chunk("the key is sk-canary-7f3a9b1c2d4") + chunk("e5f60, keep it") + "data: [DONE]\n\n";
  REQUIRE_FALSE(gate::contains_secret(sse.substr(0, sse.find("e5f60")))); // no raw form in the first event
  const std::string out = gate::redact(sse);
  CHECK_FALSE(leaks(out));
  CHECK(out.find("e5f60") == std::string::npos);
  CHECK(out == chunk("the key is [REDACTED]") + chunk("[REDACTED], keep it") + "data: [DONE]\n\n");

  // Anthropic: event lines, CRLF, and the key split three ways and escaped.
  auto delta = [](const std::string& text) {
    return "event: content_block_delta\r\ndata: "
           "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
           "\"text_delta\",\"text\":\"" +
           text + "\"}}\r\n\r\n";
  };
  const std::string anthropic = delta("sk-can") + delta("ary-7f3a9b") + delta(u_escaped("1c2d4e5f60") + "!");
  const std::string clean = gate::redact(anthropic);
  CHECK(clean == delta("[REDACTED]") + delta("[REDACTED]") + delta("[REDACTED]!"));
  CHECK(gate::contains_secret(anthropic));
}

TEST_CASE("base64 of a text holding the key is redacted at all three byte alignments") {
  gate::register_secret(k_key);
  for (const std::string prefix : {"", "a", "ab", "abc", "abcd"}) {
    for (const std::string suffix : {"", "z", "zz", "zzz"}) {
      CAPTURE(prefix);
      CAPTURE(suffix);
      const std::string b64 = gate::base64_encode(prefix + k_key + suffix);
      CHECK(gate::contains_secret(b64));
      const std::string out = gate::redact("blob " + b64 + " end");
      CHECK(out.find("[REDACTED]") != std::string::npos);
      // What is left cannot be decoded back into the key's first bytes.
      CHECK(out.find(gate::base64_encode(prefix + "sk-canary").substr(0, 12)) == std::string::npos);
    }
  }
  // The URL-safe alphabet too ("-_" for "+/"); ">>>" and "???" force both.
  std::string url = gate::base64_encode(">>>" + k_key + "???");
  for (char& c : url)
    c = c == '+' ? '-' : c == '/' ? '_' : c;
  CHECK(gate::contains_secret(url));
}

TEST_CASE("the key's last 8 characters and the raw key stay redacted") {
  gate::register_secret(k_key);
  CHECK(gate::redact("key=" + k_key + "!") == "key=[REDACTED]!");
  CHECK(gate::redact("...2d4e5f60") == "...[REDACTED]");
  CHECK(gate::redact("x " + k_key + " y " + k_key) == "x [REDACTED] y [REDACTED]");
  CHECK(gate::redact("nothing here \\u0041 \\n") == "nothing here \\u0041 \\n");
}

TEST_CASE("a key under 8 characters is redacted where it stands alone, not inside a word") {
  const std::string short_key = "q7Zx3";
  gate::register_secret(short_key);
  CHECK(gate::redact("Incorrect API key provided: q7Zx3.") == "Incorrect API key provided: [REDACTED].");
  CHECK(gate::redact("key=q7Zx3") == "key=[REDACTED]");
  CHECK(gate::redact("\"q7Zx3\"") == "\"[REDACTED]\"");
  CHECK(gate::redact("\"\\u0071\\u0037Zx3\"") == "\"[REDACTED]\"");
  CHECK(gate::redact("q7Zx3") == "[REDACTED]");
  // Inside a longer token it is most likely not the key: left alone, or a
  // short key would blank ordinary text.
  CHECK(gate::redact("aq7Zx3") == "aq7Zx3");
  CHECK(gate::redact("q7Zx3_b q7Zx3-c") == "q7Zx3_b q7Zx3-c");
  // Its base64 on its own (Basic auth, a header echoed back).
  CHECK(gate::redact("Basic " + gate::base64_encode(short_key)) == "Basic [REDACTED]");
  CHECK(gate::contains_secret("the key q7Zx3 again"));
  CHECK_FALSE(gate::contains_secret("xq7Zx3x"));
}

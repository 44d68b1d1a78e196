#include <doctest.h>

#include <random>
#include <string>
#include <vector>

#include <gate/cache/entry.hpp>
#include <gate/cache/line.hpp>
#include <gate/util/json.hpp>

using gate::cache::Entry;
using gate::cache::detail::parse_line;
using gate::cache::detail::scan_line;

namespace {

const std::string k_key = std::string(63, '0') + "f";

bool same(const Entry& a, const Entry& b) {
  return a.key == b.key && a.provider == b.provider && a.path == b.path && a.replica == b.replica &&
         a.request == b.request && a.status == b.status && a.headers == b.headers && a.body == b.body &&
         a.event_ms == b.event_ms && a.usage == b.usage && a.latency_ms == b.latency_ms &&
         a.recorded_at == b.recorded_at && a.route == b.route;
}

// The JSON line and version of an encoded entry.
std::pair<std::string, int> line_of(const Entry& e) {
  const std::string bytes = gate::cache::encode(e);
  const std::size_t nl1 = bytes.find('\n');
  const std::size_t nl2 = bytes.find('\n', nl1 + 1);
  return {bytes.substr(nl1 + 1, nl2 - nl1 - 1), bytes[11] - '0'};
}

std::vector<Entry> entries() {
  std::vector<Entry> out;
  Entry a;
  a.key = k_key;
  a.provider = "openai";
  a.path = "/t/fix \"it\"/r/0/chat/completions";
  a.replica = 2;
  // Every kind of value canonical JSON has, numbers at their edges, keys
  // that sort by byte (upper case before lower, UTF-8 last).
  a.request = R"({"Z":1,"a":[-9223372036854775808,18446744073709551615,0.1,1e+20,1e-07,-2.5,100],)"
              R"("b":{"c":null,"d":true,"e":false},"m":"tab\there \u0001 \"q\" \\ é 日本","é":[]})";
  a.status = 200;
  a.headers = {{"x-request-id", "req_1"}, {"content-type", "application/json; charset=utf-8"}};
  a.body = "{\"choices\":[{\"message\":{\"content\":\"Grüße\\n\\\"x\\\"\"}}]} \x7f \x1f\b\f\r\n\t";
  a.usage = std::make_pair(std::int64_t{12}, std::int64_t{-3});
  a.latency_ms = 123.25;
  a.recorded_at = "2026-01-02T03:04:05Z";
  a.route = R"({"base_url":"https://api.example.com/v1","key_alias":"default","seed":7,"temperature":0})";
  out.push_back(a);

  Entry b = a;
  b.request.clear();
  b.route.clear();
  b.usage.reset();
  b.headers.clear();
  b.body.clear();
  b.latency_ms = 0;
  b.replica = -7;
  b.event_ms = {0, 0.5, 12, 1e-3, 9007199254740992};
  std::sort(b.event_ms.begin(), b.event_ms.end());
  out.push_back(b);

  Entry c = a;
  c.event_ms = {3.25};
  c.latency_ms = 1e+300;
  c.request = R"([[[[[[[[1]]]]]]]])";
  out.push_back(c);
  return out;
}

} // namespace

TEST_CASE("scan_line reads every line encode writes, exactly as the full parse does") {
  for (const Entry& e : entries()) {
    const auto [line, version] = line_of(e);
    const std::string& shown = line; // clang 14 captures no structured binding
    CAPTURE(shown);
    auto fast = scan_line(line, version, k_key);
    REQUIRE(fast.has_value());
    auto full = parse_line(line, version, k_key);
    REQUIRE_MESSAGE(full.entry.has_value(), full.reason);
    CHECK(same(*fast, *full.entry));
    if (!e.request.empty())
      CHECK(fast->request == gate::json::canonical(gate::json::parse_strict(e.request, "request")));
    // The file-name check is the same too.
    CHECK_FALSE(scan_line(line, version, std::string(64, 'a')).has_value());
  }
}

TEST_CASE("scan_line declines what is not canonical, and the full parse rejects it too") {
  const auto parts = line_of(entries()[0]);
  const std::string& line = parts.first;
  const auto version = parts.second;
  auto swap = [&](const std::string& from, const std::string& to) {
    std::string out = line;
    const std::size_t at = out.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    return out.replace(at, from.size(), to);
  };
  const std::vector<std::string> bad = {
      swap("{\"body\"", "{ \"body\""),        // whitespace
      swap("\"Z\":1,", "\"Z\": 1,"),          // whitespace inside request
      swap("\"Z\":1,\"a\"", "\"a\":1,\"Z\""), // keys out of order (and duplicate)
      swap("0.1,", "0.10,"),                  // a number not in its shortest spelling
      swap("100]", "1e2]"),                   // another spelling of 100
      swap("-2.5", "-2.50"),                  //
      swap("100]", "-0]"),                    // -0
      swap("123.25", "123.250"),              // latency spelled otherwise
      swap("\\\"q\\\"", "\\u0022q\\u0022"),   // an escape append_quoted does not write
      swap("\\u0001", "\\u0001\\/"),          // \/
      swap("\\u0001", "\\u0041"),             // \u escape of a printable
      swap("\\u0001", "\\u000A"),             // upper-case hex
      swap("\\u0001", "\\u000a"),             // \n has a short escape
      swap("Grüße", "Gr\xc3\x28"
                    "e"),                              // invalid UTF-8
      swap("Grüße", "Gr\x01"),                         // a raw control character
      swap("\"content-type\"", "\"Content-Type\""),    // header name case
      swap("\"content-type\"", "\"authorization\""),   // header off the list
      swap("\"replica\":2", "\"replica\":2147483648"), // out of int range
      swap("\"replica\":2", "\"replica\":02"),         // leading zero
      swap("\"completion_tokens\":-3", "\"completion_tokens\":18446744073709551615"),
      swap("\"latency_ms\":123.25", "\"latency_ms\":9007199254740993"), // reads back as another number
      swap("\"usage\":{", "\"usage\":{\"x\":1,"),                       // an unknown member
      line + " ",                                                       // trailing bytes
      line.substr(0, line.size() - 1),                                  // cut short
      swap("\"key\":\"" + k_key, "\"key\":\"" + std::string(63, '0') + "F"),
  };
  for (const std::string& b : bad) {
    CAPTURE(b);
    CHECK_FALSE(scan_line(b, version, "").has_value());
    CHECK_FALSE(parse_line(b, version, "").entry.has_value());
  }
  // Version and event times go together.
  CHECK_FALSE(scan_line(line, 2, "").has_value());
  auto [line2, version2] = line_of(entries()[1]);
  REQUIRE(version2 == 2);
  CHECK_FALSE(scan_line(line2, 1, "").has_value());
}

TEST_CASE("scan_line never accepts a damaged line the full parse rejects (seeded mutations)") {
  // Bytes that matter to JSON, to canonical form and to UTF-8.
  const std::string alphabet =
      std::string("\"\\/09.eE-+,:{}[] \tanulltrueAZ\x01\x7f") + "\xc3\xa9\xe6\x97\xa5";
  std::mt19937 rng(20261129);
  int accepted = 0, declined = 0;
  for (const Entry& e : entries()) {
    const auto [line, version] = line_of(e);
    for (int i = 0; i < 4000; ++i) {
      std::string m = line;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < edits && !m.empty(); ++k) {
        const std::size_t at = rng() % m.size();
        const char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
        case 0: m[at] = c; break;
        case 1: m.insert(m.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        default: m.erase(at, 1);
        }
      }
      auto fast = scan_line(m, version, "");
      auto full = parse_line(m, version, "");
      if (!fast) {
        ++declined;
        continue;
      }
      ++accepted;
      CAPTURE(m);
      REQUIRE_MESSAGE(full.entry.has_value(), full.reason);
      CHECK(same(*fast, *full.entry));
    }
  }
  // Both kinds happened: the mutations reach past the string contents.
  CHECK(accepted > 100);
  CHECK(declined > 100);
}

#include <doctest.h>

#include <string>
#include <vector>

#include <gate/model/stream.hpp>
#include <gate/net/sse.hpp>
#include <gate/util/text.hpp>

using namespace std::string_literals;
using gate::net::SseDecoder;
using gate::net::SseEvent;
using gate::net::SseLimits;

namespace {

std::vector<SseEvent> decode_whole(std::string_view s) {
  SseDecoder d;
  auto events = d.feed(s);
  CHECK_FALSE(d.finish());
  return events;
}

// Feeds `s` in pieces cut at `cuts` (ascending offsets).
std::vector<SseEvent> decode_cut(std::string_view s, const std::vector<std::size_t>& cuts, bool& pending) {
  SseDecoder d;
  std::vector<SseEvent> all;
  std::size_t at = 0;
  auto take = [&](std::vector<SseEvent> evs) { all.insert(all.end(), evs.begin(), evs.end()); };
  for (std::size_t cut : cuts) {
    take(d.feed(s.substr(at, cut - at)));
    at = cut;
  }
  take(d.feed(s.substr(at)));
  pending = d.finish();
  return all;
}

bool same(const std::vector<SseEvent>& a, const std::vector<SseEvent>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].event != b[i].event || a[i].data != b[i].data || a[i].id != b[i].id ||
        a[i].retry_ms != b[i].retry_ms)
      return false;
  return true;
}

// A BOM, CRLF, LF and a lone CR line ends, keep-alive comments, multi-line
// data, multi-byte UTF-8 (2, 3 and 4 bytes) and a retry field.
const std::string k_stream = "\xEF\xBB\xBF"
                             ": ping\r\n"
                             "event: greeting\r\n"
                             "id: 1\r\n"
                             "data: caf\xC3\xA9\r\n"
                             "data:  two spaces\r\n"
                             "\r\n"
                             ": ping\n"
                             "retry: 2500\n"
                             "data:\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80\r"
                             "data\r"
                             "\r"
                             "data: {\"last\":true}\r\n"
                             "\r\n";

void check_stream_events(const std::vector<SseEvent>& evs) {
  REQUIRE(evs.size() == 3);
  CHECK(evs[0].event == "greeting");
  CHECK(evs[0].data == "caf\xC3\xA9\n two spaces"); // only one space after the colon is dropped
  CHECK(evs[0].id == "1");
  CHECK_FALSE(evs[0].retry_ms.has_value());
  CHECK(evs[1].event == "message");
  CHECK(evs[1].data ==
        "\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80\n"); // "data" with no colon adds an empty line
  CHECK(evs[1].id == "1");                              // the last id persists
  CHECK(evs[1].retry_ms == 2500);
  CHECK(evs[2].data == "{\"last\":true}");
}

} // namespace

TEST_CASE("sse: the sample stream decodes as the spec says") { check_stream_events(decode_whole(k_stream)); }

TEST_CASE("rel-31: every split of the stream gives identical events") {
  auto whole = decode_whole(k_stream);
  check_stream_events(whole);
  // Two pieces, cut at every byte boundary (inside the BOM, CRLF pairs and
  // every UTF-8 sequence included).
  for (std::size_t cut = 0; cut <= k_stream.size(); ++cut) {
    bool pending = true;
    auto evs = decode_cut(k_stream, {cut}, pending);
    INFO("cut at byte " << cut);
    CHECK(same(evs, whole));
    CHECK_FALSE(pending);
  }
  // Byte by byte.
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < k_stream.size(); ++i)
    cuts.push_back(i);
  bool pending = true;
  CHECK(same(decode_cut(k_stream, cuts, pending), whole));
  CHECK_FALSE(pending);
}

TEST_CASE("rel-31: a line over the cap is a clear error") {
  SseDecoder d;
  std::string exact = "data: " + std::string(1024 * 1024 - 6, 'x'); // exactly 1 MiB: accepted
  auto evs = d.feed(exact + "\n\n");
  REQUIRE(evs.size() == 1);
  CHECK(evs[0].data.size() == 1024 * 1024 - 6);
  CHECK_FALSE(d.failed());

  // One byte more, arriving in two pieces, and no line end at all.
  evs = d.feed("data: ok\n\n" + exact);
  CHECK(evs.size() == 1);
  CHECK_FALSE(d.failed());
  evs = d.feed("y");
  CHECK(evs.empty());
  REQUIRE(d.failed());
  CHECK(d.error() == "SSE line exceeds 1048576 bytes");
  // A failed decoder stays failed.
  CHECK(d.feed("\n\ndata: more\n\n").empty());
  CHECK(d.failed());
}

TEST_CASE("sse: an event over the event cap is a clear error") {
  SseLimits limits;
  limits.max_line_bytes = 16;
  limits.max_event_bytes = 20;
  SseDecoder d(limits);
  // "0123456789\n" is 11 bytes of data; twice is 22 > 20.
  auto evs = d.feed("data: 0123456789\ndata: 0123456789\n\n");
  CHECK(evs.empty());
  CHECK(d.error() == "SSE event exceeds 20 bytes");
}

TEST_CASE("sse: fields, comments and dispatch rules") {
  auto evs = decode_whole("event: a\n"
                          "\n" // no data: nothing dispatched, type reset
                          "data: x\n"
                          "retry: 12a\n" // not only digits: ignored
                          "retry\n"      // empty: ignored
                          "unknown: field\n"
                          ":comment with: colon\n"
                          "\n"
                          "id: \n" // an empty id resets the last id
                          "data: y\n"
                          "data: \n"
                          "\n");
  REQUIRE(evs.size() == 2);
  CHECK(evs[0].event == "message");
  CHECK(evs[0].data == "x");
  CHECK_FALSE(evs[0].retry_ms.has_value());
  CHECK(evs[1].data == "y\n");
  CHECK(evs[1].id == "");

  evs =
      decode_whole("id: 7\ndata: a\n\nid: bad\0id\ndata: b\n\nretry: 99999999999999999999999\ndata: c\n\n"s);
  REQUIRE(evs.size() == 3);
  CHECK(evs[0].id == "7");
  CHECK(evs[1].id == "7");                  // an id holding NUL is ignored
  CHECK_FALSE(evs[2].retry_ms.has_value()); // too large for 64 bits: ignored, not wrapped
}

TEST_CASE("sse: a BOM only at the very start is dropped") {
  auto evs = decode_whole("data: a\n\n\xEF\xBB\xBF"
                          "data: b\n\n");
  REQUIRE(evs.size() == 1); // the second BOM starts the field name "\uFEFFdata"
  CHECK(evs[0].data == "a");
  // A partial BOM is not a BOM: it becomes U+FFFD in the field name.
  evs = decode_whole("\xEF\xBB"
                     "data: a\n\n");
  CHECK(evs.empty());
}

TEST_CASE("sse: finish reports a cut stream") {
  SseDecoder d;
  d.feed("data: complete\n\ndata: partial\n");
  CHECK(d.finish());
  SseDecoder cut_line;
  cut_line.feed("data: par");
  CHECK(cut_line.finish());
  SseDecoder clean;
  CHECK(clean.feed("data: done\r\n\r\n").size() == 1);
  CHECK_FALSE(clean.finish());
  SseDecoder empty;
  CHECK_FALSE(empty.finish());
}

TEST_CASE("sse: invalid UTF-8 is replaced per maximal subpart") {
  auto replace_invalid_utf8 = [](std::string_view s) {
    return gate::to_valid_utf8(s, gate::Utf8Repair::maximal_subpart);
  };
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(replace_invalid_utf8("ok \xC3\xA9") == "ok \xC3\xA9");
  CHECK(replace_invalid_utf8("\xC3(") == fffd + "(");
  CHECK(replace_invalid_utf8("\xE0\x80") == fffd + fffd);            // overlong lead, then a stray byte
  CHECK(replace_invalid_utf8("\xED\xA0\x80") == fffd + fffd + fffd); // a surrogate
  CHECK(replace_invalid_utf8("\xF0\x9F\x98") == fffd);               // truncated 4-byte sequence
  CHECK(replace_invalid_utf8("\xF0\x9F\x98!") == fffd + "!");
  CHECK(replace_invalid_utf8("\xFF") == fffd);
  auto evs = decode_whole("data: \xF0\x9F\x98\n\n");
  REQUIRE(evs.size() == 1);
  CHECK(evs[0].data == fffd);
}

TEST_CASE("sse + stream: raw Anthropic bytes fed byte by byte assemble to the plain answer") {
  const std::string bytes =
      "event: message_start\r\n"
      "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":"
      "\"assistant\",\"content\":[],\"model\":\"claude-x\",\"stop_reason\":null,\"usage\":{\"input_tokens\":"
      "12,\"output_tokens\":1}}}\r\n\r\n"
      "event: ping\r\ndata: {\"type\":\"ping\"}\r\n\r\n"
      "event: content_block_start\r\n"
      "data: "
      "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"
      "\r\n\r\n"
      "event: content_block_delta\r\n"
      "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"
      "\"Bonjour, caf\xC3\xA9\"}}\r\n\r\n"
      "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\n"
      "event: message_delta\r\n"
      "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"
      "\"usage\":{\"output_tokens\":5}}\r\n\r\n"
      "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";
  SseDecoder d;
  gate::model::StreamAssembler a("anthropic", 100);
  double now = 100;
  for (char c : bytes)
    for (const auto& e : d.feed(std::string_view(&c, 1)))
      a.on_event(e.event, e.data, now += 10);
  a.finish(d.finish());
  REQUIRE(a.cacheable());
  // The text delta is the fourth event: 100 + 4 * 10 = 140, so 40 ms.
  CHECK(a.result().ttft_ms == 40);
  gate::model::ApiResponse head;
  head.status = 200;
  auto reply =
      gate::model::parse_response("anthropic", gate::model::to_non_streaming("anthropic", a.result(), head));
  CHECK(reply.bucket == gate::model::Bucket::none);
  CHECK(reply.text == "Bonjour, caf\xC3\xA9");
  CHECK(reply.finish_reason == "end_turn");
  REQUIRE(reply.usage.has_value());
  CHECK(reply.usage->prompt_tokens == 12);
  CHECK(reply.usage->completion_tokens == 5);
}

#include <doctest.h>

#include <string>
#include <vector>

#include <gate/proxy/pacing.hpp>
#include <gate/util/error.hpp>

using namespace gate::proxy;

namespace {

std::vector<std::size_t> ends_in_pieces(const std::string& body, std::size_t piece) {
  std::vector<std::size_t> out;
  EventScanner s;
  for (std::size_t at = 0; at < body.size(); at += piece)
    s.scan(std::string_view(body).substr(at, piece), [&](std::size_t end) { out.push_back(at + end); });
  return out;
}

} // namespace

TEST_CASE("--replay-timing: none, recorded, scaled:X and nothing else") {
  CHECK(parse_replay_timing("none").scale == 0);
  CHECK(parse_replay_timing("recorded").scale == 1);
  CHECK(parse_replay_timing("scaled:0.5").scale == 0.5);
  CHECK(parse_replay_timing("scaled:3").scale == 3);
  CHECK(to_string(parse_replay_timing("none")) == "none");
  CHECK(to_string(parse_replay_timing("scaled:1")) == "recorded");
  CHECK(to_string(parse_replay_timing("scaled:0.25")) == "scaled:0.25");
  for (const char* bad : {"", "Recorded", "scaled", "scaled:", "scaled:0", "scaled:-1", "scaled:x",
                          "scaled:1x", "scaled:nan", "scaled:inf", "scaled:1001", "fast"}) {
    CAPTURE(bad);
    try {
      parse_replay_timing(bad);
      FAIL("accepted");
    } catch (const gate::Error& e) {
      CHECK(e.code() == gate::Exit::bad_input);
      CHECK(std::string(e.what()).find("--replay-timing: expected none, recorded or scaled:X") == 0);
    }
  }
}

TEST_CASE("event ends: a blank line ends an event, LF or CRLF, whatever the pieces") {
  // "data: a\n\n" ends at 9; ": c\r\n\r\n" (a comment event) at 9 + 7 = 16;
  // "data: b\n" + "\n" at 16 + 9 = 25; the trailing "data: x" has no end.
  const std::string body = "data: a\n\n: c\r\n\r\ndata: b\n\ndata: x";
  const std::vector<std::size_t> want = {9, 16, 25};
  CHECK(event_ends(body) == want);
  for (std::size_t piece : {1u, 2u, 3u, 7u, 100u}) {
    CAPTURE(piece);
    CHECK(ends_in_pieces(body, piece) == want);
  }
  CHECK(event_ends("").empty());
  CHECK(event_ends("data: a\ndata: b\n").empty()); // one event, not yet ended
  CHECK(event_ends("\n") == std::vector<std::size_t>{1});
}

TEST_CASE("event clock: each event takes the time of the piece that ended it") {
  EventClock c;
  c.feed("data: a\n", 5);        // no end yet
  c.feed("\ndata: b", 12);       // event 0 ends here
  c.feed("\n\ndata: c\n\n", 30); // events 1 and 2
  CHECK(c.ms == std::vector<double>{12, 30, 30});
}

TEST_CASE("plan_replay: none is at once, a plain answer waits its latency, a stream paces its events") {
  const std::string plain = R"({"id":"x"})";
  CHECK(plan_replay(plain, {}, 120, {0}).empty());
  auto one = plan_replay(plain, {}, 120, {1});
  REQUIRE(one.size() == 1);
  CHECK(one[0].end == plain.size());
  CHECK(one[0].at_ms == 120);
  CHECK(plan_replay(plain, {}, 120, {0.5})[0].at_ms == 60);
  CHECK(plan_replay(plain, {}, -3, {1})[0].at_ms == 0);

  // Three events ending at 9, 18, 32; recorded at 10, 40, 90 ms; latency 95.
  const std::string stream = "data: a\n\ndata: b\n\ndata: [DONE]\n\n";
  auto p = plan_replay(stream, {10, 40, 90}, 95, {1});
  REQUIRE(p.size() == 3);
  CHECK(p[0].end == 9);
  CHECK(p[0].at_ms == 10);
  CHECK(p[1].end == 18);
  CHECK(p[1].at_ms == 40);
  CHECK(p[2].end == 32);
  CHECK(p[2].at_ms == 90);
  auto half = plan_replay(stream, {10, 40, 90}, 95, {0.5});
  CHECK(half[2].at_ms == 45);
  CHECK(plan_replay(stream, {10, 40, 90}, 95, {0}).empty());

  // Bytes after the last event go at the latency; fewer times than events:
  // the extra events take the last time; times never go backwards.
  auto tail = plan_replay(stream + "data: x", {10, 40}, 95, {1});
  REQUIRE(tail.size() == 4);
  CHECK(tail[2].at_ms == 40);
  CHECK(tail[3].end == stream.size() + 7);
  CHECK(tail[3].at_ms == 95);
  auto late = plan_replay(stream + "data: x", {10, 40, 90}, 50, {1});
  CHECK(late[3].at_ms == 90);
}

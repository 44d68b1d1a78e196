#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gate::proxy {

// How a replayed answer is timed (`gate proxy --replay-timing`): `scale` 0
// sends it at once, 1 as it was recorded, X (scaled:X) with every recorded
// time multiplied by X, so 0.5 replays twice as fast.
struct ReplayTiming {
  double scale = 0;
};

// "none", "recorded" or "scaled:X" with X a finite number > 0. Throws
// Error(bad_input) naming `what` (the option) and the accepted forms.
ReplayTiming parse_replay_timing(std::string_view text, std::string_view what = "--replay-timing");
std::string to_string(ReplayTiming t);

// Finds the ends of server-sent events: an event ends with a blank line.
// Lines end in "\n" or "\r\n" (a lone "\r" is not treated as a line end).
// The state carries over from one piece to the next, so a stream read in
// pieces of any size finds the same ends as the whole body: recording
// (which sees the pieces as they arrive) and replay (which splits the
// stored body) therefore agree on what the i-th event is.
struct EventScanner {
  bool line_empty = true; // nothing but '\r' since the last line end

  // Calls `at(offset)` with the offset in `piece` just past each event's
  // terminating "\n".
  template <class F> void scan(std::string_view piece, F&& at) {
    for (std::size_t i = 0; i < piece.size(); ++i) {
      const char c = piece[i];
      if (c == '\n') {
        if (line_empty) at(i + 1);
        line_empty = true;
      } else if (c != '\r') {
        line_empty = false;
      }
    }
  }
};

// The offsets just past each event's end in a whole body.
std::vector<std::size_t> event_ends(std::string_view body);

// When each event of a streamed answer ended, as the pieces arrive: the
// time of the piece that held an event's end is that event's time.
struct EventClock {
  EventScanner scanner;
  std::vector<double> ms; // one per event ended so far

  void feed(std::string_view piece, double at_ms);
};

// One part of a paced reply: body[end of the previous step, end) is sent
// `at_ms` after the request arrived.
struct Step {
  std::size_t end = 0;
  double at_ms = 0;
};

// How to send a recorded answer of `body_size` bytes under `t`. Empty under
// "none" (send at once). Without event times, one step: the whole body at
// its recorded latency. With them (a stream), one step per event of `body`
// at its recorded time, any bytes after the last event at the latency; an
// event beyond the recorded times takes the last one. Times never decrease.
std::vector<Step> plan_replay(std::string_view body, const std::vector<double>& event_ms, double latency_ms,
                              ReplayTiming t);

} // namespace gate::proxy

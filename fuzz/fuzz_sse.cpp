// SSE decoder: any bytes, fed whole or split at two points, or one byte at
// a time, give the same events, the same failure and the same end-of-stream
// answer (RELIABILITY.md 31); event type and data are valid UTF-8. The first
// two bytes pick the limits (small ones, so the over-limit paths are
// reached) and the split points; the rest is the stream.
#include <string>
#include <vector>

#include <gate/net/sse.hpp>
#include <gate/util/text.hpp>

#include "fuzz_support.hpp"

namespace {

struct Outcome {
  std::vector<gate::net::SseEvent> events;
  std::string error;
  bool cut = false;
};

bool same_events(const std::vector<gate::net::SseEvent>& a, const std::vector<gate::net::SseEvent>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].event != b[i].event || a[i].data != b[i].data || a[i].id != b[i].id ||
        a[i].retry_ms != b[i].retry_ms)
      return false;
  return true;
}

// Feeds `stream` in the pieces that `cuts` (ascending offsets) delimit.
Outcome decode(std::string_view stream, const std::vector<std::size_t>& cuts, gate::net::SseLimits limits) {
  gate::net::SseDecoder d(limits);
  Outcome o;
  std::size_t at = 0;
  auto take = [&](std::size_t end) {
    for (auto& e : d.feed(stream.substr(at, end - at)))
      o.events.push_back(std::move(e));
    at = end;
  };
  for (std::size_t c : cuts)
    take(c);
  take(stream.size());
  o.cut = d.finish();
  o.error = d.error();
  return o;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  gate::net::SseLimits limits;
  if (data[0] & 1) limits = {16 + (data[0] >> 1) % 64u, 64 + (data[0] >> 1) * 4u};
  const std::string_view stream = gate::fuzz::as_text(data + 2, size - 2);
  const std::size_t n = stream.size();

  const Outcome whole = decode(stream, {}, limits);
  const std::size_t a = n == 0 ? 0 : data[1] % (n + 1), b = n == 0 ? 0 : (data[1] * 7u + 3) % (n + 1);
  const Outcome split = decode(stream, {std::min(a, b), std::max(a, b)}, limits);
  if (!same_events(whole.events, split.events)) gate::fuzz::violated("a split changes the events");
  if (whole.error != split.error || whole.cut != split.cut)
    gate::fuzz::violated("a split changes the outcome");
  if (n <= 512) {
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < n; ++i)
      every.push_back(i);
    const Outcome bytes = decode(stream, every, limits);
    if (!same_events(whole.events, bytes.events))
      gate::fuzz::violated("byte-by-byte feeding changes the events");
    if (whole.error != bytes.error || whole.cut != bytes.cut)
      gate::fuzz::violated("byte-by-byte feeding changes the outcome");
  }
  for (const auto& e : whole.events) {
    if (!gate::valid_utf8(e.event) || !gate::valid_utf8(e.data) || !gate::valid_utf8(e.id))
      gate::fuzz::violated("an event carries invalid UTF-8");
    // The limit counts the event type sent, not the "message" put in when
    // none was.
    const std::size_t type = e.event == "message" ? 0 : e.event.size();
    if (e.data.size() + type > limits.max_event_bytes) gate::fuzz::violated("an event over the limit");
  }
  return 0;
}

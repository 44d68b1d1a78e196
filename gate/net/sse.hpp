#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gate::net {

// One dispatched server-sent event (WHATWG HTML, "Server-sent events",
// interpretation of an event stream):
//
//   stream  = [ BOM ] *event *( comment / field ) EOF
//   event   = *( comment / field ) end-of-line
//   comment = ":" *any-char end-of-line
//   field   = name [ ":" [ " " ] value ] end-of-line
//   end-of-line = CRLF / LF / CR
//
// Invalid UTF-8 in a line is replaced by U+FFFD, as the spec's UTF-8 decode
// would do.
struct SseEvent {
  std::string event = "message";        // the `event` field, "message" when absent
  std::string data;                     // `data` lines joined with "\n"
  std::string id;                       // the last event id in effect (persists across events)
  std::optional<std::int64_t> retry_ms; // the reconnection time in effect, if any was sent
};

struct SseLimits {
  std::size_t max_line_bytes = 1024 * 1024;       // one line, without its end-of-line
  std::size_t max_event_bytes = 16 * 1024 * 1024; // data plus event type of one event
};

// Incremental decoder: bytes may arrive split anywhere (inside a UTF-8
// sequence, between CR and LF). A line or event over its limit puts the
// decoder into a failed state ("SSE line exceeds 1048576 bytes") and every
// later byte is ignored, so memory stays bounded by the limits.
class SseDecoder {
public:
  explicit SseDecoder(SseLimits limits = {});

  // Decodes `bytes` and returns the events they completed, in order. Events
  // completed before a limit was hit in the same call are still returned.
  std::vector<SseEvent> feed(std::string_view bytes);
  // End of stream. The spec discards an event that has no closing blank
  // line; returns true when such a partial event (or a partial line) was
  // pending, i.e. the stream was cut short.
  bool finish();

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  std::optional<std::int64_t> retry_ms() const { return retry_ms_; }

private:
  void take_line(std::vector<SseEvent>& out);
  void process_field(std::string_view name, std::string_view value);
  void dispatch(std::vector<SseEvent>& out);
  bool append_line(std::string_view piece);
  void fail(const std::string& message);

  SseLimits limits_;
  std::string line_;
  std::string data_;
  std::string event_type_;
  std::string last_id_;
  std::optional<std::int64_t> retry_ms_;
  std::string bom_probe_; // the first bytes, until a BOM is ruled in or out
  bool bom_done_ = false;
  bool after_cr_ = false; // an LF right after a CR ends nothing
  std::string error_;
};

} // namespace gate::net

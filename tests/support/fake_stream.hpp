#pragma once

// Internal to the fake upstream: answers as server-sent events, in each
// provider's chunk format, for requests that ask to stream.

#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace gate::testing {

struct StreamSpec {
  bool anthropic = false;
  bool responses = false; // OpenAI's Responses API
  std::string id, model, answer;
  std::int64_t prompt = 0, completion = 0;
  bool include_usage = false; // OpenAI: send the usage chunk
  std::string ending;         // "" (complete), "error" (an error event) or "cut" (no end marker)
  int error_status = 500;     // the error event's type follows this status
  bool azure = false;         // OpenAI chat: Azure's prompt-filter chunk first (no id, no choices)
};

// The answer in a few pieces, each ending after a space, so streams carry
// several deltas.
std::vector<std::string> pieces(const std::string& answer);
// One server-sent event: "event: <event>" (none when "") and its data.
std::string sse(const std::string& event, const boost::json::value& data);

// One OpenAI chat.completion.chunk event of `s`'s stream: choice 0 with
// `delta` and `finish` (null until the last), "usage": null when
// include_usage asks for a usage chunk at the end.
std::string chat_chunk(const StreamSpec& s, boost::json::object delta, boost::json::value finish);

// The whole event stream, split into a few text deltas, with a comment and
// (Anthropic) a ping among the events as real providers send them.
std::string stream_body(const StreamSpec& s);

// The Responses API (in this file too): the completed response object, and its event stream
// (created, output item, text deltas, completed; or an error event / a cut).
boost::json::object responses_object(const StreamSpec& s);
std::string responses_stream_body(const StreamSpec& s);

} // namespace gate::testing

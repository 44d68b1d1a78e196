#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gate/model/api.hpp>

namespace gate::model {

// Where a streamed response stands.
enum class StreamState {
  open,       // events are still arriving
  complete,   // the provider's end marker arrived: OpenAI "data: [DONE]", Anthropic message_stop
  incomplete, // the stream ended without that marker: the attempt failed, nothing may be cached
  failed,     // an error event arrived mid-stream (after a 200): the attempt failed
};

// A tool call as it was streamed: the arguments as JSON text, pieces joined.
struct StreamToolCall {
  std::string id;
  std::string name;
  std::string arguments;
};

// What a streamed response added up to.
struct StreamResult {
  StreamState state = StreamState::open;
  std::string id;          // the provider's response id, when it sent one
  std::string model;       // the model that answered, when it said so
  std::string text;        // all text deltas, in order
  bool text_block = false; // a text block or text delta was seen (even if empty)
  // OpenAI chat: the refusal deltas joined (choices[0].delta.refusal), set
  // when any came, even empty; the model refused and these are its words.
  std::optional<std::string> refusal;
  std::vector<StreamToolCall> tool_calls; // in the provider's index order
  std::string finish_reason;              // OpenAI finish_reason, Anthropic stop_reason
  std::optional<Usage> usage;             // absent when the stream did not report it
  // The stream completed but carried no usage (OpenAI without the
  // include_usage chunk): the token count is unknown, not zero.
  bool usage_missing = false;
  // Responses API: the final response as response.completed carried it
  // (canonical JSON), which is the non-streamed body.
  std::string final_body;
  std::optional<double> ttft_ms; // time to the first generated token
  Bucket bucket = Bucket::none;  // failed: the error's bucket; incomplete: connection
  int error_status = 0;          // failed: the HTTP status the error event named (529 overloaded), else 0
  std::string error;             // short, redacted; empty when complete
};

// Builds a StreamResult from the SSE events of one streamed response, for
// dialect "openai" (chat.completion.chunk objects, then "[DONE]"),
// "responses" (response.* events, then response.completed) or "anthropic"
// (message_start, content_block_*, message_delta, message_stop, ping, error). A class because the events
// arrive one at a time.
class StreamAssembler {
public:
  // `start_ms` is when the request was sent, on the clock the caller later
  // passes to on_event (any monotonic milliseconds).
  StreamAssembler(std::string provider, double start_ms);

  // One dispatched SSE event: its type ("message" when unnamed) and data.
  void on_event(std::string_view event, std::string_view data, double now_ms);
  // End of the byte stream; `cut` is what the SSE decoder's finish()
  // returned (a partial event was pending).
  void finish(bool cut);

  const StreamResult& result() const { return result_; }
  // Only a complete stream may be stored in the cache.
  bool cacheable() const { return result_.state == StreamState::complete; }

private:
  struct Block {
    std::string type; // text | tool_use | anything else Anthropic sends
    StreamToolCall call;
    std::string initial_input; // canonical content_block_start input
  };

  void on_openai(std::string_view event, std::string_view data, double now_ms);
  void on_anthropic(std::string_view event, std::string_view data, double now_ms);
  void on_responses(std::string_view event, std::string_view data, double now_ms); // responses.cpp
  void fail(Bucket b, std::string_view message);
  void first_token(double now_ms);
  void collect_tool_calls();

  std::string provider_;
  double start_ms_;
  StreamResult result_;
  std::map<std::int64_t, Block> blocks_; // by the provider's index
  std::optional<std::int64_t> input_tokens_;
  std::optional<std::int64_t> cache_write_tokens_, cache_read_tokens_; // Anthropic's prompt cache
  std::optional<std::int64_t> output_tokens_;
};

// The bucket a mid-stream error belongs in, from its type/code and message
// (OpenAI error.type / error.code, Anthropic error.type).
Bucket stream_error_bucket(std::string_view type, std::string_view code, std::string_view message);

// The response the provider would have sent without streaming, so that the
// cache can store a streamed call and parse_response can read it. `head`
// supplies status, headers and latency; content-type becomes
// application/json. A complete stream gives the provider's normal success
// body; a failed or incomplete one gives a response that parse_response
// maps to the same bucket (an HTTP error body, or status 0 with
// "connection: ..." for a cut stream) — never one to cache.
ApiResponse to_non_streaming(const std::string& provider, const StreamResult& r, const ApiResponse& head);

// A canonical request body with streaming turned on: "stream": true, and for
// OpenAI chat "stream_options": {"include_usage": true} so usage is reported
// (the Responses API reports it in response.completed and refuses that option).
std::string with_streaming(const std::string& provider, std::string_view body);

} // namespace gate::model

#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>

#include <gate/config/config.hpp>

namespace gate::model {

struct ChatMessage {
  std::string role;
  std::string content;
};

// One API call as gate sends it: the endpoint path below the base URL and
// the canonical JSON body. The client adds host, auth and content headers.
struct ApiCall {
  std::string provider;        // the dialect (dialect() below): openai | responses | anthropic
  std::string path;            // /chat/completions, /responses or /v1/messages
  std::string body;            // canonical JSON
  bool stream = false;         // the body asks for SSE (with_streaming); the client reads events
  std::int64_t max_tokens = 0; // the body's completion limit, for the token budget estimate

  // What the proxy (proxy/server.cpp) forwards for an agent needs besides:
  std::string method = "POST"; // or "GET", sent without a body
  // Request headers the caller passes on (lowercase; anthropic-version,
  // anthropic-beta), replacing the client's default of the same name.
  std::vector<std::pair<std::string, std::string>> headers = {};
  // The response body as it came (redacted), a stream's events not
  // assembled: an agent's SDK reads them itself.
  bool pass_through = false;
  // When set, sees each piece of an attempt's body as it arrives (`attempt`
  // counts from 0; `ms` since that attempt was sent), before redaction:
  // for timing a stream, never for keeping its text.
  std::function<void(int attempt, std::string_view piece, double ms)> on_body = {};
  // When set, asked before each attempt and every 50 ms during one: true
  // gives the call up (status 0, "connection: ..."), no retry.
  std::function<bool()> abandoned = {};
};

struct Usage {
  std::int64_t prompt_tokens = 0; // the whole prompt the model read, cached parts included
  std::int64_t completion_tokens = 0;
  // Of prompt_tokens, those the provider's prompt cache served (OpenAI's
  // cached_tokens, Anthropic's cache_read_input_tokens) and those written to
  // it (Anthropic's cache_creation_input_tokens); absent when not reported.
  std::optional<std::int64_t> cache_read_tokens = {}, cache_write_tokens = {};
};

// One attempt of a call, as the client saw it.
struct AttemptRecord {
  int status = 0;             // HTTP status; 0: no answer; a failed stream: its error's status
  std::string bucket;         // to_string(Bucket) of the attempt's response; "" for an answer
  double wait_ms = 0;         // waited before it: backoff, server delay and the shared limiter
  double latency_ms = 0;      // request sent to response read
  std::optional<Usage> usage; // what the attempt's response reported, if anything
};

// What came back over the wire, before interpretation. A streamed answer
// comes back assembled into the provider's non-streamed form
// (to_non_streaming in stream.hpp), so everything downstream, the cache
// included, sees one shape; only a call with ApiCall::pass_through gets
// the bytes as they came.
struct ApiResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers; // lowercase names
  std::string body;
  double latency_ms = 0;
  std::optional<double> ttft_ms;          // streamed: request sent to first token, last attempt
  std::vector<AttemptRecord> attempt_log; // every attempt in order, this response last; empty if not sent
  // Why the client stopped retrying a retryable answer ("" when it did not
  // stop early): a Retry-After above model.max_retry_after_s, or a wait that
  // the rate-limit budget cannot hold. Part of the run's error, never stored.
  std::string gave_up;
};

// Infrastructure error buckets (METRICS.md "Errors and tokens").
// clang-format off
enum class Bucket {
  none, auth, not_found, rate_limit, quota, context_length, timeout, connection, server,
  bad_response, tool_call, agent, check
};
// clang-format on
std::string to_string(Bucket b);
std::optional<Bucket> parse_bucket(const std::string& s);

struct ToolCall {
  std::string name;
  // Canonical JSON (json::canonical), for checks on the arguments; the text
  // as the model wrote it when that is not valid JSON (the call is still
  // the model's answer, for the checks to judge).
  std::string arguments;
  std::string arguments_sha256; // of `arguments`
};

// A response interpreted: the answer, or the error bucket when no answer
// could be read. Whatever the model produced is an answer (docs/metrics.md
// "Measured runs"): a refusal, a cut-off or filtered finish, a tool call
// whose arguments are not JSON.
struct Reply {
  std::string text; // a refusal's words too
  std::string finish_reason;
  std::optional<Usage> usage; // absent when the provider did not report it
  std::vector<ToolCall> tool_calls;
  // The provider says the model refused: OpenAI chat's message.refusal, a
  // Responses `refusal` content part, Anthropic's stop_reason "refusal".
  bool refused = false;
  Bucket bucket = Bucket::none;
  std::string error; // short, redacted message when bucket != none
};

// The request and response shape a model config speaks, the name
// parse_response, the stream code and the cache key take: "openai" (Chat
// Completions), "responses" (OpenAI's Responses API) or "anthropic".
std::string dialect(const config::ModelConfig& m);

// The sampling and length settings a request of this config carries, as
// they go on the wire: what the request builders send and what the route
// records, so that route hygiene compares real settings. A field the
// provider or the model family does not take is absent: OpenAI reasoning
// models (gpt-5, o-series) get neither temperature nor top_p, and their
// limit as max_completion_tokens; the Responses API has no seed and names
// its limit max_output_tokens; Anthropic has no seed, requires max_tokens
// (1024 when the config has none) and takes at most one of temperature and
// top_p on Claude 4.5 and later (temperature kept).
struct WireSettings {
  std::optional<double> temperature, top_p;
  std::optional<std::int64_t> seed, max_tokens;
  std::string max_tokens_field; // the body's name for max_tokens
};
WireSettings wire_settings(const config::ModelConfig& m);
// Writes the settings into a request body.
void put_settings(const WireSettings& w, boost::json::object& body);

// Builds the request body for a case's messages under the model config
// (model name, sampling, max tokens). Returns canonical JSON.
std::string build_request(const config::ModelConfig& m, const std::string& system,
                          const std::vector<ChatMessage>& messages);
// The endpoint path for the provider, below the base URL: with Azure's
// model.api_version, the deployment and the api-version query too, so
// that both are part of the cache key.
std::string endpoint_path(const config::ModelConfig& m);
// The headers every call to the provider carries, the key among them:
// Anthropic's x-api-key and anthropic-version, Azure's api-key, else
// Authorization: Bearer. No credential when `key` is empty (a server that
// takes none, model.api_key_env: null).
std::vector<std::pair<std::string, std::string>> provider_headers(const config::ModelConfig& m,
                                                                  const std::string& key);
// The request header names that carry a key (lowercase), in any dialect.
bool is_credential_header(std::string_view name);
// Error text as reports and terminal lines show it: redacted, on one line,
// at most 200 bytes (UTF-8 safe).
std::string short_error(std::string_view text);
// Interprets a response of any dialect, success or error, into a Reply.
Reply parse_response(const std::string& provider, const ApiResponse& r);

// Sends calls upstream. Implementations: net::make_http_client (HTTPS, or
// plain HTTP to loopback and listed hosts) and fakes in tests.
// `send` may be called from many threads at once.
class ModelClient {
public:
  virtual ~ModelClient() = default;
  // Returns the final response after the client's retry policy; `attempts`
  // is set to the number of attempts made (>= 1). Throws Error(cannot_run)
  // only for conditions that make every further call pointless (no key,
  // unsupported URL scheme).
  virtual ApiResponse send(const ApiCall& call, int& attempts) = 0;
  // How many workers will call send at once: a client that adapts its
  // concurrency (on 429) starts from this. Called before the first send.
  virtual void expect_workers(int workers) { (void)workers; }
};

} // namespace gate::model

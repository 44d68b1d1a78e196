#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

// A small OpenAI-compatible server for tests and benchmarks, on 127.0.0.1
// with a port it picks. Deterministic: the answer to a request depends only
// on its last user message (and, for a rule with `body`, on the request
// body) and on how many times that exact request body was answered before
// (the occurrence), so k identical requests get k answers. Requests that
// drew a fault do not count, so a retried request gets the answer it would
// have got without the fault.
//
// A rule whose finish_reason is "content_filter" and whose answer is ""
// answers with content null, as Azure's filter does.
//
// Endpoints: POST .../chat/completions (OpenAI chat.completion), POST
// .../responses (OpenAI Responses API, output_text only), POST
// .../v1/messages (Anthropic message), GET .../models (one model). A body
// with "stream": true gets the same answer as server-sent events, in the
// provider's chunk format (OpenAI's usage chunk only with
// stream_options.include_usage), split into a few deltas. Usage is
// deterministic: prompt = words in all message contents (and the Anthropic
// system prompt) + 3, completion = words in the answer + 1.
namespace gate::testing {

struct Rule {
  std::string match;                // substring of the last user message; "" matches all
  std::vector<std::string> answers; // answer = answers[occurrence % size]
  // OpenAI, not streamed: the message also carries these function calls
  // (name, arguments as JSON text), and the finish reason is "tool_calls".
  std::vector<std::pair<std::string, std::string>> tool_calls = {};
  std::string finish_reason = {}; // OpenAI, not streamed: instead of "stop" (or "tool_calls")
  // When set, the answer comes in this shape, plain and streamed, in every
  // API: "refusal", "length", "content_filter" or "bad_arguments"
  // (fake_answers.hpp); tool_calls and finish_reason are not used.
  std::string shape = {};
  // When set, the rule also needs this substring in the raw request body
  // (a system prompt, an instruction), so that a prompt edit can change
  // the answers to the same question.
  std::string body = {};
};

struct Fault {
  std::string match; // substring of the last user message; "" matches all
  int status = 500;
  int times = 1;    // the first `times` matching requests get it
  std::string body; // "" = a generic OpenAI-style error body for the status
  std::vector<std::pair<std::string, std::string>> headers;
  bool close_without_response = false; // drop the connection instead
  // For streamed requests only (a fault with it set skips the others): a
  // 200 event stream that carries half the answer, then "error" (an error
  // event, with `status`'s error type) or "cut" (ends without the end
  // marker).
  std::string stream = {};
  // When > 0: a storm. Every matching request within this many ms of the
  // first one gets the fault (`times` is ignored); later ones do not.
  double during_ms = 0;
  // When > 0: each matching request gets the fault with this chance, drawn
  // from the script's seeded generator (`times` is ignored), as a provider's
  // scattered 429s come.
  double probability = 0;
};

struct Script {
  std::vector<Rule> rules;   // first match wins; no match → "echo: <message>"
  std::vector<Fault> faults; // checked before rules
  double latency_ms = 0;     // added before every response
  // When > 0, a streamed answer goes out one server-sent event at a time
  // (chunked), the first after latency_ms and each next this much later.
  // Plain HTTP only: over TLS the whole stream comes at its last event's time.
  double event_gap_ms = 0;
  // When set, only the routes right below this prefix exist ("/v1":
  // /v1/chat/completions answers, /chat/completions and
  // /v1/v1/chat/completions are 404s), as on a real provider.
  std::string prefix = {};
  // When not empty, the models GET .../models lists; a completion for any
  // other model is a 404 model_not_found. Empty: one model, any name accepted.
  std::vector<std::string> models = {};
  // Seeds the draws of faults with a probability: the same seed and request
  // order give the same faults.
  std::uint64_t seed = 1;
  // When set, the server is Azure OpenAI (fake_flavors.hpp): the `api-key`
  // header is required; deployment URLs /openai/deployments/{d}/chat/completions
  // and /openai/responses need ?api-version=<this>, {d} one of `models` when
  // set; /openai/v1/... needs none; answers carry Azure's filter results.
  std::string azure_api_version = {};
  // Compatible servers' quirks: answers and streams without usage (even
  // when include_usage is asked for); a 400 for a body that sets "seed".
  bool no_usage = false;
  bool reject_seed = false;
  // The shape of every error body: "" (OpenAI), "azure", "gemini" (a JSON
  // array) or "ollama" ({"error": "text"}); see fake_flavors.hpp.
  std::string error_style = {};
  // The served model's documented refusals of request fields
  // (fake_flavors.hpp provider_refusal), with the provider's own 400 body:
  // "" none; "openai-reasoning" (gpt-5, o-series, under any model name, as
  // an Azure deployment can be); "claude-4.5" (Claude Sonnet 4.5 and later).
  std::string enforce = {};
  // When > 0, a non-streamed answer's usage says this many of its prompt
  // tokens came from the provider's prompt cache: OpenAI's
  // prompt_tokens_details.cached_tokens (of prompt_tokens), Anthropic's
  // cache_read_input_tokens (input_tokens is then the rest, as Anthropic
  // counts them) with cache_creation_input_tokens 0.
  std::int64_t cached_prompt_tokens = 0;
};

// The scripts tests of other providers start from: Azure serving
// `deployments` at `api_version` with its error shapes; and the fault of
// Google's OpenAI-compatible endpoint for a bad key (a 400 whose body is
// an array of errors), on every request.
Script azure_script(const std::string& api_version, const std::vector<std::string>& deployments);
Fault gemini_bad_key();

// Reads a script from JSON: {"latency_ms": n, "event_gap_ms": n, "rules": [{"match", "answers",
// "tool_calls": [{"name", "arguments": {...}}], "finish_reason", "shape"}],
// "faults": [{"match","status","times","body","headers":{name: value},"close","stream","during_ms",
// "probability"}], "prefix": "/v1", "models": ["a", "b"], "seed": n, "azure_api_version": "...",
// "no_usage": bool, "reject_seed": bool, "error_style": "azure|gemini|ollama"}.
// Every key is optional except a rule's non-empty "answers"; unknown keys
// and wrong types are Error(bad_input) naming `where`.
Script parse_script(const std::string& json_text, const std::string& where = "script");

struct RequestLog {
  std::string method, target, body;
  std::map<std::string, std::string> headers; // lowercase names
};

// Unsets what changes how a client connects: trust (SSL_CERT_FILE,
// SSL_CERT_DIR), proxies (HTTP(S)_PROXY, NO_PROXY, either case) and
// GATE_ALLOW_HTTP, so that a test sees only what it sets itself.
void clear_network_env();

class FakeUpstream {
public:
  explicit FakeUpstream(Script script);
  ~FakeUpstream(); // stops
  FakeUpstream(const FakeUpstream&) = delete;
  FakeUpstream& operator=(const FakeUpstream&) = delete;

  // Binds 127.0.0.1:port (0 = pick one) and serves on `threads` threads.
  void start(unsigned short port = 0, int threads = 2);
  // The same over TLS with this certificate chain and key (PEM). With
  // `required_sni`, a virtual host: handshakes without that SNI name fail.
  void start_tls(unsigned short port, int threads, const std::string& cert_pem, const std::string& key_pem,
                 const std::string& required_sni = "");
  void stop();
  unsigned short port() const;
  // "http://127.0.0.1:<port>/v1", or with TLS "https://localhost:<port>/v1"
  // (certificates name a host, and the test ones name localhost).
  std::string base_url() const;

  std::uint64_t requests() const;
  std::uint64_t connections() const;   // TCP connections accepted (keep-alive shows as fewer)
  std::vector<RequestLog> log() const; // every request received, in order

private:
  void listen(unsigned short port, int threads);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace gate::testing

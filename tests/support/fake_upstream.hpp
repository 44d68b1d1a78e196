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
// on its last user message and on how many times that exact request body
// was answered before (the occurrence), so k identical requests get k
// answers. Requests that drew a fault do not count, so a retried request
// gets the answer it would have got without the fault.
//
// Endpoints: POST .../chat/completions (OpenAI chat.completion), POST
// .../v1/messages (Anthropic message), GET .../models (one model). Usage is
// deterministic: prompt = words in all message contents (and the Anthropic
// system prompt) + 3, completion = words in the answer + 1.
namespace gate::testing {

struct Rule {
  std::string match;                // substring of the last user message; "" matches all
  std::vector<std::string> answers; // answer = answers[occurrence % size]
};

struct Fault {
  std::string match; // substring of the last user message; "" matches all
  int status = 500;
  int times = 1;    // the first `times` matching requests get it
  std::string body; // "" = a generic OpenAI-style error body for the status
  std::vector<std::pair<std::string, std::string>> headers;
  bool close_without_response = false; // drop the connection instead
};

struct Script {
  std::vector<Rule> rules;   // first match wins; no match → "echo: <message>"
  std::vector<Fault> faults; // checked before rules
  double latency_ms = 0;     // added before every response
};

// Reads a script from JSON: {"latency_ms": n, "rules": [{"match", "answers"}],
// "faults": [{"match","status","times","body","headers":{name: value},"close"}]}.
// Every key is optional except a rule's non-empty "answers"; unknown keys
// and wrong types are Error(bad_input) naming `where`.
Script parse_script(const std::string& json_text, const std::string& where = "script");

struct RequestLog {
  std::string method, target, body;
  std::map<std::string, std::string> headers; // lowercase names
};

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

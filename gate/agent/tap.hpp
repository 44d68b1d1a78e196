#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <gate/config/config.hpp>
#include <gate/proxy/server.hpp>
#include <gate/results/results.hpp>

namespace gate::agent {

// What the proxy answered within one /t/<task>/r/<run> scope.
struct ScopeLog {
  std::vector<results::ToolCall> tool_calls; // from every answer, in request order
  std::vector<std::string> missing_keys;     // replay-only misses (cache keys)
  std::vector<replay::Unvouched> untrusted;  // hits the trusted cache does not hold
  std::vector<replay::Unvouched> tampered;   // hits that differ from the trusted cache's entry
  int requests = 0;
  int cache_hits = 0;                                    // requests answered from the cache
  std::int64_t prompt_tokens = 0, completion_tokens = 0; // summed over the answers
  bool usage_known = true;                               // false when an answer reported no usage
  std::string record_error; // the first answer that could not be recorded, if any
};

// The agents' endpoint for one `gate run`: an in-process proxy::Server
// (so recording, replay, keys and the Host rules are exactly the proxy's)
// whose observer keeps, per scope, what it answered: the tool calls (the
// run's trajectory), usage, cache hits and replay-only misses.
class Tap {
public:
  // `client`: what the proxy's upstream calls go through (the runner's, so
  // that agents and model tasks share one rate limit); empty = its own,
  // made from `env` as the proxy's would be.
  Tap(const config::Config& cfg, const Environment& env, proxy::Server::ClientSource client = {});
  ~Tap();
  Tap(const Tap&) = delete;
  Tap& operator=(const Tap&) = delete;

  // Binds 127.0.0.1 on a free port; throws Error(cannot_run) when it cannot.
  void start();
  // Holds the agents' cached answers to `trusted` too (proxy::Server::trust);
  // before start().
  void trust(const cache::Store* trusted) { proxy_.trust(trusted); }
  // The runner's remote cache level (proxy::Server::remote); before start().
  void remote(std::shared_ptr<cache::Remote> r) { proxy_.remote(std::move(r)); }
  void stop();
  unsigned short port() const { return proxy_.port(); }

  // "http://127.0.0.1:<port>/t/<task>/r/<run>", the task id percent-encoded
  // so that any id is one path segment. The SDK appends its endpoint path
  // ("/chat/completions"), which the proxy appends to model.base_url.
  std::string base_url(const std::string& task_id, int run) const;

  // The log of one scope, removed from the tap.
  ScopeLog take(const std::string& task_id, int run);

  // One request as the listener passes it on (public for tests).
  proxy::Reply handle(const std::string& method, const std::string& target, const std::string& host,
                      const std::vector<std::pair<std::string, std::string>>& headers,
                      const std::string& body);

private:
  void note(const proxy::Observation& o);

  std::string provider_;
  int threads_;
  std::mutex mutex_;
  std::map<std::string, ScopeLog> scopes_; // by "/t/<task>/r/<run>"; guarded by mutex_
  proxy::Server proxy_;                    // last: stopped and destroyed before what its observer uses
};

// A path segment with everything but unreserved characters percent-encoded.
std::string encode_segment(const std::string& s);

} // namespace gate::agent

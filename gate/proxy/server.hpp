#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/config/config.hpp>
#include <gate/proxy/pacing.hpp>
#include <gate/proxy/route.hpp>
#include <gate/util/environment.hpp>

namespace gate::proxy {

// What a handled request came back with, before it is written out.
struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<Step> steps; // how to pace a replayed answer; empty = at once
};

// What the proxy did with one request in a /t/<task>/r/<run> scope, as an
// observer sees it. The pointers live for the duration of the call only.
struct Observation {
  Target target;
  std::string method;
  int status = 0;
  bool cache_hit = false; // answered from the cache, no upstream call
  bool missed = false;    // a replay-only miss (the reply is the 404)
  std::string key;        // the cache key; "" when the request had none (a body that is not JSON)
  const std::string* request_body = nullptr;
  const Reply* reply = nullptr;
};

// The loopback record/replay proxy (docs/proxy.md). Listens on
// 127.0.0.1 only. Connections are read asynchronously, so an idle
// keep-alive connection holds no thread; `threads` bounds the requests
// handled at once (a replay, or a blocking upstream call). The occurrence
// counters are the only shared state besides the Store (which is
// thread-safe itself) and are guarded by a mutex.
class Server {
public:
  // The real key is `env`'s model.api_key_env; proxies and trust for the
  // upstream come from `env` too (net/settings.hpp).
  Server(const config::Config& cfg, const Environment& env);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Called for every request in a task/run scope that passed the Host and
  // path checks, on the thread that handled it (so concurrently: it must be
  // thread-safe). Set before start().
  void observe(std::function<void(const Observation&)> observer) { observer_ = std::move(observer); }

  // How answers from the cache are timed (default: at once). Set before start().
  void pace_replays(ReplayTiming t) { timing_ = t; }

  // Binds 127.0.0.1:port (0 = a free one) and starts serving on `threads`.
  // Throws Error(cannot_run) when it cannot bind.
  void start(unsigned short port, int threads = 4);
  void stop();
  unsigned short port() const { return port_; }

  // One request, as the connection loop calls it: method, request target,
  // Host header, the request headers a client may pass on (lowercase) and
  // body. `client_gone`, when given, says whether the client hung up; it is
  // asked every 50 ms while an upstream call runs, which is then abandoned,
  // and nothing is recorded.
  Reply handle(const std::string& method, const std::string& target, const std::string& host,
               const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body,
               const std::function<bool()>& client_gone = {});

private:
  Reply answer(const std::string& method, const Target& t,
               const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body,
               Observation& seen, const std::function<bool()>& client_gone);
  // `clock`, when given, times the events of a streamed answer.
  Reply forward(const std::string& method, const std::string& upstream_path,
                const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body,
                EventClock* clock = nullptr, const std::function<bool()>& client_gone = {});
  int next_occurrence(const std::string& scope, const std::string& canonical_body);

  config::Config cfg_;
  cache::Store store_;
  Environment env_;  // for the upstream fetch: proxies, trust
  std::string key_; // the real API key; never logged, never stored
  unsigned short port_ = 0;
  ReplayTiming timing_;
  std::function<void(const Observation&)> observer_;
  std::mutex mutex_;
  std::map<std::string, int> seen_; // scope path + body -> requests so far; guarded by mutex_
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace gate::proxy

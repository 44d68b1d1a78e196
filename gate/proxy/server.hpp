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
#include <gate/model/api.hpp>
#include <gate/net/lazy_client.hpp>
#include <gate/proxy/pacing.hpp>
#include <gate/proxy/route.hpp>
#include <gate/replay/policy.hpp>
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
  bool cache_hit = false;   // answered from the cache, no upstream call
  bool missed = false;      // a replay-only miss (the reply is the 404)
  std::string key;          // the cache key; "" when the request had none (a body that is not JSON)
  std::string record_error; // the answer could not be recorded (the reply is a 500): the run is not whole
  // A hit the trusted cache (trust()) does not vouch for: same when none is set.
  replay::Trust trust = replay::Trust::same;
  std::string remote; // a hit the remote served: where it is ("" from the cache directory)
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
  // Makes (lazily: a replay needs no key) the client upstream calls go
  // through; may throw Error, which the request gets as a 502.
  using ClientSource = std::function<model::ModelClient&()>;

  // Without `client`, the proxy makes its own net client from cfg.model and
  // `env` (the key, proxies, trust: net/settings.hpp), as `gate run` does,
  // told the thread count as its worker count. With one (agent::Tap), calls
  // share that client's retries and rate limiter. The key in `env` is
  // registered for redaction either way.
  Server(const config::Config& cfg, const Environment& env, ClientSource client = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Called for every request in a task/run scope that passed the Host and
  // path checks, on the thread that handled it (so concurrently: it must be
  // thread-safe). Set before start().
  void observe(std::function<void(const Observation&)> observer) { observer_ = std::move(observer); }

  // Holds every answer served from the cache to `trusted` (replay::trust_of);
  // what it finds goes to the observer (`Observation::trust`), which decides
  // what it means, as the runner does for model tasks. Set before start().
  void trust(const cache::Store* trusted) { trusted_ = trusted; }

  // The shared second level behind the cache directory (cache.remote),
  // shared with the caller's store so that one set of counts holds both.
  // Set before start().
  void remote(std::shared_ptr<cache::Remote> r) { store_.set_remote(std::move(r)); }

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
  // One upstream call through the model client: the reply for the client,
  // the response as it came and, for a stream, its event times.
  struct Fresh {
    Reply reply;
    model::ApiResponse response;
    EventClock clock;
  };
  Fresh forward(const std::string& method, const std::string& upstream_path,
                const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body,
                bool stream, const std::function<bool()>& client_gone);
  int next_occurrence(const std::string& scope, const std::string& canonical_body);

  config::Config cfg_;
  cache::Store store_;
  const cache::Store* trusted_ = nullptr;
  Environment env_; // what its own client is made from
  ClientSource client_;
  std::unique_ptr<net::LazyClient> own_client_; // when no client was given
  std::once_flag workers_told_;
  int threads_ = 1;
  unsigned short port_ = 0;
  ReplayTiming timing_;
  std::function<void(const Observation&)> observer_;
  std::mutex mutex_;
  std::map<std::string, int> seen_; // scope path + body -> requests so far; guarded by mutex_
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace gate::proxy

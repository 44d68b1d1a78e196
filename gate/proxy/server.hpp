#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/config/config.hpp>

namespace gate::proxy {

// What a handled request came back with, before it is written out.
struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// The loopback record/replay proxy (docs/proxy.md). Listens on
// 127.0.0.1 only; each connection is served on a small thread pool. The
// occurrence counters are the only shared state besides the Store (which is
// thread-safe itself) and are guarded by a mutex.
class Server {
public:
  explicit Server(const config::Config& cfg);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds 127.0.0.1:port (0 = a free one) and starts serving on `threads`.
  void start(unsigned short port, int threads = 4);
  void stop();
  unsigned short port() const { return port_; }

  // One request, as the connection loop calls it: method, request target,
  // Host header, the request headers a client may pass on (lowercase) and body.
  Reply handle(const std::string& method, const std::string& target, const std::string& host,
               const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body);

private:
  Reply forward(const std::string& method, const std::string& upstream_path,
                const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body);
  int next_occurrence(const std::string& scope, const std::string& canonical_body);

  config::Config cfg_;
  cache::Store store_;
  std::string key_; // the real API key; never logged, never stored
  unsigned short port_ = 0;
  std::mutex mutex_;
  std::map<std::string, int> seen_; // scope path + body -> requests so far; guarded by mutex_
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace gate::proxy

#pragma once

#include <memory>
#include <mutex>

#include <gate/config/config.hpp>
#include <gate/model/api.hpp>
#include <gate/net/http_client.hpp>
#include <gate/util/error.hpp>

namespace gate::net {

// The model client, made on first use from any worker thread: a replay
// whose every response is cached needs no key. A mutex, not std::call_once:
// make_http_client throws (no key, bad URL), and an exception thrown
// through call_once unwinds through glibc's pthread_once, whose unwinding
// glibc hands to a dlopen'ed libgcc_s; the portable binary's static libgcc
// unwinder then aborts (README, "The portable binary"). A throw leaves the
// client unmade, so the next call tries again, as call_once would.
class LazyClient {
public:
  // `model` and `env` must outlive the client.
  LazyClient(const config::ModelConfig& model, const Environment& env, const HttpOptions& options = {})
      : model_(model), env_(env), options_(options) {}

  model::ModelClient& get() {
    std::lock_guard lock(mutex_);
    if (!made_) {
      client_ = make_http_client(model_, env_, options_);
      made_ = true;
    }
    if (!client_) throw Error(Exit::cannot_run, "the model client could not be made");
    return *client_;
  }

private:
  const config::ModelConfig& model_;
  const Environment& env_;
  HttpOptions options_;
  std::mutex mutex_;
  bool made_ = false; // guarded by mutex_
  std::unique_ptr<model::ModelClient> client_;
};

} // namespace gate::net

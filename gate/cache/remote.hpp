#pragma once

// The second level of a cache (`cache.remote`): a store that many runners
// share, behind the local directory. cache/ knows only what it asks of such
// a store (entry bytes by key); the HTTP that reaches one is net's, wired
// in cli/.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <gate/cache/entry.hpp>

namespace gate::cache {

// The path of an entry below a store's root, the same at both levels:
// "<key[0:2]>/<key>.entry". A shared directory is thus a cache directory
// itself (`gate cache verify` reads a server's root as it is).
std::string entry_path(const std::string& key);

// What a remote store answered for one request.
struct RemoteReply {
  enum class Outcome {
    found,  // get: `bytes` hold the stored entry; put: stored
    absent, // get only: the store has no entry of that key (a 404)
    failed, // no usable answer: refused, timed out, 401/403, 5xx, ...
  };
  Outcome outcome = Outcome::failed;
  std::string bytes;
  // For failed: why, for a person ("timeout: ...", "HTTP 401"), never
  // holding a credential.
  std::string error;
};

// A store of entry bytes by key. Implementations never throw from get/put.
class RemoteStorage {
public:
  virtual ~RemoteStorage() = default;
  virtual RemoteReply get(const std::string& key) = 0;
  virtual RemoteReply put(const std::string& key, std::string_view bytes) = 0;
  // Where it is, for messages ("http://cache.internal:8080/gate"); no credential.
  virtual std::string where() const = 0;
};

struct RemoteCounts {
  std::uint64_t hits = 0;     // verified entries served (and written to the local level)
  std::uint64_t misses = 0;   // absent there
  std::uint64_t rejected = 0; // found but not a valid entry of that key: misses, never served
  std::uint64_t puts = 0;     // fresh entries stored there
  std::uint64_t failures = 0; // requests without a usable answer
  std::uint64_t skipped = 0;  // requests not made: the store had failed before in this run
};

// Guards a RemoteStorage for the Stores that share it: verifies what it
// serves and counts what happened. The first failure turns the remote off
// for the rest of the process: a server that is down or refuses the token
// costs one timeout, not one per request, and the run goes on from the
// local level and fresh calls. Thread-safe.
class Remote {
public:
  explicit Remote(std::unique_ptr<RemoteStorage> storage);

  // A verified entry of `key` (checksum, magic, version, the key inside
  // equal to `key`) with its bytes; absent or rejected is no entry, a
  // rejected one with `rejected` set to "<where>/<path>: <reason>".
  struct Got {
    std::optional<Entry> entry;
    std::string bytes;
    std::string rejected;
  };
  Got get(const std::string& key);
  // Stores `bytes` (an encoded entry of `key`); a failure is counted, never thrown.
  void put(const std::string& key, std::string_view bytes);

  RemoteCounts counts() const;
  // The first failure ("" when none): "<where>: <error>".
  std::string failure() const;
  std::string where() const { return where_; }
  // Called once, with failure(), when the first failure happens (gate proxy
  // says so at once); set before use.
  void on_failure(std::function<void(const std::string&)> f) { on_failure_ = std::move(f); }

private:
  bool usable();
  void failed(const std::string& error);

  std::unique_ptr<RemoteStorage> storage_;
  std::string where_;
  std::atomic<bool> off_{false};
  std::atomic<std::uint64_t> hits_{0}, misses_{0}, rejected_{0}, puts_{0}, failures_{0}, skipped_{0};
  mutable std::mutex mutex_;
  std::string failure_; // guarded by mutex_
  std::function<void(const std::string&)> on_failure_;
};

// The run summary's part: "remote cache: 3 hits, 1 miss, 1 put" and, when
// any, ", 1 rejected", ", 1 failure (then off)", ", 4 requests not made".
std::string counts_text(const RemoteCounts& c);

} // namespace gate::cache

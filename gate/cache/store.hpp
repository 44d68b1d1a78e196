#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <gate/cache/entry.hpp>

namespace gate::cache {

// The cache key: sha256 over provider, endpoint path, the canonical request
// body (ignore rules already applied) and the replica index, each field
// length-prefixed so that no two inputs collide by concatenation. Never the
// API key, never the host.
std::string make_key(std::string_view provider, std::string_view path, std::string_view canonical_request,
                     int replica);
// The same without the replica: identifies "the same request" across runs
// and reports (the request fingerprint).
std::string make_fingerprint(std::string_view provider, std::string_view path,
                             std::string_view canonical_request);

struct Lookup {
  std::optional<Entry> entry;   // a verified hit
  std::string corrupt_reason;   // set when a file existed but was rejected (a miss with a warning)
};

struct Stats {
  std::uint64_t entries = 0, bytes = 0, corrupt = 0, temp_files = 0;
};

// A cache directory: <root>/<key[0:2]>/<key>.entry. Safe for many threads
// and many processes at once: every write is a unique temp file + rename,
// so a reader sees a whole entry or none. Paths are built only from hex
// keys, and a symlink anywhere below the root is refused, so nothing is
// read or written outside it.
class Store {
public:
  explicit Store(std::filesystem::path root);

  Lookup get(const std::string& key) const;
  // Writes atomically; throws Error(cannot_run) when the directory is not
  // writable or the disk is full.
  void put(const Entry& e);
  bool remove(const std::string& key);

  Stats stats() const;
  // Checks every entry; returns "path: reason" per bad one.
  std::vector<std::string> verify() const;
  // Removes corrupt entries, stray temp files older than `temp_age`, and
  // entries whose key is not in `keep` when `keep` is given. Returns count.
  std::size_t prune(const std::vector<std::string>* keep, std::chrono::seconds temp_age);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path path_for(const std::string& key) const;

private:
  std::filesystem::path root_;
  mutable std::mutex dirs_mutex_;
  mutable std::vector<bool> dir_made_; // 256 shard dirs created yet?
};

} // namespace gate::cache

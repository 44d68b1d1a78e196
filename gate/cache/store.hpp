#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gate/cache/entry.hpp>
#include <gate/cache/remote.hpp>

namespace gate::cache {

// The cache key: sha256 over provider, endpoint path, the canonical request
// body (ignore rules already applied) and the replica index, each field
// length-prefixed so that no two inputs collide by concatenation. Never the
// API key, never the host. Exactly:
//
//   key         := sha256hex(field("provider", provider) field("path", path)
//                            field("request", request) field("replica", decimal(replica)))
//   fingerprint := sha256hex(field("provider", provider) field("path", path)
//                            field("request", request))
//   field(n, v) := n "\0" decimal(byte length of v) ":" v
std::string make_key(std::string_view provider, std::string_view path, std::string_view canonical_request,
                     int replica);
// The key of an agent's call through the proxy, whose requests a run
// makes in an order of the agent's choosing: `run` names the run (a path
// segment, so text) and `occurrence` counts the identical requests before
// this one within that run. Its fields are named apart from make_key's, so
// the two kinds of key never meet:
//
//   call_key    := sha256hex(field("provider", provider) field("path", path)
//                            field("request", request) field("run", run)
//                            field("occurrence", decimal(occurrence)))
std::string make_call_key(std::string_view provider, std::string_view path,
                          std::string_view canonical_request, std::string_view run, int occurrence);
// The same without the replica: identifies "the same request" across runs
// and reports (the request fingerprint).
std::string make_fingerprint(std::string_view provider, std::string_view path,
                             std::string_view canonical_request);

struct Lookup {
  std::optional<Entry> entry; // a verified hit
  std::string bytes;          // its file's bytes, for the comparison with a trusted cache
  std::string corrupt_reason; // set when a file existed but was rejected (a miss with a warning)
  // A remote hit that could not be written to the local directory (it is
  // served all the same): why.
  std::string local_write_error;
  // For a hit the remote served (and that was copied to the directory):
  // where it is (Remote::where()); "" for a hit from the directory.
  std::string remote;
};

struct Stats {
  std::uint64_t entries = 0, bytes = 0, corrupt = 0, temp_files = 0;
};

// A cache directory: <root>/<key[0:2]>/<key>.entry. Safe for many threads
// and many processes at once: every write is a unique temp file + rename,
// so a reader sees a whole entry or none. Paths are built only from hex
// keys, and a symlink anywhere below the root is refused, so nothing is
// read or written outside it.
//
// Every method that takes a key throws Error(bad_input) unless it is 64
// lowercase hex digits. The root is created on the first put(); the
// constructor throws Error(cannot_run) when it exists as a symlink or as
// something other than a directory.
class Store {
public:
  explicit Store(std::filesystem::path root);

  // A missing entry is a plain miss; a rejected one (corrupt, truncated,
  // symlinked, not a regular file) is a miss with corrupt_reason set to
  // "<path>: <reason>". Never throws for what it finds on disk. With a
  // remote, what the directory does not hold validly is asked of it: a
  // verified remote entry is the hit (its exact bytes, written to the
  // directory too); one that fails verification is a miss, never served
  // nor written, its reason in corrupt_reason ("<url>/<path>: <reason>").
  Lookup get(const std::string& key) const;
  // Writes atomically; throws Error(cannot_run) naming the path when the
  // directory is not writable, is a symlink, or the disk is full. With a
  // remote, the written entry is then stored there as well (a failure
  // there is the remote's to count, never thrown).
  void put(const Entry& e);

  // The second level behind this directory (`cache.remote`); null = none.
  // Set before the store is shared between threads.
  void set_remote(std::shared_ptr<Remote> remote) { remote_ = std::move(remote); }
  const std::shared_ptr<Remote>& remote() const { return remote_; }
  // Removes one entry; false when there was none. A symlinked shard
  // directory is never entered (false).
  bool remove(const std::string& key);

  // `entries`/`bytes` count valid entries; `corrupt` counts everything
  // verify() would list; `temp_files` counts leftover temp files.
  Stats stats() const;
  // Checks every file under the root, never following a symlink; returns
  // "path: reason" per bad one (corrupt entries, symlinks, files that are not
  // entries), sorted. Temp files are not listed.
  std::vector<std::string> verify() const;
  // Removes corrupt entries, symlinks (the links themselves), stray files in
  // shard directories, temp files older than `temp_age`, and entries whose
  // key is not in `keep` when `keep` is given. Unknown items directly under
  // the root and unknown directories are only reported by verify(). Returns
  // the number of files removed. A temp_age shorter than a write can take
  // would remove another process's write in flight.
  std::size_t prune(const std::vector<std::string>* keep, std::chrono::seconds temp_age);

  // Valid entries for which `referenced` is false: counted, and removed
  // when `apply` (else a dry run). Corrupt and temp files are prune()'s.
  struct Stale {
    std::uint64_t entries = 0, bytes = 0;
  };
  Stale prune_unreferenced(const std::function<bool(const Entry&)>& referenced, bool apply);

  // For each of `fingerprints`, its entry of the lowest replica (every
  // replica holds the same request), found by reading every entry: a
  // confirmation sends a baseline's request again knowing only its
  // fingerprint. Corrupt entries are skipped, as get() would miss them.
  std::map<std::string, Entry> by_fingerprint(const std::set<std::string>& fingerprints) const;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path path_for(const std::string& key) const;

private:
  Lookup get_local(const std::string& key) const;
  void make_shard_dir(const std::string& key) const;
  void write_local(const std::string& key, std::string_view bytes) const;

  std::filesystem::path root_;
  std::shared_ptr<Remote> remote_;
  mutable std::mutex dirs_mutex_;
  mutable bool root_made_ = false;     // guarded by dirs_mutex_
  mutable std::vector<bool> dir_made_; // 256 shard dirs created yet? guarded by dirs_mutex_
  // get()'s descriptor of the root, opened on first use; guarded by dirs_mutex_
  mutable std::shared_ptr<const int> root_fd_;
};

} // namespace gate::cache

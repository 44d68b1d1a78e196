#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/config/config.hpp>
#include <gate/model/api.hpp>

namespace gate::replay {

// The one record/replay policy of `gate run` (run/runner.cpp) and
// `gate proxy` (proxy/server.cpp): what the cache answers, what a
// replay-only miss is, which fresh answers are stored, what of them is kept
// and what a failed write means. Callers only say what to do with the
// decision (a run's fields, an HTTP reply).

enum class Verdict {
  hit,  // replay the entry; no upstream call
  miss, // replay-only and not recorded: no upstream call, the request fails
  send, // call the upstream
};

struct Decision {
  Verdict verdict = Verdict::send;
  std::optional<cache::Entry> entry; // set for a hit
  std::string bytes;                 // a hit's file bytes, for a trusted cache's comparison
  std::string remote;                // a hit the remote served: where it is (cache::Lookup::remote)
  // A corrupt entry (local, or remote: cache::Store::get) was found and
  // treated as a miss; or a remote hit could not be kept locally.
  std::string warning;
};

// What a run that hit a replay-only miss carries as its error (its bucket in
// reports), for model tasks and agent runs alike.
inline constexpr std::string_view k_miss_error = "cache_miss";

// Replay and replay-only look the key up; record and off never do. A null
// store is cache mode off. A store with a remote (cache.remote) answers from
// either level: a remote hit is a hit like a local one, with its bytes, so
// the trusted-cache rule below holds it to the same comparison.
Decision look_up(const cache::Store* store, config::CacheMode mode, const std::string& key);

// The trusted-cache rule (docs/ci.md, "A committed cache that a pull
// request can edit"): a hit's bytes against the entry of the same key in
// the cache the base branch trusts. A checksum catches corruption, not a
// rewrite with a recomputed checksum; only the trusted copy tells an answer
// the branch edited (differs) from one it added (absent). A trusted entry
// that is missing or unreadable cannot vouch for the hit.
enum class Trust { same, absent, differs };
Trust trust_of(const cache::Store& trusted, const std::string& key, std::string_view hit_bytes);

// trust_of for a hit of look_up(&store, ...). A hit the remote served that
// differs from the trusted copy is refused, and look_up had copied it into
// the cache directory: it is removed from there, so that no later run (one
// without --trusted-cache, or with the remote down) serves what was refused.
Trust vouch(const cache::Store& trusted, cache::Store& store, const std::string& key, const Decision& hit);

// A hit the trusted cache does not vouch for, as the callers list it.
struct Unvouched {
  std::string key;
  std::string remote; // Decision::remote: "" when the cache directory held it
};

// Whether a fresh response is stored: the cache is on and the response is a
// success (a failure is never replayed). `succeeded` is the caller's reading
// of success: a model reply without an error bucket, or a 2xx for the other
// requests the proxy forwards.
bool records(const cache::Store* store, config::CacheMode mode, bool succeeded);

// A fresh response as it is about to be recorded.
struct Fresh {
  std::string key;
  std::string provider;
  std::string path;
  int replica = 0;
  std::string request; // canonical JSON of the request as sent (redacted here)
  const model::ApiResponse* response = nullptr;
  std::optional<model::Usage> usage;
  std::vector<double> event_ms; // a stream's event times, ms after the request went upstream
  double latency_ms = 0;
  std::string route; // canonical JSON, or ""
};

// The entry for `f`: request, header values and body redacted; only the
// headers cache::header_allowed() accepts, sorted; event times rounded to
// microseconds (finer than any network, and shorter files).
cache::Entry entry_for(const Fresh& f);

// Writes entry_for(f). A write that fails is never a warning: the caller
// gets the Error (cannot_run naming the path, or bad_input for an entry that
// could never be read) and must not let the run go on as if it were
// recorded: the runner ends the run; the proxy fails the request, and the
// agent run it belongs to ends the run too.
void record(cache::Store& store, const Fresh& f);

} // namespace gate::replay

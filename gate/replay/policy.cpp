#include <gate/replay/policy.hpp>

#include <algorithm>
#include <cmath>

#include <gate/util/redact.hpp>
#include <gate/util/time.hpp>

namespace gate::replay {

Decision look_up(const cache::Store* store, config::CacheMode mode, const std::string& key) {
  Decision d;
  const bool replays = mode == config::CacheMode::replay || mode == config::CacheMode::replay_only;
  if (store != nullptr && replays) {
    cache::Lookup found = store->get(key);
    if (!found.corrupt_reason.empty())
      d.warning = "corrupt cache entry treated as a miss: " + found.corrupt_reason;
    if (!found.local_write_error.empty())
      d.warning +=
          std::string(d.warning.empty() ? "" : "; ") +
          "a remote cache entry was served but not kept in the cache directory: " + found.local_write_error;
    if (found.entry) {
      d.verdict = Verdict::hit;
      d.entry = std::move(found.entry);
      d.bytes = std::move(found.bytes);
      d.remote = std::move(found.remote);
      return d;
    }
  }
  if (mode == config::CacheMode::replay_only) d.verdict = Verdict::miss;
  return d;
}

Trust trust_of(const cache::Store& trusted, const std::string& key, std::string_view hit_bytes) {
  const cache::Lookup found = trusted.get(key);
  if (!found.entry) return Trust::absent;
  return found.bytes == hit_bytes ? Trust::same : Trust::differs;
}

Trust vouch(const cache::Store& trusted, cache::Store& store, const std::string& key, const Decision& hit) {
  const Trust t = trust_of(trusted, key, hit.bytes);
  if (t == Trust::differs && !hit.remote.empty()) store.remove(key);
  return t;
}

bool records(const cache::Store* store, config::CacheMode mode, bool succeeded) {
  return store != nullptr && mode != config::CacheMode::off && succeeded;
}

cache::Entry entry_for(const Fresh& f) {
  cache::Entry e;
  e.key = f.key;
  e.provider = f.provider;
  e.path = f.path;
  e.replica = f.replica;
  e.request = redact(f.request);
  e.status = f.response->status;
  for (const auto& [name, value] : f.response->headers)
    if (cache::header_allowed(name)) e.headers.emplace_back(name, redact(value));
  std::sort(e.headers.begin(), e.headers.end());
  e.body = redact(f.response->body);
  if (f.usage) e.usage = std::make_pair(f.usage->prompt_tokens, f.usage->completion_tokens);
  for (double ms : f.event_ms)
    e.event_ms.push_back(std::round(ms * 1000) / 1000);
  e.latency_ms = f.latency_ms;
  e.recorded_at = utc_now_iso();
  e.route = f.route;
  return e;
}

void record(cache::Store& store, const Fresh& f) { store.put(entry_for(f)); }

} // namespace gate::replay

#include <gate/cache/remote.hpp>

#include <gate/util/redact.hpp>

namespace gate::cache {

std::string entry_path(const std::string& key) { return key.substr(0, 2) + "/" + key + ".entry"; }

Remote::Remote(std::unique_ptr<RemoteStorage> storage)
    : storage_(std::move(storage)), where_(storage_->where()) {}

bool Remote::usable() {
  if (!off_.load(std::memory_order_acquire)) return true;
  skipped_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void Remote::failed(const std::string& error) {
  failures_.fetch_add(1, std::memory_order_relaxed);
  std::string first;
  {
    std::lock_guard lock(mutex_);
    if (!failure_.empty()) return;
    failure_ = redact(where_ + ": " + error);
    first = failure_;
  }
  off_.store(true, std::memory_order_release);
  if (on_failure_) on_failure_(first);
}

Remote::Got Remote::get(const std::string& key) {
  Got out;
  if (!usable()) return out;
  RemoteReply r = storage_->get(key);
  switch (r.outcome) {
  case RemoteReply::Outcome::failed: failed(r.error); return out;
  case RemoteReply::Outcome::absent: misses_.fetch_add(1, std::memory_order_relaxed); return out;
  case RemoteReply::Outcome::found: break;
  }
  DecodeResult d = decode(r.bytes, key);
  if (!d.entry) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    out.rejected = where_ + "/" + entry_path(key) + ": " + d.reason;
    return out;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  out.entry = std::move(d.entry);
  out.bytes = std::move(r.bytes);
  return out;
}

void Remote::put(const std::string& key, std::string_view bytes) {
  if (!usable()) return;
  RemoteReply r = storage_->put(key, bytes);
  if (r.outcome == RemoteReply::Outcome::failed)
    failed(r.error);
  else
    puts_.fetch_add(1, std::memory_order_relaxed);
}

RemoteCounts Remote::counts() const {
  RemoteCounts c;
  c.hits = hits_.load();
  c.misses = misses_.load();
  c.rejected = rejected_.load();
  c.puts = puts_.load();
  c.failures = failures_.load();
  c.skipped = skipped_.load();
  return c;
}

std::string Remote::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

std::string counts_text(const RemoteCounts& c) {
  auto n = [](std::uint64_t v, const char* one, const char* many) {
    return std::to_string(v) + " " + (v == 1 ? one : many);
  };
  std::string out = "remote cache: " + n(c.hits, "hit", "hits") + ", " + n(c.misses, "miss", "misses") +
                    ", " + n(c.puts, "put", "puts");
  if (c.rejected > 0) out += ", " + n(c.rejected, "rejected", "rejected");
  if (c.failures > 0) out += ", " + n(c.failures, "failure", "failures") + " (then off)";
  if (c.skipped > 0) out += ", " + n(c.skipped, "request", "requests") + " not made";
  return out;
}

} // namespace gate::cache

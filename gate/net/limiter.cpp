#include <gate/net/limiter.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <gate/util/error.hpp>

namespace gate::net {

namespace {

using Duration = std::chrono::steady_clock::duration;

// Rounded up, and at least one tick: a wait that rounds down to zero would
// wake before the bucket is full and spin.
Duration seconds_up(double s) {
  auto d = std::chrono::ceil<Duration>(std::chrono::duration<double>(s));
  return std::max(d, Duration(1));
}

double seconds_between(TimePoint from, TimePoint to) {
  return std::chrono::duration<double>(to - from).count();
}

// Floating-point refill can land a hair under the level it was computed to
// reach; this much short still counts as there.
constexpr double k_slack = 1e-9;

void require(bool ok, const std::string& what) {
  if (!ok) throw Error(Exit::bad_input, "limiter: " + what);
}

bool positive(std::optional<double> v) { return !v || (std::isfinite(*v) && *v > 0); }

} // namespace

Permit& Permit::operator=(Permit&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    estimated_tokens_ = other.estimated_tokens_;
    epoch_ = other.epoch_;
  }
  return *this;
}

void Permit::reset() noexcept {
  if (!owner_) return;
  Limiter* owner = owner_;
  {
    std::lock_guard lock(owner->mutex_);
    owner->release(*this);
  }
  owner->released_.notify_all();
}

Limiter::Limiter(LimiterOptions options, Clock& clock) : options_(std::move(options)), clock_(clock) {
  require(options_.max_concurrency >= 1,
          "concurrency must be at least 1, got " + std::to_string(options_.max_concurrency));
  require(positive(options_.requests_per_min), "requests per minute must be a positive number");
  require(positive(options_.tokens_per_min), "tokens per minute must be a positive number");
  require(std::isfinite(options_.burst_s) && options_.burst_s > 0,
          "burst must be a positive number of seconds");
  require(options_.successes_to_grow >= 1, "successes to grow must be at least 1");
  require(std::isfinite(options_.max_pause_s) && options_.max_pause_s >= 0,
          "max pause must be a non-negative number of seconds");
  require(std::isfinite(options_.poll_s) && options_.poll_s > 0, "poll interval must be a positive number");

  TimePoint now = clock_.now();
  auto make = [&](double per_min, double min_capacity) {
    Bucket b;
    b.rate_per_s = per_min / 60.0;
    // At least one request's worth, or a budget under 60/min could never
    // admit anything.
    b.capacity = std::max(min_capacity, b.rate_per_s * options_.burst_s);
    b.level = b.capacity; // a fresh pool may start at once
    b.updated = now;
    return b;
  };
  if (options_.requests_per_min) requests_ = make(*options_.requests_per_min, 1.0);
  if (options_.tokens_per_min) tokens_ = make(*options_.tokens_per_min, 1.0);
  cap_ = options_.max_concurrency;
}

void Limiter::refill(Bucket& b, TimePoint now) {
  if (now > b.updated) {
    b.level = std::min(b.capacity, b.level + b.rate_per_s * seconds_between(b.updated, now));
    b.updated = now;
  }
}

TimePoint Limiter::ready_time(const Bucket& b, double cost, TimePoint now) const {
  double need = std::min(cost, b.capacity);
  if (b.level + k_slack >= need) return now;
  return now + seconds_up((need - b.level) / b.rate_per_s);
}

TryAcquired Limiter::try_acquire_locked(std::int64_t estimated_tokens, TimePoint now) {
  TryAcquired out;
  double tokens = static_cast<double>(std::max<std::int64_t>(estimated_tokens, 0));
  TimePoint ready = std::max(now, not_before_);
  if (requests_) {
    refill(*requests_, now);
    ready = std::max(ready, ready_time(*requests_, 1.0, now));
  }
  if (tokens_) {
    refill(*tokens_, now);
    ready = std::max(ready, ready_time(*tokens_, tokens, now));
  }
  if (ready > now) {
    out.retry_at = ready;
    return out;
  }
  // A full cap has no known end: only a call finishing frees a slot.
  if (in_flight_ >= cap_) return out;

  if (requests_) requests_->level -= 1.0;
  if (tokens_) tokens_->level -= tokens;
  ++in_flight_;
  out.permit.owner_ = this;
  out.permit.estimated_tokens_ = static_cast<std::int64_t>(tokens);
  out.permit.epoch_ = epoch_;
  return out;
}

TryAcquired Limiter::try_acquire(std::int64_t estimated_tokens) {
  std::lock_guard lock(mutex_);
  return try_acquire_locked(estimated_tokens, clock_.now());
}

Acquired Limiter::acquire(std::int64_t estimated_tokens, const std::atomic<bool>* stop, TimePoint deadline) {
  Acquired out;
  std::unique_lock lock(mutex_);
  const TimePoint began = clock_.now();
  // A grant on the first look waited exactly 0, not the clock's jitter.
  for (TimePoint now = began;; now = clock_.now()) {
    out.waited_s = std::max(0.0, seconds_between(began, now));
    if (stopped(stop)) {
      out.result = WaitResult::stopped;
      return out;
    }
    TryAcquired t = try_acquire_locked(estimated_tokens, now);
    if (t.permit) {
      out.permit = std::move(t.permit);
      out.result = WaitResult::ready;
      return out;
    }
    // Waiting out a pause or a budget that ends after the deadline only
    // burns the worker's time; say so now and when it would have been.
    if (now >= deadline || (t.retry_at && *t.retry_at > deadline)) {
      out.result = WaitResult::deadline;
      out.ready_at = t.retry_at;
      return out;
    }
    TimePoint wake = std::min(deadline, now + seconds_up(options_.poll_s));
    if (t.retry_at) wake = std::min(wake, *t.retry_at);
    clock_.sleep_until(lock, released_, wake);
  }
}

WaitResult Limiter::sleep_until(TimePoint until, const std::atomic<bool>* stop, TimePoint deadline) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopped(stop)) return WaitResult::stopped;
    TimePoint now = clock_.now();
    if (now >= until) return WaitResult::ready;
    // Like acquire: a wait known to outlast the deadline ends now.
    if (until > deadline) return WaitResult::deadline;
    TimePoint wake = std::min(until, now + seconds_up(options_.poll_s));
    clock_.sleep_until(lock, released_, wake);
  }
}

void Limiter::release(Permit& permit) {
  --in_flight_;
  permit.owner_ = nullptr;
}

void Limiter::on_response(Permit& permit, int status, std::optional<double> server_delay_s,
                          std::int64_t tokens_used) {
  if (permit.owner_ != this) return;
  {
    std::lock_guard lock(mutex_);
    TimePoint now = clock_.now();
    if (tokens_) {
      refill(*tokens_, now);
      // The estimate was charged up front; settle on what was billed.
      double correction = static_cast<double>(permit.estimated_tokens_) -
                          static_cast<double>(std::max<std::int64_t>(tokens_used, 0));
      tokens_->level = std::min(tokens_->capacity, tokens_->level + correction);
    }
    if (status >= 200 && status < 300) {
      if (++successes_ >= options_.successes_to_grow) {
        successes_ = 0;
        cap_ = std::min(options_.max_concurrency, cap_ + 1);
      }
    } else {
      successes_ = 0; // "in a row": any failure starts the count again
      if ((status == 429 || status == 529) && permit.epoch_ == epoch_) {
        cap_ = std::max(1, cap_ / 2);
        ++epoch_;
      }
    }
    if (server_delay_s && std::isfinite(*server_delay_s) && *server_delay_s > 0) {
      double pause = std::min(*server_delay_s, options_.max_pause_s);
      not_before_ = std::max(not_before_, now + seconds_up(pause));
    }
    release(permit);
  }
  released_.notify_all();
}

void Limiter::set_max_concurrency(int n) {
  require(n >= 1, "concurrency must be at least 1, got " + std::to_string(n));
  {
    std::lock_guard lock(mutex_);
    // Before any overload the cap follows the new maximum; after one it
    // keeps what it learned, within the new bound.
    cap_ = epoch_ == 0 ? n : std::min(cap_, n);
    options_.max_concurrency = n;
  }
  released_.notify_all();
}

LimiterState Limiter::state() {
  std::lock_guard lock(mutex_);
  return {cap_, in_flight_, not_before_};
}

} // namespace gate::net

#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

namespace gate::net {

using TimePoint = std::chrono::steady_clock::time_point;

// Time as the limiter sees it. Injected so that tests run on a fake clock:
// deterministic and instant, where a real 429 storm takes minutes.
class Clock {
public:
  virtual ~Clock() = default;
  virtual TimePoint now() = 0;
  // Blocks until `t`, or earlier when `cv` is notified; `lock` guards the
  // caller's state and is released meanwhile, as with
  // condition_variable::wait_until. Returning early is allowed: callers
  // re-check their condition after every return.
  virtual void sleep_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, TimePoint t) = 0;
};

// std::chrono::steady_clock: never jumps when the wall clock is set.
class SteadyClock final : public Clock {
public:
  TimePoint now() override { return std::chrono::steady_clock::now(); }
  void sleep_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, TimePoint t) override {
    cv.wait_until(lock, t);
  }
};

struct LimiterOptions {
  // The configured concurrency (model.concurrency): the adaptive cap starts
  // here and never grows past it.
  int max_concurrency = 4;
  // Provider budgets; absent means unlimited. Both refill continuously, so
  // a budget of 60/min is one request a second, not 60 at the top of each
  // minute (providers enforce per-minute limits in shorter windows).
  std::optional<double> requests_per_min;
  std::optional<double> tokens_per_min;
  // How much of a budget may be spent at once, in seconds of refill: with
  // 600 requests/min and 1 s, ten requests may start together.
  double burst_s = 1.0;
  // Successes in a row (since the last 429) that add one to the cap.
  int successes_to_grow = 8;
  // Longest pool-wide pause one response can impose; the client fails fast
  // on longer server delays anyway, this only stops a bad value freezing
  // every worker.
  double max_pause_s = 60.0;
  // How often a wait looks at the stop flag; the flag is set from a signal
  // handler, which cannot notify a condition variable.
  double poll_s = 0.1;
};

enum class WaitResult { ready, stopped, deadline };

class Limiter;

// Leave to make one call: holds a slot of the concurrency cap and the
// tokens estimated for the call. Move-only; dropping it without
// Limiter::on_response (an exception, a call abandoned) frees the slot and
// keeps the charge, since we cannot know what the server billed. The
// limiter must outlive its permits.
class Permit {
public:
  Permit() = default;
  Permit(Permit&& other) noexcept { *this = std::move(other); }
  Permit& operator=(Permit&& other) noexcept;
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;
  ~Permit() { reset(); }
  explicit operator bool() const { return owner_ != nullptr; }

private:
  friend class Limiter;
  void reset() noexcept;
  Limiter* owner_ = nullptr;
  std::int64_t estimated_tokens_ = 0;
  std::uint64_t epoch_ = 0; // the cap's decrease count when granted
};

struct Acquired {
  WaitResult result = WaitResult::ready;
  Permit permit;                     // set when result == ready
  double waited_s = 0;               // recorded with the attempt ("wait")
  std::optional<TimePoint> ready_at; // on `deadline`: when the budget or pause would have let it go
};

struct TryAcquired {
  Permit permit; // set when granted
  // When not granted: the earliest time worth asking again, or nullopt when
  // the cap is full and only a call finishing frees a slot.
  std::optional<TimePoint> retry_at;
};

struct LimiterState {
  int cap = 0;
  int in_flight = 0;
  TimePoint not_before{}; // pool-wide pause from a server delay
};

// One Limiter is shared by every worker calling the same provider, so that
// the pool, not each worker alone, respects the provider's limits. The
// client brackets each attempt:
//
//   auto a = limiter.acquire(estimated_tokens, stop, deadline);
//   if (a.result != WaitResult::ready) ... // stopped or out of time
//   ... send the request ...
//   limiter.on_response(a.permit, status, server_delay_s, tokens_used);
//
// Adaptive concurrency (AIMD, as TCP does for congestion): a 429 or 529
// halves the cap on calls in flight (not below 1); `successes_to_grow`
// 2xx in a row (any other status breaks the run) add one back, up to
// max_concurrency. A server delay on any response pauses the whole pool
// until then, instead of every worker retrying on its own schedule and
// hammering. Thread-safe.
class Limiter {
public:
  // Throws Error(bad_input) on a non-positive concurrency, budget, burst,
  // growth count or poll interval.
  Limiter(LimiterOptions options, Clock& clock);
  Limiter(const Limiter&) = delete;
  Limiter& operator=(const Limiter&) = delete;

  // Waits until a slot is free, the pool is not paused and both budgets
  // cover one request of `estimated_tokens`, then charges them. Returns
  // `stopped` as soon as *stop is seen true (stop may be null), `deadline`
  // at `deadline` or at once when the budget or pause is known to outlast
  // it. An estimate above the token burst is let through when the bucket is
  // full and leaves it in debt, so a large prompt waits but never starves.
  Acquired acquire(std::int64_t estimated_tokens, const std::atomic<bool>* stop, TimePoint deadline);

  // acquire without waiting; what acquire does between its waits, exposed
  // for callers that schedule themselves (and for simulations in tests).
  TryAcquired try_acquire(std::int64_t estimated_tokens);

  // Reports how an attempt ended and gives its slot back: `status` is the
  // HTTP status (0: no answer), `server_delay_s` the wait the server asked
  // for (retry-after), `tokens_used` what the response says was billed (the
  // token budget is corrected by used - estimated; pass the estimate when
  // the response has no usage, 0 when nothing was sent). A 429/529 counts once
  // per decrease: calls that were already in flight when the cap was
  // halved are answering the same overload and do not halve it again.
  // A permit that is empty (moved from, or already reported) is ignored.
  void on_response(Permit& permit, int status, std::optional<double> server_delay_s,
                   std::int64_t tokens_used);

  // An interruptible wait on the limiter's clock, for the client's own
  // backoff between attempts; `deadline` at once when `until` is later.
  WaitResult sleep_until(TimePoint until, const std::atomic<bool>* stop, TimePoint deadline);

  // The configured concurrency became known (the number of workers):
  // the cap's ceiling moves there. Throws Error(bad_input) below 1.
  void set_max_concurrency(int n);

  LimiterState state();

private:
  friend class Permit;
  struct Bucket {
    double rate_per_s = 0;
    double capacity = 0;
    double level = 0;
    TimePoint updated{};
  };

  void release(Permit& permit); // lock held
  void refill(Bucket& b, TimePoint now);
  // When the bucket will hold `cost` (capped at its capacity); `now` if it does.
  TimePoint ready_time(const Bucket& b, double cost, TimePoint now) const;
  TryAcquired try_acquire_locked(std::int64_t estimated_tokens, TimePoint now);
  bool stopped(const std::atomic<bool>* stop) const { return stop && stop->load(); }

  LimiterOptions options_;
  Clock& clock_;
  std::mutex mutex_;
  std::condition_variable released_;
  std::optional<Bucket> requests_, tokens_;
  int cap_ = 0;
  int in_flight_ = 0;
  int successes_ = 0;
  std::uint64_t epoch_ = 0;
  TimePoint not_before_{};
};

} // namespace gate::net

#include <doctest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <gate/net/limiter.hpp>
#include <gate/util/error.hpp>

using gate::net::Acquired;
using gate::net::Limiter;
using gate::net::LimiterOptions;
using gate::net::Permit;
using gate::net::TimePoint;
using gate::net::WaitResult;

namespace {

// Sleeping jumps time forward at once: tests are deterministic and instant.
// `on_sleep` runs after each jump, outside the limiter's lock.
class FakeClock final : public gate::net::Clock {
public:
  TimePoint now() override {
    std::lock_guard g(m_);
    return now_;
  }
  void sleep_until(std::unique_lock<std::mutex>& lock, std::condition_variable&, TimePoint t) override {
    lock.unlock();
    {
      std::lock_guard g(m_);
      now_ = std::max(now_, t);
      ++sleeps;
    }
    if (on_sleep) on_sleep();
    lock.lock();
  }
  void set(TimePoint t) {
    std::lock_guard g(m_);
    now_ = t;
  }
  // Seconds since the clock was made.
  double elapsed() { return std::chrono::duration<double>(now() - start).count(); }
  TimePoint at(double s) const {
    return start + std::chrono::round<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
  }

  const TimePoint start = TimePoint{} + std::chrono::hours(1);
  int sleeps = 0;
  std::function<void()> on_sleep;

private:
  std::mutex m_;
  TimePoint now_ = start;
};

constexpr double k_eps = 1e-6;
const TimePoint k_never = TimePoint::max();

LimiterOptions with_concurrency(int n) {
  LimiterOptions o;
  o.max_concurrency = n;
  return o;
}

// acquire, then report a 200 that used `tokens`; returns when it was granted.
double call(Limiter& limiter, FakeClock& clock, std::int64_t tokens = 0, std::int64_t used = 0) {
  Acquired a = limiter.acquire(tokens, nullptr, k_never);
  REQUIRE(a.result == WaitResult::ready);
  double t = clock.elapsed();
  limiter.on_response(a.permit, 200, std::nullopt, used);
  return t;
}

} // namespace

TEST_CASE("a requests/min budget spreads requests evenly") {
  FakeClock clock;
  LimiterOptions o = with_concurrency(4);
  // 120/min = 2/s; capacity max(1, 2 * 1 s) = 2, so two go at once, then
  // one every 0.5 s: the 10th at (10 - 2) * 0.5 = 4.0 s.
  o.requests_per_min = 120;
  Limiter limiter(o, clock);
  std::vector<double> times;
  for (int i = 0; i < 10; ++i)
    times.push_back(call(limiter, clock));
  CHECK(times[0] == doctest::Approx(0.0).epsilon(k_eps));
  CHECK(times[1] == doctest::Approx(0.0).epsilon(k_eps));
  CHECK(times[2] == doctest::Approx(0.5).epsilon(k_eps));
  CHECK(times[9] == doctest::Approx(4.0).epsilon(k_eps));
  for (std::size_t i = 2; i < times.size(); ++i)
    CHECK(times[i] - times[i - 1] == doctest::Approx(0.5));
}

TEST_CASE("a budget under 60/min still admits one request at a time") {
  FakeClock clock;
  LimiterOptions o = with_concurrency(4);
  // 6/min = 0.1/s; 0.1 * 1 s is under one request, so capacity is 1 and
  // requests go every 1 / 0.1 = 10 s: the 10th at 90 s.
  o.requests_per_min = 6;
  Limiter limiter(o, clock);
  double last = 0;
  for (int i = 0; i < 10; ++i)
    last = call(limiter, clock);
  CHECK(last == doctest::Approx(90.0));
}

TEST_CASE("a tokens/min budget paces by the estimate and settles on what was used") {
  LimiterOptions o = with_concurrency(4);
  // 6000/min = 100 tokens/s, capacity 100 * 1 s = 100 tokens.
  o.tokens_per_min = 6000;

  SUBCASE("estimates above the burst go when the bucket is full and leave it in debt") {
    FakeClock clock;
    Limiter limiter(o, clock);
    // Each 250-token call leaves the bucket at 100 - 250 = -150; refilling
    // to 100 takes 250 / 100 = 2.5 s: calls at 0, 2.5, 5.0.
    CHECK(call(limiter, clock, 250, 250) == doctest::Approx(0.0));
    CHECK(call(limiter, clock, 250, 250) == doctest::Approx(2.5));
    CHECK(call(limiter, clock, 250, 250) == doctest::Approx(5.0));
  }
  SUBCASE("a call that used less than estimated gives the rest back") {
    FakeClock clock;
    Limiter limiter(o, clock);
    // -150 + (250 - 50) = 50; the next needs 100: (100 - 50) / 100 = 0.5 s.
    call(limiter, clock, 250, 50);
    CHECK(call(limiter, clock, 250, 250) == doctest::Approx(0.5));
  }
  SUBCASE("a call that used more than estimated is charged the difference") {
    FakeClock clock;
    Limiter limiter(o, clock);
    // -150 + (250 - 450) = -350; (100 + 350) / 100 = 4.5 s.
    call(limiter, clock, 250, 450);
    CHECK(call(limiter, clock, 250, 250) == doctest::Approx(4.5));
  }
  SUBCASE("small calls share the burst") {
    FakeClock clock;
    Limiter limiter(o, clock);
    // 40 + 40 fit in 100; the third needs 40 with 20 left: 20 / 100 = 0.2 s.
    CHECK(call(limiter, clock, 40, 40) == doctest::Approx(0.0));
    CHECK(call(limiter, clock, 40, 40) == doctest::Approx(0.0));
    CHECK(call(limiter, clock, 40, 40) == doctest::Approx(0.2));
  }
}

TEST_CASE("the cap halves on 429 once per overload and grows back after successes in a row") {
  FakeClock clock;
  LimiterOptions o = with_concurrency(8);
  o.successes_to_grow = 3;
  Limiter limiter(o, clock);
  auto permit = [&] { return limiter.try_acquire(0).permit; };

  Permit a = permit(), b = permit();
  limiter.on_response(a, 429, std::nullopt, 0);
  CHECK(limiter.state().cap == 4); // 8 / 2
  // b was in flight before the halving: the same overload, not a new one.
  limiter.on_response(b, 429, std::nullopt, 0);
  CHECK(limiter.state().cap == 4);

  Permit c = permit();
  limiter.on_response(c, 529, std::nullopt, 0);
  CHECK(limiter.state().cap == 2); // 4 / 2; 529 is Anthropic's "overloaded"
  for (int expected : {1, 1}) {    // 2 / 2 = 1, then never below 1
    Permit p = permit();
    limiter.on_response(p, 429, std::nullopt, 0);
    CHECK(limiter.state().cap == expected);
  }

  auto report = [&](int status) {
    Permit p = permit();
    REQUIRE(p);
    limiter.on_response(p, status, std::nullopt, 0);
    return limiter.state().cap;
  };
  CHECK(report(200) == 1);
  CHECK(report(200) == 1);
  CHECK(report(200) == 2); // third in a row: 1 + 1
  CHECK(report(200) == 2);
  CHECK(report(500) == 2); // neither halves nor counts, and breaks the run
  CHECK(report(200) == 2);
  CHECK(report(200) == 2);
  CHECK(report(200) == 3); // three in a row again
  for (int i = 0; i < 3 * 10; ++i)
    report(200);
  CHECK(limiter.state().cap == 8); // never past the configured concurrency
}

TEST_CASE("the cap bounds calls in flight; a dropped permit frees its slot") {
  FakeClock clock;
  Limiter limiter(with_concurrency(2), clock);
  auto a = limiter.try_acquire(0);
  auto b = limiter.try_acquire(0);
  CHECK(a.permit);
  CHECK(b.permit);
  auto c = limiter.try_acquire(0);
  CHECK_FALSE(c.permit);
  CHECK_FALSE(c.retry_at); // only a finishing call can free a slot
  CHECK(limiter.state().in_flight == 2);

  a.permit = Permit(); // abandoned: no response to learn from
  CHECK(limiter.state().in_flight == 1);
  CHECK(limiter.state().cap == 2);
  auto d = limiter.try_acquire(0);
  CHECK(d.permit);

  // Reporting twice, or a moved-from permit, changes nothing.
  limiter.on_response(d.permit, 429, std::nullopt, 0);
  limiter.on_response(d.permit, 429, std::nullopt, 0);
  CHECK(limiter.state().cap == 1);
  CHECK(limiter.state().in_flight == 1);
}

TEST_CASE("a server delay pauses the whole pool") {
  FakeClock clock;
  Limiter limiter(with_concurrency(4), clock);
  auto first = limiter.try_acquire(0);
  limiter.on_response(first.permit, 429, 2.0, 0);
  CHECK(limiter.state().not_before == clock.at(2.0));

  auto early = limiter.try_acquire(0);
  CHECK_FALSE(early.permit);
  REQUIRE(early.retry_at);
  CHECK(*early.retry_at == clock.at(2.0));

  Acquired a = limiter.acquire(0, nullptr, k_never);
  CHECK(a.result == WaitResult::ready);
  CHECK(clock.elapsed() == doctest::Approx(2.0));
  CHECK(a.waited_s == doctest::Approx(2.0));

  SUBCASE("a shorter delay does not shorten the pause") {
    limiter.on_response(a.permit, 503, 5.0, 0); // at 2 s: until 7 s; the cap stays 2
    Permit p = limiter.acquire(0, nullptr, k_never).permit;
    Permit q = limiter.try_acquire(0).permit;
    REQUIRE(q);
    limiter.on_response(p, 503, 1.0, 0); // at 7 s: 8 s
    CHECK(limiter.state().not_before == clock.at(8.0));
    limiter.on_response(q, 429, 0.5, 0); // would be 7.5 s
    CHECK(limiter.state().not_before == clock.at(8.0));
  }
  SUBCASE("a huge delay is capped and nonsense is ignored") {
    limiter.on_response(a.permit, 429, 1e9, 0);
    CHECK(limiter.state().not_before == clock.at(2.0 + 60.0));
    auto q = limiter.acquire(0, nullptr, k_never);
    TimePoint before = limiter.state().not_before;
    limiter.on_response(q.permit, 429, std::nan(""), 0);
    auto r = limiter.try_acquire(0);
    REQUIRE(r.permit);
    limiter.on_response(r.permit, 429, -3.0, 0);
    CHECK(limiter.state().not_before == before);
  }
}

TEST_CASE("waits end at the deadline") {
  FakeClock clock;
  LimiterOptions o = with_concurrency(1);
  o.poll_s = 0.1;
  Limiter limiter(o, clock);

  SUBCASE("a pause known to outlast the deadline fails at once") {
    auto p = limiter.try_acquire(0);
    limiter.on_response(p.permit, 429, 2.0, 0);
    Acquired a = limiter.acquire(0, nullptr, clock.at(1.0));
    CHECK(a.result == WaitResult::deadline);
    CHECK_FALSE(a.permit);
    CHECK(clock.elapsed() == doctest::Approx(0.0));
    REQUIRE(a.ready_at);
    CHECK(*a.ready_at == clock.at(2.0));
  }
  SUBCASE("a full cap is waited on until the deadline") {
    auto held = limiter.try_acquire(0);
    // Polls at 0.1, 0.2, 0.3, then the deadline at 0.35 s.
    Acquired a = limiter.acquire(0, nullptr, clock.at(0.35));
    CHECK(a.result == WaitResult::deadline);
    CHECK(clock.elapsed() == doctest::Approx(0.35));
    CHECK(clock.sleeps == 4);
    CHECK(limiter.state().in_flight == 1);
  }
  SUBCASE("a backoff longer than the deadline fails at once") {
    CHECK(limiter.sleep_until(clock.at(5.0), nullptr, clock.at(4.0)) == WaitResult::deadline);
    CHECK(clock.elapsed() == doctest::Approx(0.0));
    CHECK(limiter.sleep_until(clock.at(0.25), nullptr, clock.at(4.0)) == WaitResult::ready);
    CHECK(clock.elapsed() == doctest::Approx(0.25));
  }
}

TEST_CASE("the stop flag interrupts a wait") {
  FakeClock clock;
  LimiterOptions o = with_concurrency(2);
  o.poll_s = 0.1;
  Limiter limiter(o, clock);
  std::atomic<bool> stop{false};
  // Set during the fifth poll, as a signal handler would.
  clock.on_sleep = [&] {
    if (clock.sleeps == 5) stop = true;
  };

  SUBCASE("in acquire, during a pool pause") {
    auto p = limiter.try_acquire(0);
    limiter.on_response(p.permit, 429, 30.0, 0);
    Acquired a = limiter.acquire(0, &stop, k_never);
    CHECK(a.result == WaitResult::stopped);
    CHECK_FALSE(a.permit);
    CHECK(clock.elapsed() == doctest::Approx(0.5)); // 5 polls of 0.1 s, not 30 s
    CHECK(a.waited_s == doctest::Approx(0.5));
  }
  SUBCASE("in a backoff sleep") {
    CHECK(limiter.sleep_until(clock.at(30.0), &stop, k_never) == WaitResult::stopped);
    CHECK(clock.elapsed() == doctest::Approx(0.5));
  }
  SUBCASE("a set flag starts nothing new") {
    stop = true;
    CHECK(limiter.acquire(0, &stop, k_never).result == WaitResult::stopped);
    CHECK(limiter.state().in_flight == 0);
  }
}

TEST_CASE("bad options are refused") {
  FakeClock clock;
  auto refused = [&](LimiterOptions o) {
    try {
      Limiter limiter(o, clock);
    } catch (const gate::Error& e) {
      return e.code() == gate::Exit::bad_input && std::string(e.what()).find("limiter: ") == 0;
    }
    return false;
  };
  LimiterOptions o;
  CHECK_FALSE(refused(o));
  o.max_concurrency = 0;
  CHECK(refused(o));
  o = {};
  o.requests_per_min = 0;
  CHECK(refused(o));
  o = {};
  o.tokens_per_min = std::nan("");
  CHECK(refused(o));
  o = {};
  o.burst_s = -1;
  CHECK(refused(o));
  o = {};
  o.successes_to_grow = 0;
  CHECK(refused(o));
  o = {};
  o.poll_s = 0;
  CHECK(refused(o));
}

TEST_CASE("worker threads never exceed the cap") {
  gate::net::SteadyClock clock;
  LimiterOptions o = with_concurrency(3);
  o.successes_to_grow = 2;
  Limiter limiter(o, clock);
  std::atomic<int> in_flight{0}, most{0}, calls{0};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<std::thread> workers;
  for (int w = 0; w < 16; ++w)
    workers.emplace_back([&, w] {
      for (int i = 0; i < 100; ++i) {
        Acquired a = limiter.acquire(10, nullptr, deadline);
        if (a.result != WaitResult::ready) return;
        int now = ++in_flight;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::yield();
        --in_flight;
        ++calls;
        // Some 429s so the cap moves while others wait on it.
        limiter.on_response(a.permit, (i + w) % 10 == 0 ? 429 : 200, std::nullopt, 10);
      }
    });
  for (auto& t : workers)
    t.join();
  CHECK(calls == 16 * 100);
  CHECK(most <= 3);
  CHECK(limiter.state().in_flight == 0);
}

namespace {

// A discrete-event simulation of `workers` tasks sharing one limiter, on one
// thread: each task calls until it gets a 200 or has used its retries. The
// server answers 429 with Retry-After: `delay_s` to every request sent
// before `storm_s`, then 200; each call takes `latency_s`. A task that finds
// the cap full waits for the next call to finish, as acquire's condition
// variable would make it.
struct Storm {
  int workers = 50;
  int max_retries = 20;
  double latency_s = 0.2;
  double storm_s = 10.0;
  double delay_s = 1.0;
};

struct StormResult {
  int requests = 0, rejected = 0, succeeded = 0, failed = 0;
  std::map<int, int> per_second; // requests sent in [k, k + 1) s
  std::vector<std::string> reasons;
};

StormResult simulate(const Storm& s) {
  FakeClock clock;
  LimiterOptions o = with_concurrency(s.workers);
  o.successes_to_grow = 5;
  Limiter limiter(o, clock);

  enum Kind { try_call, answer };
  struct Event {
    TimePoint t;
    int seq, worker;
    Kind kind;
    bool operator>(const Event& e) const { return std::tie(t, seq) > std::tie(e.t, e.seq); }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  int seq = 0;
  std::vector<Permit> permits(s.workers);
  std::vector<double> sent(s.workers);
  std::vector<int> rejections(s.workers);
  std::vector<int> waiting_for_slot;
  for (int w = 0; w < s.workers; ++w)
    events.push({clock.start, seq++, w, try_call});

  StormResult r;
  while (!events.empty()) {
    Event e = events.top();
    events.pop();
    clock.set(e.t);
    if (e.kind == try_call) {
      auto got = limiter.try_acquire(100);
      if (got.permit) {
        permits[e.worker] = std::move(got.permit);
        sent[e.worker] = clock.elapsed();
        ++r.requests;
        ++r.per_second[static_cast<int>(sent[e.worker])];
        events.push({clock.at(sent[e.worker] + s.latency_s), seq++, e.worker, answer});
      } else if (got.retry_at) {
        events.push({*got.retry_at, seq++, e.worker, try_call});
      } else {
        waiting_for_slot.push_back(e.worker);
      }
      continue;
    }
    if (sent[e.worker] < s.storm_s) {
      ++r.rejected;
      limiter.on_response(permits[e.worker], 429, s.delay_s, 0);
      if (++rejections[e.worker] > s.max_retries) {
        ++r.failed;
        r.reasons.push_back("429 after " + std::to_string(s.max_retries) + " retries");
      } else {
        // The client retries at once: the pool pause is the wait.
        events.push({e.t, seq++, e.worker, try_call});
      }
    } else {
      limiter.on_response(permits[e.worker], 200, std::nullopt, 100);
      ++r.succeeded;
    }
    for (int w : waiting_for_slot)
      events.push({e.t, seq++, w, try_call});
    waiting_for_slot.clear();
  }
  return r;
}

} // namespace

TEST_CASE("a 429 storm with 50 workers stays bounded and spread") {
  Storm s;
  StormResult r = simulate(s);
  // Bound: after a 429 the pool sends nothing until Retry-After (1 s) has
  // passed, so a 10 s storm holds at most 10 waves, and a wave is at most
  // the cap, halved by each wave's 429s (once per wave: the rest of the wave
  // was already in flight): 50 + 25 + 12 + 6 + 3 + 1 + 1 + 1 + 1 + 1 = 101
  // rejected, plus one success per task: 101 + 50 = 151. Every worker
  // retrying on its own each second would send 50 * 10 = 500 in the storm.
  CHECK(r.rejected <= 101);
  CHECK(r.requests <= 151);
  CHECK(r.requests == r.rejected + r.succeeded);
  // A task is rejected at most once per wave (10) < 20 retries: all succeed.
  CHECK(r.succeeded == 50);
  CHECK(r.failed == 0);
  // Spread: only the first wave may hold every worker; the halved cap holds
  // each later storm second to 25 or fewer.
  for (const auto& at : r.per_second) {
    const auto second = at.first;
    const auto n = at.second;
    if (second >= s.storm_s) break;
    INFO("second " << second << ": " << n << " requests");
    CHECK(n <= (second == 0 ? 50 : 25));
  }
}

TEST_CASE("in a longer storm every task finishes or fails with its reason") {
  Storm s;
  s.max_retries = 3;
  s.storm_s = 30;
  StormResult r = simulate(s);
  CHECK(r.succeeded + r.failed == 50);
  CHECK(r.failed > 0);
  CHECK(r.reasons.size() == static_cast<std::size_t>(r.failed));
  CHECK(r.reasons.front() == "429 after 3 retries");
  // 30 waves at most: 50 + 25 + 12 + 6 + 3 + 25 * 1 = 121 rejected.
  CHECK(r.rejected <= 121);
}

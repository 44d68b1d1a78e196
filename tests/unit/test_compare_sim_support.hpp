#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gate/compare/compare.hpp>

// The simulated workflows behind the gate's A/A and power tests: seeded,
// deterministic, and built from the same Report and Run structs that `gate
// run` writes, so compare() sees what it sees in CI.
namespace gate::sim {

// The setting every simulation shares: 200 tasks, k = 3, 500 seeded
// comparisons per workflow.
inline constexpr int tasks = 200;
inline constexpr int k = 3;
inline constexpr int comparisons = 500;

// splitmix64 (Steele, Lea, Flood 2014): tiny, and its output is the same on
// every platform, unlike std::uniform_real_distribution.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; } // [0, 1)
};

// True pass probabilities of `tasks` tasks: uniform on [0, 1), or U-shaped
// (arcsine, Beta(½, ½): most tasks nearly always or nearly never pass, as in
// real suites).
enum class Spread { uniform, u_shaped };
inline std::vector<double> true_rates(int tasks, Spread spread, SplitMix64& rng) {
  std::vector<double> p(static_cast<std::size_t>(tasks));
  for (double& x : p) {
    const double u = rng.uniform();
    x = spread == Spread::uniform ? u : std::pow(std::sin(1.5707963267948966 * u), 2);
  }
  return p;
}

inline std::string name(Spread s) { return s == Spread::uniform ? "uniform" : "U-shaped"; }

inline double mean_of(const std::vector<double>& p) {
  double s = 0;
  for (double x : p)
    s += x;
  return s / static_cast<double>(p.size());
}

// Every probability scaled so that the mean falls by `drop` (a rate): each
// task keeps its share of the difficulty.
inline std::vector<double> dropped(std::vector<double> p, double drop) {
  const double f = 1 - drop / mean_of(p);
  for (double& x : p)
    x *= f;
  return p;
}

// `count` distinct task indices out of `tasks`, drawn once for a workflow.
inline std::vector<int> some_tasks(int tasks, int count, SplitMix64& rng) {
  std::vector<int> all(static_cast<std::size_t>(tasks));
  for (int i = 0; i < tasks; ++i)
    all[static_cast<std::size_t>(i)] = i;
  for (int i = 0; i < count; ++i) {
    auto j = static_cast<std::size_t>(i) +
             static_cast<std::size_t>(rng.next() % static_cast<std::uint64_t>(tasks - i));
    std::swap(all[static_cast<std::size_t>(i)], all[j]);
  }
  return {all.begin(), all.begin() + count};
}

inline std::string task_id(int i) { return "t" + std::to_string(1000 + i); }

// One fresh run: its answer is unique to this draw, as a sampled answer is.
inline results::Run fresh_run(int task, int index, double p, const std::string& prompt, SplitMix64& rng) {
  results::Run run;
  run.index = index;
  run.passed = rng.uniform() < p;
  run.answer_sha256 = (run.passed ? "right-" : "wrong-") + std::to_string(rng.next());
  run.prompt_tokens = 100;
  run.latency_ms = 50;
  run.fingerprint = task_id(task) + "-" + prompt;
  return run;
}

inline report::Report finish(report::Report r) {
  r.suite = {"sim", "1", std::string(64, 'c')};
  r.route = {{"model", "m"}};
  report::compute(r, {});
  return r;
}

// Every task run k times, fresh (a recording, or `gate run --mode record`).
inline report::Report fresh(const std::vector<double>& p, int k, SplitMix64& rng,
                            const std::string& prompt = "v1") {
  report::Report r;
  for (int i = 0; i < static_cast<int>(p.size()); ++i) {
    results::Task t;
    t.id = task_id(i);
    for (int j = 0; j < k; ++j)
      t.runs.push_back(fresh_run(i, j, p[static_cast<std::size_t>(i)], prompt, rng));
    r.tasks.push_back(std::move(t));
  }
  return finish(std::move(r));
}

// A pull request that edits the prompts of `edited` tasks: those are sampled
// fresh at `p` under a new request; every other task replays the
// baseline's recorded answers from the cache.
inline report::Report pr_flow(const report::Report& base, const std::vector<double>& p,
                              const std::vector<int>& edited, SplitMix64& rng) {
  report::Report r;
  r.tasks = base.tasks;
  for (results::Task& t : r.tasks)
    for (results::Run& run : t.runs) {
      run.cache_hit = true;
      run.latency_ms = 0;
    }
  for (int i : edited) {
    auto& runs = r.tasks[static_cast<std::size_t>(i)].runs;
    for (std::size_t j = 0; j < runs.size(); ++j)
      runs[j] = fresh_run(i, static_cast<int>(j), p[static_cast<std::size_t>(i)], "v2", rng);
  }
  return finish(std::move(r));
}

// main's cache evicted and recorded again: the same requests, new answers,
// served from the cache to every later run.
inline report::Report rerecorded(const std::vector<double>& p, int k, SplitMix64& rng) {
  report::Report r = fresh(p, k, rng);
  for (results::Task& t : r.tasks)
    for (results::Run& run : t.runs) {
      run.cache_hit = true;
      run.latency_ms = 0;
    }
  return finish(std::move(r));
}

// More runs per task than the baseline had: its runs replayed, then fresh ones.
inline report::Report extended(const report::Report& base, const std::vector<double>& p, int k,
                               SplitMix64& rng) {
  report::Report r;
  r.tasks = base.tasks;
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    auto& runs = r.tasks[i].runs;
    for (results::Run& run : runs) {
      run.cache_hit = true;
      run.latency_ms = 0;
    }
    for (int j = static_cast<int>(runs.size()); j < k; ++j)
      runs.push_back(fresh_run(static_cast<int>(i), j, p[i], "v1", rng));
  }
  return finish(std::move(r));
}

// A verdict that stops the merge (exit 1). Inconclusive with the default
// on_inconclusive (warn) exits 0 and is not an alarm.
inline bool alarm(const compare::Verdict& v) { return v.exit == Exit::threshold; }

} // namespace gate::sim

#include <doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gate/compare/compare.hpp>

// Does the gate stay quiet on noise and catch a real drop? Seeded,
// deterministic simulation with the default thresholds
// (max_success_drop_pp 2, max_consistency_gap_rise_pp 5, alpha 0.05).

using namespace gate::compare;
using gate::report::Report;
using gate::results::Run;
using gate::results::Task;

namespace {

constexpr int tasks = 200;
constexpr int k = 3;
constexpr int comparisons = 500;

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

// Fresh samples of every task at its true pass probability: nothing replayed.
Report sample(const std::vector<double>& p, SplitMix64& rng) {
  Report r;
  r.suite = {"sim", "1", std::string(64, 'c')};
  r.route = {{"model", "m"}};
  for (int i = 0; i < tasks; ++i) {
    Task t;
    t.id = "t" + std::to_string(1000 + i);
    for (int j = 0; j < k; ++j) {
      Run run;
      run.index = j;
      run.passed = rng.uniform() < p[static_cast<std::size_t>(i)];
      run.answer_sha256 = run.passed ? "right" : "wrong";
      run.prompt_tokens = 100;
      run.latency_ms = 50;
      run.fingerprint = t.id;
      run.route = r.route;
      t.runs.push_back(run);
    }
    r.tasks.push_back(std::move(t));
  }
  gate::report::compute(r, {});
  return r;
}

bool all_pass_to_all_fail(const Report& b, const Report& a) {
  for (std::size_t i = 0; i < b.tasks.size(); ++i)
    if (b.task_stats[i].c == k && a.task_stats[i].c == 0) return true;
  return false;
}

} // namespace

TEST_CASE("simulation: A/A false alarms and power against a 10pp drop") {
  SplitMix64 rng{20240611};
  // True pass probabilities spread uniformly over [0, 1).
  std::vector<double> p(tasks);
  double mean = 0;
  for (double& x : p) {
    x = rng.uniform();
    mean += x / tasks;
  }
  // The drop: every probability scaled by (1 − 0.1/p̄), so each task keeps
  // its share of the difficulty and the mean falls by exactly 10pp.
  std::vector<double> dropped(p);
  for (double& x : dropped)
    x *= 1 - 0.1 / mean;

  int gate_aa = 0, naive_drop = 0, naive_flip = 0, gate_drop = 0;
  Options o; // defaults
  for (int c = 0; c < comparisons; ++c) {
    Report base = sample(p, rng);
    Report same = sample(p, rng);
    Report worse = sample(dropped, rng);
    Verdict aa = compare(base, same, o);
    gate_aa += !aa.passed;
    naive_drop += same.stats.overall.success_rate - base.stats.overall.success_rate <= -0.02 + 1e-12;
    naive_flip += all_pass_to_all_fail(base, same);
    gate_drop += !compare(base, worse, o).passed;
  }
  double n = comparisons;
  double gate_rate = gate_aa / n, drop_rate = naive_drop / n, flip_rate = naive_flip / n;
  double power = gate_drop / n;
  MESSAGE("A/A false alarms over " << comparisons << " comparisons: gate " << 100 * gate_rate
                                   << "%, naive 'success fell >= 2pp' " << 100 * drop_rate
                                   << "%, naive 'any 3/3 -> 0/3 flip' " << 100 * flip_rate << "%");
  MESSAGE("true 10pp drop (p_i scaled by " << 1 - 0.1 / mean << "): gate fails " << 100 * power << "%");
  CHECK(gate_rate <= 0.06);
  CHECK(power >= 0.90);
  // Expected: a mean d with sd √((1/6)·(2/3)/200) = 2.36pp falls 2pp about
  // 20% of the time; a 3/3 → 0/3 flip has E[p³(1−p)³] = 1/140 per task, so
  // at least one among 200 about 1 − e^(−200/140) = 76% of the time.
  CHECK(drop_rate > 0.12);
  CHECK(drop_rate >= 3 * gate_rate);
  CHECK(flip_rate > 0.5);
}

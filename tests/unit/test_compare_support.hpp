#pragma once

// Small reports for the verdict tests (test_compare_verdict.cpp,
// test_compare_workflows.cpp) and the verdict renderers' tests. A task's runs
// are either sampled fresh (`counted`: every answer hash new, as sampling at
// a temperature gives) or recorded (`recorded`: the hash depends on the task,
// the replica and the outcome, so `replayed` gives the baseline's answers
// back, as the cache does).

#include <doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <gate/compare/compare.hpp>

namespace gate::compare::test {

using gate::report::Report;
using gate::results::Run;
using gate::results::Task;

inline Run run(int index, bool passed) {
  static int drawn = 0; // tests run on one thread
  Run r;
  r.index = index;
  r.passed = passed;
  r.answer = passed ? "Paris" : "Lyon";
  r.answer_sha256 = r.answer + "#" + std::to_string(++drawn);
  if (!passed) r.checks.push_back({"contains Paris", false, "answer lacked Paris"});
  r.prompt_tokens = 100;
  r.completion_tokens = 20;
  r.latency_ms = 100;
  r.fingerprint = "fp";
  r.route = {{"model", "m1"}};
  return r;
}

// One run per outcome, indices 0, 1, ...; each task gets its own fingerprint.
inline Task task(const std::string& id, const std::vector<bool>& outcomes,
                 const std::string& scenario = "s") {
  Task t;
  t.id = id;
  t.scenario = scenario;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    t.runs.push_back(run(static_cast<int>(i), outcomes[i]));
    t.runs.back().fingerprint = "fp-" + id;
  }
  return t;
}

// c passes then n − c failures.
inline Task counted(const std::string& id, int c, int n) {
  std::vector<bool> o;
  for (int i = 0; i < n; ++i)
    o.push_back(i < c);
  return task(id, o);
}

// As `counted`, recorded: the answer hashes are the same on every call.
inline Task recorded(const std::string& id, int c, int n) {
  Task t = counted(id, c, n);
  for (Run& r : t.runs)
    r.answer_sha256 = id + "/" + std::to_string(r.index) + "/" + r.answer;
  return t;
}

// As `recorded`, with every run replayed from the cache.
inline Task replayed(const std::string& id, int c, int n) {
  Task t = recorded(id, c, n);
  for (Run& r : t.runs) {
    r.cache_hit = true;
    r.latency_ms = 0;
  }
  return t;
}

// The runs of `t` replayed from the cache, with the verdict of each run
// given anew but the answer kept: what a changed check does.
inline Task regraded(Task t, const std::vector<bool>& outcomes) {
  for (std::size_t i = 0; i < t.runs.size(); ++i) {
    t.runs[i].cache_hit = true;
    t.runs[i].latency_ms = 0;
    t.runs[i].passed = outcomes[i];
  }
  return t;
}

inline Report report(std::vector<Task> tasks) {
  Report r;
  r.suite = {"demo", "1", std::string(64, 'a')};
  r.route = {{"model", "m1"}};
  std::sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.id < b.id; });
  r.tasks = std::move(tasks);
  gate::report::compute(r, {});
  return r;
}

inline std::string id(int i) { return (i < 10 ? "t0" : "t") + std::to_string(i); }

// string_view, as in json::as_object: g++ 13+ -Wdangling-reference.
inline const MetricRow& row(const Verdict& v, std::string_view key) {
  auto it =
      std::find_if(v.metrics.begin(), v.metrics.end(), [&](const MetricRow& r) { return r.key == key; });
  REQUIRE(it != v.metrics.end());
  return *it;
}

} // namespace gate::compare::test

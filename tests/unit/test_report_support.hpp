#pragma once

// Shared by test_report_json.cpp (writing, round trips) and
// test_report_read.cpp (the strict reader): a sample report, field-by-field
// comparisons, and small text helpers.

#include <doctest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <string>

#include <gate/report/report.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

namespace gate::report::test {

inline results::Run make_run(int index, bool passed, std::int64_t prompt, std::int64_t completion) {
  results::Run r;
  r.index = index;
  r.passed = passed;
  r.checks = {{"contains \"Paris\"", passed, passed ? "" : "answer lacks \"Paris\"\nline 2"}};
  r.answer = passed ? "Paris" : "Lyon, I think";
  r.answer_sha256 = std::string(64, passed ? 'a' : 'b');
  r.prompt_tokens = prompt;
  r.completion_tokens = completion;
  r.latency_ms = 59699.075038410956; // Boost.JSON 1.81 reads this one ulp off
  r.fingerprint = "fp-" + std::to_string(index);
  r.route = {{"model", "m-1"}, {"temperature", "0"}};
  return r;
}

// Three tasks: "a" passes 2 of 3, "b" 3 of 3 with tool calls, "c" has one
// errored run and a different route on one run.
inline Report sample() {
  Report r;
  r.gate_version = "0.1.0";
  r.suite = {"capitals", "2", std::string(64, 'f')};
  r.config = boost::json::parse(R"({"runs":3,"token_band_pct":25,"model":{"name":"m-1","temperature":0.7}})");
  r.route = {{"model", "m-1"}, {"base_url_host", "api.example.com"}};
  r.started_at = "2026-01-02T03:04:05Z";
  r.finished_at = "2026-01-02T03:05:06Z";
  results::Task a{"a", "geo", "easy", "g1", {}};
  a.runs = {make_run(0, true, 100, 10), make_run(1, false, 100, 12), make_run(2, true, 100, 10)};
  a.runs[1].latency_ms = 0.1;
  a.runs[2].cache_hit = true;
  a.runs[2].latency_ms = 0;
  results::Task b{"b", "geo", "hard", "g1", {}};
  b.runs = {make_run(0, true, 50, 5), make_run(1, true, 50, 5), make_run(2, true, 50, 5)};
  for (auto& run : b.runs)
    run.tool_calls = {{"search", std::string(64, '1')}, {"open", std::string(64, '2')}};
  b.runs[1].attempts = 3;
  b.runs[2].answer_truncated = true;
  b.runs[2].latency_ms = 1e-7;
  results::Task c{"c", "", "", "", {}};
  c.runs = {make_run(0, false, 0, 0), make_run(1, true, 10, 1)};
  c.runs[0].error = "timeout";
  c.runs[0].error_message = "no response within 60 s";
  c.runs[0].checks.clear();
  c.runs[0].usage_known = false;
  c.runs[1].route["temperature"] = "0.7";
  r.tasks = {a, b, c};
  report::compute(r, report::options_from_config(r.config, "test"));
  return r;
}

inline void check_same(const results::Run& x, const results::Run& y) {
  CHECK(x.index == y.index);
  CHECK(x.passed == y.passed);
  CHECK(x.error == y.error);
  CHECK(x.error_message == y.error_message);
  REQUIRE(x.checks.size() == y.checks.size());
  for (std::size_t i = 0; i < x.checks.size(); ++i) {
    CHECK(x.checks[i].label == y.checks[i].label);
    CHECK(x.checks[i].passed == y.checks[i].passed);
    CHECK(x.checks[i].detail == y.checks[i].detail);
  }
  CHECK(x.answer == y.answer);
  CHECK(x.answer_truncated == y.answer_truncated);
  CHECK(x.answer_sha256 == y.answer_sha256);
  CHECK(x.prompt_tokens == y.prompt_tokens);
  CHECK(x.completion_tokens == y.completion_tokens);
  CHECK(x.usage_known == y.usage_known);
  CHECK(x.latency_ms == y.latency_ms); // exact, not approximate
  CHECK(x.cache_hit == y.cache_hit);
  CHECK(x.attempts == y.attempts);
  CHECK(x.fingerprint == y.fingerprint);
  REQUIRE(x.tool_calls.size() == y.tool_calls.size());
  for (std::size_t i = 0; i < x.tool_calls.size(); ++i) {
    CHECK(x.tool_calls[i].name == y.tool_calls[i].name);
    CHECK(x.tool_calls[i].arguments_sha256 == y.tool_calls[i].arguments_sha256);
  }
}

inline void check_same(const metrics::TaskStats& x, const metrics::TaskStats& y) {
  CHECK(x.n == y.n);
  CHECK(x.c == y.c);
  CHECK(x.errored == y.errored);
  CHECK(x.rate == y.rate);
  CHECK(x.pass_at_k == y.pass_at_k);
  CHECK(x.pass_hat_k == y.pass_hat_k);
  CHECK(x.mixed == y.mixed);
  CHECK(x.outcome_consistent == y.outcome_consistent);
  CHECK(x.answer_consistent == y.answer_consistent);
  CHECK(x.trajectory_consistent == y.trajectory_consistent);
  CHECK(x.trajectory_similarity == y.trajectory_similarity);
  CHECK(x.first_divergence == y.first_divergence);
  CHECK(x.route_polluted == y.route_polluted);
  CHECK(x.route_diff == y.route_diff);
  CHECK(x.token_band_outliers == y.token_band_outliers);
  CHECK(x.prompt_tokens == y.prompt_tokens);
  CHECK(x.completion_tokens == y.completion_tokens);
  CHECK(x.cached_tokens == y.cached_tokens);
  CHECK(x.paid_tokens == y.paid_tokens);
  CHECK(x.usage_missing == y.usage_missing);
  CHECK(x.priced == y.priced);
  CHECK(x.cost_usd == y.cost_usd);
  CHECK(x.cached_cost_usd == y.cached_cost_usd);
}

inline void check_same(const metrics::RateSummary& x, const metrics::RateSummary& y) {
  CHECK(x.tasks == y.tasks);
  CHECK(x.runs == y.runs);
  CHECK(x.passed == y.passed);
  CHECK(x.success_rate == y.success_rate);
  CHECK(x.interval.low == y.interval.low);
  CHECK(x.interval.high == y.interval.high);
  CHECK(x.interval_method == y.interval_method);
}

inline void check_same(const metrics::SuiteStats& x, const metrics::SuiteStats& y) {
  check_same(x.overall, y.overall);
  REQUIRE(x.by_scenario.size() == y.by_scenario.size());
  for (const auto& [k, v] : x.by_scenario)
    check_same(v, y.by_scenario.at(k));
  REQUIRE(x.by_difficulty.size() == y.by_difficulty.size());
  for (const auto& [k, v] : x.by_difficulty)
    check_same(v, y.by_difficulty.at(k));
  CHECK(x.pass_at_k == y.pass_at_k);
  CHECK(x.pass_hat_k == y.pass_hat_k);
  CHECK(x.consistency_gap_pp == y.consistency_gap_pp);
  CHECK(x.mixed_share_pp == y.mixed_share_pp);
  CHECK(x.answer_inconsistency_pp == y.answer_inconsistency_pp);
  CHECK(x.trajectory_inconsistency_pp == y.trajectory_inconsistency_pp);
  CHECK(x.trajectory_similarity == y.trajectory_similarity);
  CHECK(x.group_completion == y.group_completion);
  CHECK(x.first_divergence_histogram == y.first_divergence_histogram);
  CHECK(x.token_band_outliers == y.token_band_outliers);
  CHECK(x.polluted_tasks == y.polluted_tasks);
  CHECK(x.total_runs == y.total_runs);
  CHECK(x.errored_runs == y.errored_runs);
  CHECK(x.error_rate == y.error_rate);
  CHECK(x.errors_by_bucket == y.errors_by_bucket);
  CHECK(x.prompt_tokens == y.prompt_tokens);
  CHECK(x.completion_tokens == y.completion_tokens);
  CHECK(x.cached_tokens == y.cached_tokens);
  CHECK(x.paid_tokens == y.paid_tokens);
  CHECK(x.tokens_per_task == y.tokens_per_task);
  CHECK(x.runs_without_usage == y.runs_without_usage);
  CHECK(x.cache_hits == y.cache_hits);
  CHECK(x.priced == y.priced);
  CHECK(x.cost_usd == y.cost_usd);
  CHECK(x.cached_cost_usd == y.cached_cost_usd);
  for (auto [lx, ly] : {std::pair{x.call_latency, y.call_latency}, std::pair{x.run_latency, y.run_latency}}) {
    CHECK(lx.count == ly.count);
    CHECK(lx.p50 == ly.p50);
    CHECK(lx.p95 == ly.p95);
    CHECK(lx.max == ly.max);
  }
}

inline void check_same(const Report& x, const Report& y) {
  CHECK(x.schema == y.schema);
  CHECK(x.gate_version == y.gate_version);
  CHECK(x.suite.name == y.suite.name);
  CHECK(x.suite.version == y.suite.version);
  CHECK(x.suite.sha256 == y.suite.sha256);
  CHECK(json::canonical(x.config) == json::canonical(y.config));
  CHECK(x.route == y.route);
  CHECK(x.started_at == y.started_at);
  CHECK(x.finished_at == y.finished_at);
  CHECK(x.complete == y.complete);
  CHECK(x.incomplete_reason == y.incomplete_reason);
  REQUIRE(x.tasks.size() == y.tasks.size());
  REQUIRE(x.task_stats.size() == y.task_stats.size());
  for (std::size_t i = 0; i < x.tasks.size(); ++i) {
    CHECK(x.tasks[i].id == y.tasks[i].id);
    CHECK(x.tasks[i].scenario == y.tasks[i].scenario);
    CHECK(x.tasks[i].difficulty == y.tasks[i].difficulty);
    CHECK(x.tasks[i].group == y.tasks[i].group);
    REQUIRE(x.tasks[i].runs.size() == y.tasks[i].runs.size());
    for (std::size_t j = 0; j < x.tasks[i].runs.size(); ++j) {
      check_same(x.tasks[i].runs[j], y.tasks[i].runs[j]);
      // A run read back may leave its route to the report's shared one.
      CHECK(report::route_of(x, x.tasks[i].runs[j]) == report::route_of(y, y.tasks[i].runs[j]));
    }
    check_same(x.task_stats[i], y.task_stats[i]);
  }
  check_same(x.stats, y.stats);
}

// The message of the bad_input error that from_json throws ("" if none).
inline std::string error_of(const std::string& text) {
  try {
    report::from_json(text, "base.json");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    return e.what();
  }
  return "";
}

inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

// 1-based line of the first occurrence of `needle`.
inline std::size_t line_of(const std::string& text, const std::string& needle) {
  auto pos = text.find(needle);
  REQUIRE(pos != std::string::npos);
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

} // namespace gate::report::test

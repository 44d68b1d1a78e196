#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <gate/report/report.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

using namespace gate;
using report::Report;

namespace {

results::Run make_run(int index, bool passed, std::int64_t prompt, std::int64_t completion) {
  results::Run r;
  r.index = index;
  r.passed = passed;
  r.checks = {{"contains \"Paris\"", passed, passed ? "" : "answer lacks \"Paris\"\nline 2", ""}};
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
Report sample() {
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

void check_same(const results::Run& x, const results::Run& y) {
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

void check_same(const metrics::TaskStats& x, const metrics::TaskStats& y) {
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
}

void check_same(const metrics::RateSummary& x, const metrics::RateSummary& y) {
  CHECK(x.tasks == y.tasks);
  CHECK(x.runs == y.runs);
  CHECK(x.passed == y.passed);
  CHECK(x.success_rate == y.success_rate);
  CHECK(x.interval.low == y.interval.low);
  CHECK(x.interval.high == y.interval.high);
  CHECK(x.interval_method == y.interval_method);
}

void check_same(const metrics::SuiteStats& x, const metrics::SuiteStats& y) {
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
  for (auto [lx, ly] : {std::pair{x.call_latency, y.call_latency}, std::pair{x.run_latency, y.run_latency}}) {
    CHECK(lx.count == ly.count);
    CHECK(lx.p50 == ly.p50);
    CHECK(lx.p95 == ly.p95);
    CHECK(lx.max == ly.max);
  }
}

void check_same(const Report& x, const Report& y) {
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
std::string error_of(const std::string& text) {
  try {
    report::from_json(text, "base.json");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    return e.what();
  }
  return "";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

// 1-based line of the first occurrence of `needle`.
std::size_t line_of(const std::string& text, const std::string& needle) {
  auto pos = text.find(needle);
  REQUIRE(pos != std::string::npos);
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n'));
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

} // namespace

TEST_CASE("to_json then from_json gives the same report, and the same bytes again") {
  Report r = sample();
  std::string text = report::to_json(r);
  Report back = report::from_json(text, "mem.json");
  check_same(r, back);
  CHECK(report::to_json(back) == text);
}

TEST_CASE("the layout is one header field per line and one task per line") {
  Report r = sample();
  std::string text = report::to_json(r);
  CHECK(text.rfind("{\n\"schema\": \"gate.report/1\",\n\"gate_version\": \"0.1.0\",\n", 0) == 0);
  // Header keys in their documented order, each at the start of a line.
  std::size_t last = 0;
  for (const char* key : {"\n\"suite\": ", "\n\"config\": ", "\n\"route\": ", "\n\"started_at\": ",
                          "\n\"finished_at\": ", "\n\"complete\": true", "\n\"incomplete_reason\": \"\"",
                          "\n\"stats\": {\"overall\":", "\n\"tasks\": [\n"}) {
    auto pos = text.find(key);
    REQUIRE(pos != std::string::npos);
    CHECK(pos > last);
    last = pos;
  }
  // Three tasks → three lines that start with {"id":, in id order.
  CHECK(contains(
      text,
      "\n{\"id\":\"a\",\"scenario\":\"geo\",\"difficulty\":\"easy\",\"group\":\"g1\",\"stats\":{\"n\":3,"));
  CHECK(line_of(text, "{\"id\":\"b\"") == line_of(text, "{\"id\":\"a\"") + 1);
  CHECK(line_of(text, "{\"id\":\"c\"") == line_of(text, "{\"id\":\"a\"") + 2);
  CHECK(text.size() >= 6);
  CHECK(text.substr(text.size() - 5) == "\n]\n}\n");
  // Config keys sorted; integers without a fraction; no secret-bearing key.
  CHECK(contains(
      text,
      "\"config\": {\"model\":{\"name\":\"m-1\",\"temperature\":0.7},\"runs\":3,\"token_band_pct\":25},"));
  // Histogram keys are strings; absent values are null.
  CHECK(contains(text, "\"first_divergence\":null"));
  // Task c: the first run errored, the second did not → n = 1, c = 1.
  CHECK(contains(
      text, "{\"id\":\"c\",\"scenario\":\"\",\"difficulty\":\"\",\"group\":\"\",\"stats\":{\"n\":1,\"c\":1,"
            "\"errored\":1,\"rate\":1,"));
}

TEST_CASE("compute recomputes task and suite stats from the runs") {
  Report r = sample();
  // a: 2 of 3, b: 3 of 3, c: 1 of 1 (one errored) → 6 passed of 7 runs.
  CHECK(r.task_stats[0].c == 2);
  CHECK(r.task_stats[0].n == 3);
  CHECK(r.stats.overall.passed == 6);
  CHECK(r.stats.overall.runs == 7);
  CHECK(r.stats.overall.success_rate == doctest::Approx(6.0 / 7.0));
  CHECK(r.stats.errored_runs == 1);
  CHECK(r.stats.total_runs == 8);
  // Stored stats are not trusted: an edited "n" is recomputed on reading.
  std::string text = replaced(report::to_json(r), "\"stats\":{\"n\":3,", "\"stats\":{\"n\":99,");
  CHECK(report::from_json(text, "x").task_stats[0].n == 3);
}

TEST_CASE("from_json takes token_band_pct from the config") {
  // Task tokens 110, 110, 150 (prompt + completion): median 110; 150 is
  // 40 away, 36% of the median → outside ±25%, inside ±50%.
  Report r = sample();
  r.tasks.resize(1);
  r.tasks[0].runs[0].prompt_tokens = 100;
  r.tasks[0].runs[0].completion_tokens = 10;
  r.tasks[0].runs[1].prompt_tokens = 100;
  r.tasks[0].runs[1].completion_tokens = 10;
  r.tasks[0].runs[2].prompt_tokens = 140;
  r.tasks[0].runs[2].completion_tokens = 10;
  r.config = boost::json::parse(R"({"token_band_pct":25})");
  report::compute(r, report::options_from_config(r.config, "t"));
  std::string at25 = report::to_json(r);
  CHECK(report::from_json(at25, "x").task_stats[0].token_band_outliers == std::vector<int>{2});
  std::string at50 = replaced(at25, "\"token_band_pct\":25", "\"token_band_pct\":50");
  CHECK(report::from_json(at50, "x").task_stats[0].token_band_outliers.empty());
  // Without the key the default of 25% applies.
  std::string none = replaced(at25, "{\"token_band_pct\":25}", "{}");
  CHECK(report::from_json(none, "x").task_stats[0].token_band_outliers == std::vector<int>{2});
  CHECK(contains(error_of(replaced(at25, "\"token_band_pct\":25", "\"token_band_pct\":\"25\"")),
                 "base.json: config field \"token_band_pct\" must be a number"));
  CHECK(contains(error_of(replaced(at25, "\"token_band_pct\":25", "\"token_band_pct\":-1")), ">= 0"));
}

TEST_CASE("from_json takes include_polluted from the config") {
  // a: pass, fail on two different routes (polluted, mixed); b: pass, pass.
  // Polluted left out: gap over b alone = 0. Included: pass@2 = (1 + 1)/2
  // = 1, pass^2 = (0 + 1)/2 = 0.5 (C(1,2)/C(2,2) = 0 for a) → 50 pp.
  Report r = sample();
  r.tasks.resize(2);
  r.tasks[0].runs.resize(2);
  r.tasks[0].runs[1].route["temperature"] = "0.7";
  r.tasks[1].runs.resize(2);
  r.config = boost::json::parse(R"({"include_polluted":false})");
  report::compute(r, report::options_from_config(r.config, "t"));
  std::string text = report::to_json(r);
  CHECK(report::from_json(text, "x").stats.consistency_gap_pp == doctest::Approx(0.0));
  std::string included = replaced(text, "\"include_polluted\":false", "\"include_polluted\":true");
  CHECK(report::from_json(included, "x").stats.consistency_gap_pp == doctest::Approx(50.0));
  CHECK(error_of(replaced(text, "\"include_polluted\":false", "\"include_polluted\":1")) ==
        "base.json: config field \"include_polluted\" must be true or false");
}

TEST_CASE("from_json sorts tasks by id and rejects a duplicate id") {
  Report r = sample();
  std::swap(r.tasks[0], r.tasks[2]);
  std::swap(r.task_stats[0], r.task_stats[2]);
  Report back = report::from_json(report::to_json(r), "x");
  CHECK(back.tasks[0].id == "a");
  CHECK(back.tasks[2].id == "c");
  r.tasks[1].id = "a";
  CHECK(error_of(report::to_json(r)) == "base.json: duplicate task id \"a\"");
}

TEST_CASE("malformed files are bad input naming the file and position") {
  std::string good = report::to_json(sample());
  SUBCASE("truncated") {
    std::string e = error_of(good.substr(0, good.size() / 2));
    CHECK(e.rfind("base.json:", 0) == 0);
    CHECK(contains(e, "incomplete"));
    CHECK(contains(error_of(""), "base.json:1:1:"));
  }
  SUBCASE("unknown schema") {
    CHECK(error_of(replaced(good, "gate.report/1", "gate.report/9")) ==
          "base.json: unknown schema \"gate.report/9\"; this gate reads gate.report/1");
    CHECK(
        contains(error_of(replaced(good, "\"schema\": \"gate.report/1\",", "")), "missing field \"schema\""));
  }
  SUBCASE("NaN and overflow, with the line of the task") {
    std::size_t line = line_of(good, "{\"id\":\"b\"");
    std::string nan = replaced(good, "\"latency_ms\":1e-07", "\"latency_ms\":NaN");
    CHECK(error_of(nan).rfind("base.json:" + std::to_string(line) + ":", 0) == 0);
    std::string inf = replaced(good, "\"latency_ms\":1e-07", "\"latency_ms\":1e999");
    std::string e = error_of(inf);
    CHECK(e.rfind("base.json:" + std::to_string(line) + ":", 0) == 0);
    CHECK(contains(e, "out of range"));
  }
  SUBCASE("duplicate key") {
    std::string e = error_of(replaced(good, "{\"index\":1,", "{\"index\":1,\"index\":1,"));
    CHECK(e.rfind("base.json:" + std::to_string(line_of(good, "{\"id\":\"a\"")) + ":", 0) == 0);
    CHECK(contains(e, "duplicate key \"index\""));
  }
  SUBCASE("missing field names the task and the field") {
    std::size_t b = good.find("{\"id\":\"b\"");
    std::string text = good.substr(0, b) + replaced(good.substr(b), ",\"attempts\":3", "");
    CHECK(error_of(text) == "base.json: task \"b\" run 1: missing field \"attempts\"");
    CHECK(error_of(replaced(good, "\"scenario\":\"geo\",", "")) ==
          "base.json: task \"a\": missing field \"scenario\"");
    CHECK(error_of(replaced(good, "\"gate_version\": \"0.1.0\",\n", "")) ==
          "base.json: missing field \"gate_version\"");
    CHECK(error_of(replaced(good, "{\"id\":\"a\",", "{")) == "base.json: task 0: missing field \"id\"");
  }
  SUBCASE("wrong types, unknown fields and impossible runs") {
    CHECK(error_of(replaced(good, "{\"index\":1,", "{\"index\":\"1\",")) ==
          "base.json: task \"a\" run 1: field \"index\" must be an integer");
    CHECK(error_of(replaced(good, "\"prompt_tokens\":100,", "\"prompt_tokens\":-1,")) ==
          "base.json: task \"a\" run 0: field \"prompt_tokens\" must be >= 0");
    CHECK(error_of(replaced(good, "\"answer_truncated\":false,", "\"answer_truncated\":false,\"x\":1,")) ==
          "base.json: task \"a\" run 0: unknown field \"x\"");
    CHECK(error_of(replaced(good, "\"tasks\": [", "\"tasks\": {")).rfind("base.json:", 0) == 0);
    CHECK(error_of(replaced(good, "\"route\": {", "\"route\": {\"n\":1,")) ==
          "base.json: route field \"n\" must be a string");
    // Run 1 of task a failed its check; claiming it passed is a contradiction.
    CHECK(error_of(replaced(good, "{\"index\":1,\"passed\":false", "{\"index\":1,\"passed\":true")) ==
          "base.json: task \"a\" run 1: \"passed\" is true but check \"contains \\\"Paris\\\"\" failed");
    CHECK(contains(error_of(replaced(good, "\"passed\":false,\"error\":\"timeout\"",
                                     "\"passed\":true,\"error\":\"timeout\"")),
                   "\"passed\" is true but the run errored (\"timeout\")"));
  }
  SUBCASE("nesting deeper than 64") {
    std::string deep = replaced(good, "\"config\": {",
                                "\"config\": {\"x\":" + std::string(70, '[') + std::string(70, ']') + ",");
    CHECK(contains(error_of(deep), "deeper than the limit"));
  }
}

TEST_CASE("strings are redacted and made valid UTF-8 on the way out") {
  Report r = sample();
  r.tasks[0].runs[1].answer = "bad \xff byte";
  r.tasks[0].runs[1].checks[0].detail = "key sk-canary-7f3a9b1c2d4e5f60 echoed";
  report::compute(r, {});
  gate::register_secret("sk-canary-7f3a9b1c2d4e5f60");
  std::string text = report::to_json(r);
  CHECK(valid_utf8(text));
  CHECK_FALSE(contains(text, "sk-canary"));
  CHECK_FALSE(contains(text, "2d4e5f60"));
  CHECK(contains(text, "key [REDACTED] echoed"));
  Report back = report::from_json(text, "x");
  CHECK(back.tasks[0].runs[1].answer == "bad \xEF\xBF\xBD byte");
}

TEST_CASE("write and read go through a file; a missing file is bad input") {
  auto dir = std::filesystem::temp_directory_path() / ("gate-report-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Report r = sample();
  report::write(r, dir / "report.json");
  Report back = report::read(dir / "report.json");
  check_same(r, back);
  try {
    report::read(dir / "missing.json");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    CHECK(contains(e.what(), "missing.json"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("100,000 runs serialize to one line per task") {
  Report r;
  r.schema = report::k_schema;
  r.suite = {"big", "1", std::string(64, '0')};
  r.tasks.resize(20000);
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    auto& t = r.tasks[i];
    t.id = "task-" + std::to_string(i);
    t.scenario = "s" + std::to_string(i % 7);
    for (int j = 0; j < 5; ++j) {
      results::Run run = make_run(j, (i + j) % 3 != 0, 300 + j, 40);
      run.answer = std::string(200, 'x');
      run.latency_ms = 123.456 + j;
      t.runs.push_back(run);
    }
  }
  r.task_stats.resize(r.tasks.size());
  // The realistic case: a key is registered, so every string is checked.
  gate::register_secret("sk-canary-7f3a9b1c2d4e5f60");
  std::string text = report::to_json(r);
  // 14 header lines, "runs_route" (the runs' route is not the empty configured one), one line a task.
  CHECK(std::count(text.begin(), text.end(), '\n') == 20000 + 15);
}

TEST_CASE("a run's route is written only where it differs from the report's") {
  Report r = sample();
  r.route = {{"model", "m-1"}, {"temperature", "0"}}; // what make_run gives every run
  r.tasks[2].runs[1].route["temperature"] = "0.7";    // task c is polluted
  report::compute(r, {});
  std::string text = report::to_json(r);
  // Only the odd run carries a route; everything else uses the report's.
  std::size_t routes = 0;
  for (std::size_t pos = 0; (pos = text.find("\"route\":{", pos)) != std::string::npos; ++pos)
    ++routes;
  CHECK(routes == 1);
  Report back = report::from_json(text, "x");
  // A task whose runs all used the report's route keeps them empty ...
  CHECK(back.tasks[0].runs[0].route.empty());
  CHECK_FALSE(back.task_stats[0].route_polluted);
  // ... and a mixed task has the report's route spelled out on the others,
  // so that pollution is found with the field that differs.
  CHECK(back.tasks[2].runs[0].route == r.route);
  CHECK(back.tasks[2].runs[1].route.at("temperature") == "0.7");
  CHECK(back.task_stats[2].route_polluted);
  CHECK(back.task_stats[2].route_diff == std::vector<std::string>{"temperature"});
  CHECK(report::to_json(back) == text);
}

TEST_CASE("reports that spell out every run's route (older writers) read the same") {
  Report r = sample();
  r.route = {{"model", "m-1"}, {"temperature", "0"}};
  for (auto& t : r.tasks)
    for (auto& run : t.runs)
      run.route = r.route;
  report::compute(r, {});
  std::string compact = report::to_json(r);
  std::string spelled = compact;
  const std::string route = ",\"route\":{\"model\":\"m-1\",\"temperature\":\"0\"},\"tool_calls\"";
  for (std::size_t pos = 0; (pos = spelled.find(",\"tool_calls\"", pos)) != std::string::npos;
       pos += route.size())
    spelled.replace(pos, 13, route);
  CHECK(spelled.size() > compact.size());
  Report back = report::from_json(spelled, "old.json");
  CHECK(report::to_json(back) == compact);
  CHECK(back.stats.polluted_tasks == 0);
}

TEST_CASE("a file read in pieces gives what the text gives, and errors keep their line") {
  auto dir = std::filesystem::temp_directory_path() / ("gate-report-chunks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // About 20 MiB: tokens straddle the 16 MiB windows a file is mapped in,
  // and the 1 MiB pieces a pipe is read in.
  Report r = sample();
  for (int i = 0; i < 4000; ++i) {
    results::Task t = r.tasks[1];
    t.id = "t" + std::to_string(i);
    t.runs[0].answer = std::string(4200 + static_cast<std::size_t>(i % 97) * 7, 'x') + "\xC3\xA9";
    t.runs[1].latency_ms = 0.1 * i + 1e-9;
    r.tasks.push_back(t);
  }
  std::sort(r.tasks.begin(), r.tasks.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  report::compute(r, {});
  const std::string text = report::to_json(r);
  CHECK(text.size() > 17u << 20);
  { std::ofstream(dir / "big.json", std::ios::binary) << text; }
  auto check_equal = [&](const std::string& again) {
    const auto diff = std::mismatch(again.begin(), again.end(), text.begin(), text.end());
    CAPTURE(again.substr(static_cast<std::size_t>(std::max<long>(0, diff.first - again.begin() - 80)), 160));
    CAPTURE(text.substr(static_cast<std::size_t>(std::max<long>(0, diff.second - text.begin() - 80)), 160));
    CHECK(again.size() == text.size());
    CHECK(diff.first == again.end());
  };
  check_equal(report::to_json(report::read(dir / "big.json")));

  // A pipe cannot be mapped: it is read piece by piece, to the same report.
  const auto fifo = dir / "pipe.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << text; });
  Report from_pipe;
  try {
    from_pipe = report::read(fifo);
  } catch (...) {
    writer.join();
    throw;
  }
  writer.join();
  check_equal(report::to_json(from_pipe));

  const std::string bad = replaced(text, "{\"id\":\"t3999\"", "{\"id\":\"t3999\",\"id\":\"x\"");
  { std::ofstream(dir / "bad.json", std::ios::binary) << bad; }
  const std::string expected_prefix =
      (dir / "bad.json").string() + ":" + std::to_string(line_of(bad, "\"t3999\"")) + ":";
  try {
    report::read(dir / "bad.json");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).rfind(expected_prefix, 0) == 0);
    CHECK(contains(e.what(), "duplicate key \"id\""));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("containers where a value is expected, and the reverse, are named") {
  std::string good = report::to_json(sample());
  CHECK(error_of(replaced(good, "\"answer\":\"Paris\"", "\"answer\":[\"Paris\"]")) ==
        "base.json: task \"a\" run 0: field \"answer\" must be a string");
  CHECK(error_of(replaced(good, "\"checks\":[{", "\"checks\":{\"x\":[{")) ==
        "base.json: task \"a\" run 0: field \"checks\" must be an array");
  CHECK(error_of(replaced(good, "\"runs\":[{", "\"runs\":[1,{")) ==
        "base.json: task \"a\": expected a JSON object in \"runs\"");
  CHECK(error_of(replaced(good, "{\"label\":", "{\"label\":1,\"x\":")) ==
        "base.json: task \"a\" run 0: check 0: field \"label\" must be a string");
  CHECK(error_of(replaced(good, "\"config\": {", "\"config\": [{")).rfind("base.json:", 0) == 0);
  CHECK(error_of("[1]") == "base.json: expected a JSON object");
  CHECK(error_of(replaced(good, "\"tasks\": [\n{", "\"tasks\": [\n7,{")) ==
        "base.json: task 0: expected a JSON object");
}

TEST_CASE("the config keeps its exact numbers and rejects a duplicate key anywhere") {
  Report r = sample();
  r.config = boost::json::parse(
      R"({"a":{"b":[1,2.5,{"c":null}],"d":18446744073709551615},"x":0.30000000000000004})");
  report::compute(r, {});
  std::string text = report::to_json(r);
  Report back = report::from_json(text, "x");
  CHECK(back.config == r.config);
  CHECK(report::to_json(back) == text);
  CHECK(contains(error_of(replaced(text, "{\"c\":null}", "{\"c\":null,\"c\":1}")), "duplicate key \"c\""));
  // Ignored derived data is held to the same syntax rules.
  CHECK(contains(error_of(replaced(text, "\"stats\":{\"n\":3,", "\"stats\":{\"n\":3,\"n\":3,")),
                 "duplicate key \"n\""));
}

TEST_CASE("fresh-call details round-trip and are absent from replayed runs") {
  Report r = sample();
  results::Run& fresh = r.tasks[0].runs[0];
  fresh.ttft_ms = 212.5;
  fresh.attempt_log = {{429, "rate_limit", 0, 35.25, 0, 0, false}, {200, "", 1500, 410.5, 100, 10, true}};
  fresh.judge_calls = 2;
  fresh.judge_cache_hits = 1;
  fresh.judge_prompt_tokens = 640;
  fresh.judge_completion_tokens = 24;
  fresh.checks[0].reason = "names the capital";
  report::compute(r, {});
  const std::string text = report::to_json(r);
  CHECK(contains(text,
                 "\"attempt_log\":[{\"status\":429,\"bucket\":\"rate_limit\",\"wait_ms\":0,"
                 "\"latency_ms\":35.25,\"prompt_tokens\":0,\"completion_tokens\":0,\"usage_known\":false}"));
  CHECK(contains(text, "\"ttft_ms\":212.5"));
  CHECK(contains(text, "\"judge_calls\":2,\"judge_cache_hits\":1,\"judge_prompt_tokens\":640,"
                       "\"judge_completion_tokens\":24"));
  // One run has them; the others carry no empty versions.
  std::size_t logs = 0;
  for (std::size_t pos = 0; (pos = text.find("attempt_log", pos)) != std::string::npos; ++pos)
    ++logs;
  CHECK(logs == 1);
  Report back = report::from_json(text, "x");
  const results::Run& b = back.tasks[0].runs[0];
  CHECK(b.ttft_ms == 212.5);
  REQUIRE(b.attempt_log.size() == 2);
  CHECK(b.attempt_log[0].status == 429);
  CHECK(b.attempt_log[1].wait_ms == 1500);
  CHECK(b.attempt_log[1].usage_known);
  CHECK(b.judge_calls == 2);
  CHECK(b.judge_completion_tokens == 24);
  CHECK(b.checks[0].reason == "names the capital");
  CHECK(report::to_json(back) == text);
  CHECK(error_of(replaced(text, "{\"status\":429,", "{\"status\":\"429\",")) ==
        "base.json: task \"a\" run 0: attempt 0: field \"status\" must be an integer");
  CHECK(error_of(replaced(text, ",\"usage_known\":false}", "}")) ==
        "base.json: task \"a\" run 0: attempt 0: missing field \"usage_known\"");
}

TEST_CASE("a summary read drops what passed runs need not keep, and nothing else") {
  const Report full = sample();
  const std::string text = report::to_json(full);
  report::ReadOptions summary;
  summary.details = false;
  Report s = report::from_json(text, "x", summary);
  REQUIRE(s.tasks.size() == 3);
  // "a" run 0 passed: no checks, no answer; its hash, tokens, route stay.
  const results::Run& passed = s.tasks[0].runs[0];
  CHECK(passed.passed);
  CHECK(passed.checks.empty());
  CHECK(passed.answer.empty());
  CHECK(passed.answer_sha256 == std::string(64, 'a'));
  CHECK(passed.prompt_tokens == 100);
  CHECK(passed.fingerprint == "fp-0");
  // "a" run 1 failed: kept whole.
  const results::Run& failed = s.tasks[0].runs[1];
  CHECK_FALSE(failed.passed);
  REQUIRE(failed.checks.size() == 1);
  CHECK(failed.checks[0].detail == "answer lacks \"Paris\"\nline 2");
  CHECK(failed.answer == "Lyon, I think");
  // Every number computed from the runs is the same as from a full read.
  check_same(s.stats, full.stats);
  for (std::size_t i = 0; i < s.tasks.size(); ++i)
    check_same(s.task_stats[i], full.task_stats[i]);
  // Validation does not relax: a passed run with a failed check is still refused.
  std::string bad = replaced(text, R"("label":"contains \"Paris\"","passed":true)",
                             R"("label":"contains \"Paris\"","passed":false)");
  REQUIRE(bad != text);
  try {
    (void)report::from_json(bad, "base.json", summary);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(contains(e.what(), "base.json: task \"a\" run 0: \"passed\" is true but check"));
  }
}

TEST_CASE("a run's fields in another order read the same, in a full and in a summary read") {
  // Run 0 of task "a" (passed) with "index" and "passed" moved after its
  // answer: found by searching back, and the answer read before "passed"
  // says the run passed is still dropped by a summary read.
  const std::string text = report::to_json(sample());
  std::string moved = replaced(text, "{\"index\":0,\"passed\":true,\"error\":", "{\"error\":");
  moved = replaced(moved, "\"answer\":\"Paris\",", "\"answer\":\"Paris\",\"passed\":true,\"index\":0,");
  REQUIRE(moved != text);
  CHECK(report::to_json(report::from_json(moved, "x")) == text);
  report::ReadOptions summary;
  summary.details = false;
  const Report s = report::from_json(moved, "x", summary);
  CHECK(s.tasks[0].runs[0].passed);
  CHECK(s.tasks[0].runs[0].answer.empty());
  CHECK(s.tasks[0].runs[0].checks.empty());
  CHECK(s.tasks[0].runs[1].answer == "Lyon, I think");
}

TEST_CASE("resumed: written after incomplete_reason only when set, read back, validated") {
  Report r = sample();
  CHECK_FALSE(contains(report::to_json(r), "resumed"));
  CHECK_FALSE(report::from_json(report::to_json(r), "mem.json").resumed.has_value());

  r.resumed = report::Resumed{"2026-01-02T02:00:00Z", 5};
  const std::string text = report::to_json(r);
  CHECK(contains(text, "\n\"incomplete_reason\": \"\",\n\"resumed\": "
                       "{\"from_started_at\":\"2026-01-02T02:00:00Z\",\"runs\":5},\n\"stats\": {"));
  Report back = report::from_json(text, "mem.json");
  REQUIRE(back.resumed.has_value());
  CHECK(back.resumed->from_started_at == "2026-01-02T02:00:00Z");
  CHECK(back.resumed->runs == 5);
  check_same(r, back);
  CHECK(report::to_json(back) == text);

  const std::string obj = "{\"from_started_at\":\"2026-01-02T02:00:00Z\",\"runs\":5}";
  CHECK(error_of(replaced(text, "\"runs\":5}", "\"runs\":-5}")) ==
        "base.json: resumed: field \"runs\" must be >= 0");
  CHECK(error_of(replaced(text, "\"runs\":5}", "\"runs\":\"5\"}")) ==
        "base.json: resumed: field \"runs\" must be an integer");
  CHECK(error_of(replaced(text, "\"runs\":5}", "\"runs\":[5]}")) ==
        "base.json: resumed: field \"runs\" must be an integer");
  CHECK(error_of(replaced(text, ",\"runs\":5}", "}")) == "base.json: resumed: missing field \"runs\"");
  CHECK(error_of(replaced(text, "\"runs\":5}", "\"runs\":5,\"x\":1}")) ==
        "base.json: resumed: unknown field \"x\"");
  CHECK(error_of(replaced(text, obj, "7")) == "base.json: field \"resumed\" must be an object");
  CHECK(contains(error_of(replaced(text, obj, obj + ",\"resumed\":" + obj)), "duplicate key \"resumed\""));
}

// report::to_json and report::write: the layout, round trips through the reader, redaction.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "test_report_support.hpp"
#include <gate/report/report.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

using namespace gate;
using report::Report;
using namespace gate::report::test;

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

TEST_CASE("fresh-call details round-trip and are absent from replayed runs") {
  Report r = sample();
  results::Run& fresh = r.tasks[0].runs[0];
  fresh.ttft_ms = 212.5;
  fresh.attempt_log = {{429, "rate_limit", 0, 35.25, 0, 0, false}, {200, "", 1500, 410.5, 100, 10, true}};
  fresh.judge_calls = 2;
  fresh.judge_cache_hits = 1;
  fresh.judge_prompt_tokens = 640;
  fresh.judge_completion_tokens = 24;
  gate::results::set_reason(fresh.checks[0], "names the capital");
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
  REQUIRE(b.checks[0].reason);
  CHECK(*b.checks[0].reason == "names the capital");
  CHECK(report::to_json(back) == text);
  CHECK(error_of(replaced(text, "{\"status\":429,", "{\"status\":\"429\",")) ==
        "base.json: task \"a\" run 0: attempt 0: field \"status\" must be an integer");
  CHECK(error_of(replaced(text, ",\"usage_known\":false}", "}")) ==
        "base.json: task \"a\" run 0: attempt 0: missing field \"usage_known\"");
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

TEST_CASE("prompts and each task's rendered input: written only when known, read back, validated") {
  Report r = sample();
  const std::string plain = report::to_json(r);
  CHECK_FALSE(contains(plain, "prompts"));
  CHECK_FALSE(contains(plain, "input"));

  r.prompts = {{"system", "prompts/support.md", std::string(64, 'e')},
               {"user", "prompt.user", std::string(64, '0')}};
  r.tasks[0].input = "system: Be brief.\n\nuser: Capital of France?";
  r.tasks[0].input_sha256 = std::string(64, '9');
  r.tasks[0].input_truncated = true;
  const std::string text = report::to_json(r);
  CHECK(contains(text, "\"sha256\":\"" + std::string(64, 'f') +
                           "\"},\n\"prompts\": [{\"role\":\"system\",\"name\":"
                           "\"prompts/support.md\",\"sha256\":\"" +
                           std::string(64, 'e') + "\"},{\"role\":\"user\","));
  CHECK(contains(text, "\"group\":\"g1\",\"input\":\"system: Be brief.\\n\\nuser: Capital of France?\","
                       "\"input_truncated\":true,\"input_sha256\":\"" +
                           std::string(64, '9') + "\",\"stats\":"));
  Report back = report::from_json(text, "mem.json");
  REQUIRE(back.prompts.size() == 2);
  CHECK(back.prompts[0].name == "prompts/support.md");
  CHECK(back.prompts[1].role == "user");
  CHECK(back.tasks[0].input == r.tasks[0].input);
  CHECK(back.tasks[0].input_truncated);
  CHECK(back.tasks[0].input_sha256 == std::string(64, '9'));
  CHECK(back.tasks[1].input_sha256.empty());
  check_same(r, back);
  CHECK(report::to_json(back) == text);

  CHECK(error_of(replaced(text, "\"input_truncated\":true,", "")) ==
        "base.json: task \"a\": \"input\", \"input_truncated\" and \"input_sha256\" go together");
  CHECK(error_of(replaced(text, "\"input_truncated\":true", "\"input_truncated\":1")) ==
        "base.json: task \"a\": field \"input_truncated\" must be true or false");
  CHECK(error_of(replaced(text, "{\"role\":\"user\",", "{\"role\":\"user\",\"x\":1,")) ==
        "base.json: prompt 1: unknown field \"x\"");
  CHECK(error_of(replaced(text, ",\"name\":\"prompt.user\"", "")) ==
        "base.json: prompt 1: missing field \"name\"");
  CHECK(error_of(replaced(text, "\"prompts\": [{", "\"prompts\": [7,{")) ==
        "base.json: expected a JSON object in \"prompts\"");
}

TEST_CASE("cost: written with a pricing table only, recomputed from the config's copy when read back") {
  Report plain = sample();
  const std::string plain_text = report::to_json(plain);
  CHECK(plain_text.find("cost_usd") == std::string::npos); // reports without pricing keep their bytes

  Report r = sample();
  r.config.as_object()["pricing"] = boost::json::parse(R"({"m-1": {"prompt": 1000, "completion": 2000}})");
  report::compute(r, report::options_from_config(r.config, "test"));
  // a: runs 0 and 1 fresh: (100 + 100) · $0.001 + (10 + 12) · $0.002 =
  // 0.2 + 0.044 = 0.244 paid; run 2 a hit: 0.1 + 0.02 = 0.12 recorded.
  CHECK(r.task_stats[0].cost_usd.value() == doctest::Approx(0.244));
  CHECK(r.task_stats[0].cached_cost_usd.value() == doctest::Approx(0.12));
  // b: 3 × (0.05 + 0.01) = 0.18; c: its errored run is left out, run 1
  // (10, 1) = 0.012.
  CHECK(r.task_stats[1].cost_usd.value() == doctest::Approx(0.18));
  CHECK(r.task_stats[2].cost_usd.value() == doctest::Approx(0.012));
  CHECK(r.stats.cost_usd.value() == doctest::Approx(0.436));
  CHECK(r.stats.cached_cost_usd.value() == doctest::Approx(0.12));
  const std::string text = report::to_json(r);
  CHECK(text.find("\"cost_usd\":") != std::string::npos);
  Report back = report::from_json(text, "mem.json");
  check_same(r, back);
  CHECK(report::to_json(back) == text);

  // A priced report whose model has no row: null, never 0.
  r.config.as_object()["pricing"] = boost::json::parse(R"({"other": {"prompt": 1, "completion": 1}})");
  report::compute(r, report::options_from_config(r.config, "test"));
  CHECK_FALSE(r.stats.cost_usd.has_value());
  CHECK(report::to_json(r).find("\"cost_usd\":null") != std::string::npos);
}

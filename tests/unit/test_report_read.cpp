// report::read and report::from_json: the strict reader (docs/report-schema.md).
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

TEST_CASE("complete_on_disk reads the header only and says false for anything but a complete report") {
  auto dir = std::filesystem::temp_directory_path() / ("gate-report-header-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto put = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return dir / name;
  };
  Report r = sample();
  const std::string text = report::to_json(r);
  CHECK(report::complete_on_disk(put("done.json", text)));
  // Only the header is read: the tasks may be cut off (a file still being
  // replaced, say) without changing what the header says.
  const std::size_t tasks = text.find("\n\"tasks\": [");
  REQUIRE(tasks != std::string::npos);
  CHECK(report::complete_on_disk(put("cut.json", text.substr(0, tasks + 12) + "{\"id\":")));
  r.complete = false;
  r.incomplete_reason = "interrupted";
  CHECK_FALSE(report::complete_on_disk(put("partial.json", report::to_json(r))));
  CHECK_FALSE(report::complete_on_disk(put("edited.json", replaced(text, "\n\"complete\": true,", ""))));
  CHECK_FALSE(
      report::complete_on_disk(put("foreign.json", replaced(text, "gate.report/1", "gate.report/9"))));
  CHECK_FALSE(report::complete_on_disk(put("cut-header.json", text.substr(0, tasks / 2))));
  CHECK_FALSE(report::complete_on_disk(put("not-json.json", "complete: true")));
  CHECK_FALSE(report::complete_on_disk(dir / "absent.json"));
  report::ReadOptions header;
  header.header_only = true;
  const Report head = report::read(dir / "done.json", header);
  CHECK(head.tasks.empty());
  CHECK(head.suite.name == sample().suite.name);
  std::filesystem::remove_all(dir);
}

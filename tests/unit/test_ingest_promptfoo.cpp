// Reading promptfoo's results file (gate/ingest/promptfoo.cpp): a task is a
// test under one provider and prompt column, its repeats the runs (ordered
// by testIdx); success, ASSERT failures and ERROR rows as promptfoo's
// stats count them; tokens, latency and cost per row.
#include <doctest.h>

#include <gate/ingest/ingest.hpp>
#include <gate/util/error.hpp>

using namespace gate;
using namespace gate::ingest;

namespace {

std::vector<Record> read_all(const FileRecords& f) {
  std::vector<Record> out;
  for (const auto& l : f.records)
    out.push_back(read_record(l, {}));
  return out;
}

std::string error_of(const std::string& text) {
  try {
    records_of({"results.json", text}, {});
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    return e.what();
  }
  return "";
}

// `text` with the first `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string file_with(const std::string& rows) {
  return R"({
  "evalId": "eval-abc-2026-11-20T10:00:00",
  "results": {
    "version": 3,
    "timestamp": "2026-11-20T10:00:00.000Z",
    "prompts": [],
    "results": [)" +
         rows + R"(],
    "stats": {"successes": 0, "failures": 0, "errors": 0, "tokenUsage": {}}
  },
  "config": {},
  "shareableUrl": null
})";
}

// A failing row (an assertion rejected it) with two component results.
const std::string k_failed = R"({
  "cost": 0.00002, "id": "r1", "latencyMs": 812, "namedScores": {},
  "prompt": {"raw": "Capital of Japan?", "label": "prompt.txt"}, "promptId": "p", "promptIdx": 1,
  "provider": {"id": "openai:gpt-4o-mini", "label": "mini"},
  "response": {"output": "Kyoto", "tokenUsage": {"total": 20, "prompt": 15, "completion": 5}},
  "tokenUsage": {"total": 22, "prompt": 16, "completion": 6, "cached": 0, "numRequests": 1},
  "success": false, "failureReason": 1, "score": 0.5,
  "gradingResult": {"pass": false, "score": 0.5, "reason": "Expected output to contain \"Tokyo\"",
                    "componentResults": [{"pass": false, "score": 0, "reason": "x"}, {"pass": true, "score": 1, "reason": "y"}]},
  "testCase": {"vars": {"country": "Japan"}, "assert": []},
  "testIdx": 4, "vars": {"country": "Japan"}
})";

} // namespace

TEST_CASE("a promptfoo row: the test under its provider and prompt column is the task, testIdx the run") {
  auto f = records_of({"results.json", file_with(k_failed)}, {});
  CHECK(f.format == Format::promptfoo);
  auto recs = read_all(f);
  REQUIRE(recs.size() == 1);
  const auto& run = recs[0].run;
  CHECK(recs[0].task_id == R"({"country":"Japan"} [mini, prompt 1])");
  CHECK(recs[0].run_id == "4");
  CHECK(recs[0].where == "results.json: results.results[0]");
  CHECK_FALSE(run.passed);
  CHECK_FALSE(run.errored());
  CHECK(f.records[0].note == "assertions 1 of 2 passed; Expected output to contain \"Tokyo\"");
  // The row's own tokenUsage (what promptfoo's stats sum), not the response's.
  CHECK(run.prompt_tokens == 16);
  CHECK(run.completion_tokens == 6);
  CHECK(run.latency_ms == doctest::Approx(812));
  REQUIRE(gate::results::recorded_cost(run).has_value());
  CHECK(*gate::results::recorded_cost(run) == doctest::Approx(0.00002));
  CHECK(run.answer == "Kyoto");
  CHECK(run.route.at("model") == "openai:gpt-4o-mini");
}

TEST_CASE("promptfoo: a described test is named by its description; an ERROR row is an errored run") {
  std::string row = k_failed;
  row = replaced(row, R"("testCase": {)", R"("testCase": {"description": "capital of Japan", )");
  row = replaced(row, R"("failureReason": 1)", R"("failureReason": 2, "error": "API error: 500")");
  auto recs = read_all(records_of({"results.json", file_with(row)}, {}));
  CHECK(recs[0].task_id == "capital of Japan [mini, prompt 1]");
  CHECK(recs[0].run.errored());
  CHECK(recs[0].run.error == "error");
}

TEST_CASE(
    "promptfoo: a passing row passes; a row without usage or cost has them n/a; long vars keep a hash") {
  std::string row = k_failed;
  row = replaced(row, R"("success": false)", R"("success": true)");
  row = replaced(row, R"("cost": 0.00002, )", "");
  row = replaced(
      row, R"("tokenUsage": {"total": 22, "prompt": 16, "completion": 6, "cached": 0, "numRequests": 1})",
      R"("x": 0)");
  row = replaced(row, R"("tokenUsage": {"total": 20, "prompt": 15, "completion": 5})", R"("y": 0)");
  const std::string vars = R"({"country": "Japan"})";
  const std::string long_vars = R"({"country": ")" + std::string(100, 'J') + "\"}";
  while (row.find(vars) != std::string::npos)
    row = replaced(row, vars, long_vars);
  auto recs = read_all(records_of({"results.json", file_with(row)}, {}));
  CHECK(recs[0].run.passed);
  CHECK_FALSE(recs[0].run.usage_known);
  CHECK_FALSE(gate::results::recorded_cost(recs[0].run).has_value());
  const std::string& id = recs[0].task_id;
  CHECK(id.rfind(R"({"country":"JJJ)", 0) == 0);
  CHECK(id.find("…#") == 80);
  CHECK(id.size() == 80 + std::string("…#").size() + 8 + std::string(" [mini, prompt 1]").size());
}

TEST_CASE("promptfoo bad input: the row, the field and what was expected") {
  std::string row = k_failed;
  row = replaced(row, R"("success": false)", R"("success": "no")");
  CHECK(error_of(file_with(row)) ==
        "results.json: results.results[0]: field \"success\": expected true or false, got a string");
  row = k_failed;
  row = replaced(row, R"("testIdx": 4)", R"("test": 4)");
  CHECK(error_of(file_with(row)) ==
        "results.json: results.results[0]: field \"testIdx\": expected a number (the test row), none found");
  Options o;
  o.format = Format::promptfoo;
  try {
    records_of({"results.json", R"({"evalId": "e", "results": []})"}, o);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("results.json: expected a promptfoo results file") == 0);
  }
}

// End-to-end: `gate analyze` on logs written by another harness
// (fixtures/analyze), then `gate compare` on what it wrote.
#include <doctest.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

fs::path fixture() { return source_dir() / "fixtures" / "analyze" / "runs.jsonl"; }

// The fixture's harness nests sampling under "meta" and names two fields
// its own way.
const std::vector<std::string> k_maps = {
    "--map", "model=meta.model",  "--map", "temperature=meta.temperature",
    "--map", "top_p=meta.top_p",  "--map", "seed=meta.seed",
    "--map", "base_url=endpoint", "--map", "token_usage=usage"};

Result analyze(const std::vector<std::string>& logs, const fs::path& cwd, const std::string& out,
               std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"analyze"};
  args.insert(args.end(), logs.begin(), logs.end());
  args.insert(args.end(), k_maps.begin(), k_maps.end());
  args.insert(args.end(), {"--out", out, "--suite-name", "tau-retail-airline", "--suite-version", "2026-11"});
  args.insert(args.end(), extra.begin(), extra.end());
  return run_gate(args, cwd);
}

// Golden files live in tests/golden. GATE_UPDATE_GOLDEN=1 rewrites them
// from the current output (review the diff before committing it).
void check_golden(const std::string& name, const std::string& actual) {
  fs::path path = source_dir() / "tests" / "golden" / name;
  const char* update = std::getenv("GATE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    spit(path, actual);
    MESSAGE("rewrote " << path.string());
    return;
  }
  REQUIRE_MESSAGE(fs::exists(path), path.string() << " is missing; run with GATE_UPDATE_GOLDEN=1");
  CHECK(slurp(path) == actual);
}

// When it ran and which gate wrote it are the only lines that change.
std::string without_run_info(const std::string& md) {
  static const std::regex meta("gate [0-9][^ ]* · started [^ ]+ · finished [^\\n]+");
  return std::regex_replace(md, meta, "gate (version) · started (time) · finished (time)");
}

} // namespace

TEST_CASE("the fixture's polluted tasks are exactly the ones planted, with their fields") {
  TempDir tmp;
  Result r = analyze({fixture().string()}, tmp.path(), "out");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "12 tasks, 36 runs"));
  CHECK(has(r.out, "4 route-polluted tasks"));
  auto report = read_json(tmp.path() / "out" / "report.json").as_object();
  CHECK(report.at("schema").as_string() == "gate.report/1");
  std::map<std::string, std::vector<std::string>> polluted;
  for (const auto& t : report.at("tasks").as_array()) {
    const auto& stats = t.as_object().at("stats").as_object();
    if (!stats.at("route_polluted").as_bool()) continue;
    std::vector<std::string> fields;
    for (const auto& f : stats.at("route_diff").as_array())
      fields.emplace_back(f.as_string());
    polluted[std::string(t.as_object().at("id").as_string())] = fields;
  }
  std::map<std::string, std::vector<std::string>> planted = {
      {"airline-03", {"base_url_host", "base_url_path"}}, // a run through another gateway
      {"airline-05", {"retries"}},                        // a run that reports 2 retries
      {"retail-02", {"key_alias"}},                       // a run with the backup key
      {"retail-05", {"retries"}},                         // rate-limited, then logged again
  };
  CHECK(polluted == planted);
  const std::string md = slurp(tmp.path() / "out" / "report.md");
  CHECK(has(md, "| retail-02 | key\\_alias: team-eval / team-eval-backup |"));
  CHECK(has(md, "**Runs diverge mostly at step 2** (3 tasks)"));
  check_golden("analyze_fixture.md", without_run_info(md));
}

TEST_CASE("a JSON array, a glob and JSONL give the same tasks; --include-polluted widens the gap") {
  TempDir tmp;
  // The same records as one JSON array.
  std::string jsonl = slurp(fixture()), array = "[\n";
  std::size_t pos = 0;
  bool first = true;
  while (pos < jsonl.size()) {
    auto end = jsonl.find('\n', pos);
    array += (first ? "" : ",\n") + jsonl.substr(pos, end - pos);
    first = false;
    pos = end + 1;
  }
  spit(tmp.path() / "logs" / "runs.json", array + "\n]\n");
  REQUIRE(analyze({"logs/*.json"}, tmp.path(), "a").exit_code == 0);
  REQUIRE(analyze({fixture().string()}, tmp.path(), "b", {"--include-polluted"}).exit_code == 0);
  auto a = read_json(tmp.path() / "a" / "report.json").as_object();
  auto b = read_json(tmp.path() / "b" / "report.json").as_object();
  CHECK(a.at("tasks") == b.at("tasks"));
  // At k = 3 (most tasks' measured runs; airline-06 has 2 after a timeout
  // and is left out, and said to be): mixed tasks are 4 of the 7 clean ones
  // (57.1 pp); with the 4 polluted ones, which all passed, 4 of 11 (36.4 pp).
  CHECK(a.at("stats").at("pass_k_left_out").as_int64() == 1);
  CHECK(a.at("stats").at("consistency_gap_pp").to_number<double>() == doctest::Approx(400.0 / 7));
  CHECK(b.at("stats").at("consistency_gap_pp").to_number<double>() == doctest::Approx(400.0 / 11));
  Result none = analyze({"logs/*.jsonl"}, tmp.path(), "c");
  CHECK(none.exit_code == 2);
  CHECK(has(none.err, "no file matches \"logs/*.jsonl\""));
}

TEST_CASE("gate compare gates an external harness: every task failing is a regression") {
  TempDir tmp;
  REQUIRE(analyze({fixture().string()}, tmp.path(), "base").exit_code == 0);
  std::string worse = slurp(fixture());
  for (std::size_t p; (p = worse.find("\"reward\":1.0")) != std::string::npos;)
    worse.replace(p, 12, "\"reward\":0.0");
  spit(tmp.path() / "worse.jsonl", worse);
  REQUIRE(analyze({"worse.jsonl"}, tmp.path(), "cur").exit_code == 0);
  Result same =
      run_gate({"compare", "--baseline", "base/report.json", "--current", "base/report.json"}, tmp.path());
  CHECK(same.exit_code == 0);
  Result r =
      run_gate({"compare", "--baseline", "base/report.json", "--current", "cur/report.json"}, tmp.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
}

TEST_CASE("bad logs exit 2 naming the file, the line or index, and what was expected") {
  TempDir tmp;
  spit(tmp.path() / "bad.jsonl",
       "{\"task_id\":\"a\",\"passed\":true}\n{\"task_id\":\"a\",\"passed\":\"yes\"}\n");
  Result r = run_gate({"analyze", "bad.jsonl"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "bad.jsonl:2: field \"passed\": expected true or false, got a string"));
  spit(tmp.path() / "bad.json", "[{\"task_id\":\"a\",\"passed\":true}, {\"passed\":true}]");
  r = run_gate({"analyze", "bad.json"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "bad.json: record [1]: field \"task_id\""));
  spit(tmp.path() / "cut.jsonl", "{\"task_id\":\"a\",\"passed\":true}\n{\"task_id\":\"a\",\"pass");
  r = run_gate({"analyze", "cut.jsonl"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "cut.jsonl:2:"));
  r = run_gate({"analyze", "bad.jsonl", "--map", "nope=x"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "unknown field \"nope\""));
  r = run_gate({"analyze", "missing.jsonl"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK_FALSE(fs::exists(tmp.path() / ".gate" / "out" / "report.json"));
}

TEST_CASE("key-like values in base_url and key_alias never reach a file or the output") {
  TempDir tmp;
  const std::string key = "sk-proj-Zq8vN3kP0aB7cD1eF2gH4iJ5";
  spit(tmp.path() / "keys.jsonl", "{\"task_id\":\"a\",\"run_id\":0,\"passed\":true,\"key_alias\":\"" + key +
                                      "\",\"base_url\":\"https://u:" + key +
                                      "@api.example.com/v1?key=" + key + "\"}\n" +
                                      "{\"task_id\":\"a\",\"run_id\":1,\"passed\":true,\"key_alias\":\"" +
                                      key + "\",\"base_url\":\"https://api.example.com/" + key + "/v1\"}\n");
  Result r = run_gate({"analyze", "keys.jsonl", "--out", "out"}, tmp.path());
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(has(r.out + r.err, "Zq8vN3kP"));
  for (const auto& f : files_below(tmp.path() / "out")) {
    INFO(f.string());
    CHECK_FALSE(has(slurp(f), "Zq8vN3kP"));
  }
  auto report = read_json(tmp.path() / "out" / "report.json").as_object();
  CHECK(report.at("route").at("key_alias").as_string() == "[REDACTED]");
}

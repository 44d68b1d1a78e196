// End-to-end: what the action's steps make of a verdict (action/run.sh
// check and enforce, as action.yml runs them, in a fake GitHub
// environment): the outputs, the job summary, the annotations and the
// artifact list for each status, and every row of docs/verdict-schema.md's
// reader table through the binary, the action and the pre-push hook.
#include <doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

#include "action_step.hpp"
#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

// A verdict member, as a number: a metric's `field`, or a top-level member
// when `metric` is empty.
double verdict_value(const fs::path& verdict, const std::string& metric, const std::string& field) {
  auto v = read_json(verdict);
  if (metric.empty()) return v.at(field).to_number<double>();
  for (const auto& m : v.at("metrics").as_array())
    if (m.at("key").as_string() == metric) return m.at(field).to_number<double>();
  FAIL("no metric " << metric);
  return 0;
}

// An output must carry the verdict's number exactly (shortest round-trip
// text), not a rounded or recomputed one.
double number(const std::string& text) {
  REQUIRE_FALSE(text.empty());
  std::size_t used = 0;
  const double v = std::stod(text, &used);
  CHECK(used == text.size());
  return v;
}

} // namespace

TEST_CASE("a passing check sets every output from the verdict JSON, the summary and the artifact list") {
  TempDir tmp;
  copy_demo(tmp.path());
  Step s = run_step(tmp.path(), "check",
                    {{"INPUT_CONFIG", "demo/gate.yaml"},
                     {"INPUT_BASELINE", demo_baseline()},
                     {"INPUT_MODE", "replay-only"}});
  INFO(s.out << s.err);
  REQUIRE(s.exit_code == 0);
  const fs::path verdict = tmp.path() / ".gate/ci/verdict.json";
  REQUIRE(fs::exists(verdict));
  CHECK(s.outputs["verdict"] == "pass");
  CHECK(s.outputs["exit-code"] == "0");
  CHECK(number(s.outputs["success-rate"]) == verdict_value(verdict, "success_rate", "current"));
  CHECK(number(s.outputs["delta-pp"]) == verdict_value(verdict, "success_rate", "delta"));
  CHECK(number(s.outputs["consistency-gap"]) == verdict_value(verdict, "consistency_gap", "current"));
  CHECK(number(s.outputs["regressed"]) == verdict_value(verdict, "", "regressed"));
  CHECK(s.outputs["success-rate"].rfind("78.0", 0) == 0); // the demo's 78.0%
  CHECK(s.outputs["report-path"] == ".gate/ci/report.json");
  // Named after the config, so that two gates in one workflow do not clash:
  // demo/gate.yaml has a / the name cannot keep, so its hash follows.
  CHECK(s.outputs["artifact-name"] ==
        "gate-report-demo-gate-" + gate::sha256_hex("demo/gate.yaml").substr(0, 8));
  CHECK(lines(s.outputs["artifact-paths"]) ==
        std::vector<std::string>{".gate/ci/report.json", ".gate/ci/report.md", ".gate/ci/report.xml",
                                 ".gate/ci/verdict.md", ".gate/ci/verdict.json", ".gate/ci/verdict.html",
                                 ".gate/ci/verdict.xml"});
  CHECK(has(slurp(tmp.path() / ".gate/ci/verdict.xml"), "<testsuite"));
  for (const auto& f : lines(s.outputs["artifact-paths"]))
    CHECK(fs::exists(tmp.path() / f));
  CHECK(has(s.summary, "✅ gate passed"));

  Step enforce = run_step(tmp.path(), "enforce", {{"GATE_EXIT", s.outputs["exit-code"]}});
  CHECK(enforce.exit_code == 0);
}

TEST_CASE("a regression: verdict fail, the measured drop, and the enforce step exits 1") {
  TempDir tmp;
  copy_demo(tmp.path());
  const std::string regressed = (source_dir() / "fixtures" / "compare" / "regressed.json").string();
  Step s = run_step(tmp.path(), "check",
                    {{"INPUT_CONFIG", "demo/gate.yaml"},
                     {"INPUT_BASELINE", demo_baseline()},
                     {"INPUT_REPORTS", regressed}});
  INFO(s.out << s.err);
  REQUIRE(s.exit_code == 0); // the step records; enforce fails the job after comment and upload
  const fs::path verdict = tmp.path() / ".gate/ci/verdict.json";
  CHECK(s.outputs["verdict"] == "fail");
  CHECK(s.outputs["exit-code"] == "1");
  CHECK(number(s.outputs["delta-pp"]) == verdict_value(verdict, "success_rate", "delta"));
  CHECK(s.outputs["delta-pp"].rfind("-19.6", 0) == 0); // the committed regressed report's drop
  CHECK(s.outputs["report-path"] == regressed);
  CHECK(has(s.summary, "❌ gate failed"));
  CHECK(has(s.out, "::error")); // annotations in Actions

  Step enforce = run_step(tmp.path(), "enforce", {{"GATE_EXIT", "1"}});
  CHECK(enforce.exit_code == 1);
  CHECK(has(enforce.out, "::error::gate: the gate failed"));
}

TEST_CASE("an undecided verdict: verdict inconclusive (not pass), a ::warning and the summary's first line "
          "name the command that decides it") {
  // Six tasks; the edited prompt ("v2") breaks two, 3/3 -> 0/3: at k = 3 the
  // first comparison cannot decide, and replay-only with no key cannot confirm.
  gate::testing::Script script;
  script.rules.push_back({"question t1 v2", {"no"}});
  script.rules.push_back({"question t2 v2", {"no"}});
  script.rules.push_back({"", {"yes"}});
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  std::string cases;
  for (int i = 1; i <= 6; ++i)
    cases += R"({"id": "t)" + std::to_string(i) + R"(", "vars": {"q": "t)" + std::to_string(i) +
             R"("}, "checks": [{"type": "contains", "value": "yes"}]})" + "\n";
  spit(tmp.path() / "cases.jsonl", cases);
  REQUIRE(run_gate({"suite", "create", "suite", "--name", "six", "--from", "cases.jsonl"}, tmp.path())
              .exit_code == 0);
  const std::string config =
      "suite:\n  path: suite\nprompt:\n  user: \"question {{q}} v1\"\nmodel:\n  provider: "
      "openai\n  base_url: " +
      upstream.base_url() +
      "\n  api_key_env: GATE_ACTION_KEY\n  name: m\n  temperature: 0\nruns: 3\ncache:\n  "
      "dir: cache\n  mode: replay\nbaseline: baseline.json\n";
  spit(tmp.path() / "gate.yaml", config);
  const std::map<std::string, std::string> key{{"GATE_ACTION_KEY", "sk-action-not-a-secret-01"}};
  REQUIRE(run_gate({"run", "--config", "gate.yaml", "--out", "base", "--quiet"}, tmp.path(), key).exit_code ==
          0);
  REQUIRE(
      run_gate({"baseline", "update", "--report", "base/report.json", "--config", "gate.yaml"}, tmp.path())
          .exit_code == 0);
  std::string edited = config;
  edited.replace(edited.find("v1"), 2, "v2");
  spit(tmp.path() / "gate.yaml", edited);
  REQUIRE(run_gate({"run", "--config", "gate.yaml", "--out", "cur", "--quiet"}, tmp.path(), key).exit_code ==
          0);
  const auto calls = upstream.requests();

  for (const std::string on_inconclusive : {"warn", "fail"}) {
    CAPTURE(on_inconclusive);
    spit(tmp.path() / "gate.yaml", edited + "thresholds:\n  on_inconclusive: " + on_inconclusive + "\n");
    Step s = run_step(tmp.path(), "check", {{"INPUT_CONFIG", "gate.yaml"}, {"INPUT_MODE", "replay-only"}});
    INFO(s.out << s.err);
    REQUIRE(s.exit_code == 0);
    CHECK(s.outputs["verdict"] == "inconclusive");
    CHECK(s.outputs["exit-code"] == (on_inconclusive == "warn" ? "0" : "1"));
    // The first line a reader sees (the comment marker above it is invisible).
    std::istringstream summary(s.summary);
    std::string first_line;
    while (std::getline(summary, first_line) && (first_line.empty() || first_line.starts_with("<!--")))
      ;
    CHECK(first_line.starts_with("## ⚠ gate inconclusive"));
    CHECK(has(s.summary, "gate check --config gate.yaml --mode replay"));
    const std::string level = on_inconclusive == "warn" ? "::warning " : "::error ";
    CHECK(has(s.out, level + "title=gate::inconclusive: decide it with fresh runs (the key exported): "));
    CHECK(has(s.out, "gate check --config gate.yaml --mode replay"));
    CHECK(upstream.requests() == calls);
    Step enforce = run_step(tmp.path(), "enforce",
                            {{"GATE_EXIT", s.outputs["exit-code"]}, {"GATE_VERDICT", s.outputs["verdict"]}});
    CHECK(enforce.exit_code == (on_inconclusive == "warn" ? 0 : 1));
    if (on_inconclusive == "fail")
      CHECK(has(enforce.out, "::error::gate: inconclusive, and on_inconclusive is fail"));
  }
}

namespace {

// A cell's first `code span` ("" when it has none).
std::string code_span(const std::string& cell) {
  const std::size_t open = cell.find('`');
  if (open == std::string::npos) return "";
  return cell.substr(open + 1, cell.find('`', open + 1) - open - 1);
}

// The rows of docs/verdict-schema.md's reader table, each its cells.
std::vector<std::vector<std::string>> reader_table() {
  std::istringstream in(slurp(source_dir() / "docs" / "verdict-schema.md"));
  std::vector<std::vector<std::string>> rows;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("| status | exit | JUnit `decision` case |")) {
      inside = true;
      continue;
    }
    if (!inside || line.starts_with("|---")) continue;
    if (!line.starts_with("|")) break;
    std::vector<std::string> cells;
    std::size_t from = 1;
    for (std::size_t bar; (bar = line.find(" |", from)) != std::string::npos; from = bar + 2) {
      std::string cell = line.substr(from, bar - from);
      cells.push_back(cell.substr(cell.find_first_not_of(' ')));
    }
    rows.push_back(cells);
  }
  return rows;
}

// The workflow command lines of a step's output.
std::vector<std::string> command_lines(const std::string& out) {
  std::vector<std::string> found;
  for (const std::string& line : lines(out))
    if (line.starts_with("::error ") || line.starts_with("::warning ")) found.push_back(line);
  return found;
}

} // namespace

TEST_CASE("every row of docs/verdict-schema.md's reader table: exit code, JUnit, workflow commands, the "
          "action's output and the pre-push hook's line") {
  // 20 tasks t01..t20 whose check wants "yes". The prompt's last word picks
  // the change: "metric" breaks t01..t12 (significant), "flip1" breaks t01
  // alone (one task cannot decide), "down" answers every call with a 500.
  gate::testing::Script script;
  for (int i = 1; i <= 12; ++i)
    script.rules.push_back(
        {"question t" + std::string(i < 10 ? "0" : "") + std::to_string(i) + " metric", {"no"}});
  script.rules.push_back({"question t01 flip1", {"no"}});
  script.rules.push_back({"", {"yes"}});
  gate::testing::Fault outage;
  outage.match = "down";
  outage.times = 1000000;
  script.faults.push_back(outage);
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  const fs::path work = tmp.path() / "work";
  fs::create_directories(work);
  REQUIRE(sh(tmp.path(), "git init -q --bare remote.git").exit_code == 0);
  REQUIRE(sh(work, "git init -q -b main && git remote add origin ../remote.git").exit_code == 0);
  const std::string git = "git -c user.name=gate-test -c user.email=gate-test@example.invalid ";
  std::string cases;
  for (int i = 1; i <= 20; ++i)
    cases += R"({"id": "t)" + std::string(i < 10 ? "0" : "") + std::to_string(i) + R"(", "vars": {"q": "t)" +
             std::string(i < 10 ? "0" : "") + std::to_string(i) +
             R"("}, "checks": [{"type": "contains", "value": "yes"}]})" + "\n";
  spit(work / "cases.jsonl", cases);
  REQUIRE(run_gate({"suite", "create", "suite", "--name", "walk", "--from", "cases.jsonl"}, work).exit_code ==
          0);
  const std::map<std::string, std::string> key{{"GATE_WALK_KEY", "sk-walk-not-a-secret-0001"}};
  auto config = [&](const std::string& word, const std::string& thresholds) {
    spit(work / "gate.yaml",
         "suite:\n  path: suite\nprompt:\n  user: \"question {{q}} " + word +
             "\"\nmodel:\n  provider: openai\n  base_url: " + upstream.base_url() +
             "\n  api_key_env: GATE_WALK_KEY\n  name: m\n  temperature: 0\n  max_retries: "
             "0\nruns: 3\ncache:\n  dir: cache\n  mode: replay\nbaseline: baseline.json\n" +
             (thresholds.empty() ? "" : "thresholds:\n" + thresholds));
  };
  config("v1", "");
  REQUIRE(run_gate({"run", "--config", "gate.yaml", "--out", ".gate/base", "--quiet"}, work, key).exit_code ==
          0);
  REQUIRE(
      run_gate({"baseline", "update", "--report", ".gate/base/report.json", "--config", "gate.yaml"}, work)
          .exit_code == 0);
  spit(work / ".gitignore", ".gate/\n");
  REQUIRE(run_gate({"hook", "install", "--config", "gate.yaml"}, work).exit_code == 0);

  struct Fixture {
    std::string word, thresholds;
    bool live = false; // the check and the hook call the model (the key exported)
  };
  const std::map<std::string, Fixture> fixtures{
      {"`passed`", {"same", ""}},
      {"`failed` by a metric", {"metric", ""}},
      {"`failed` by `max_new_failures`", {"flip1", "  max_new_failures: 0\n"}},
      {"`inconclusive`, `on_inconclusive: warn`", {"flip1", "  on_inconclusive: warn\n"}},
      {"`inconclusive`, `on_inconclusive: fail`", {"flip1", "  on_inconclusive: fail\n"}},
      {"`inconclusive`, `on_inconclusive: pass`", {"flip1", "  on_inconclusive: pass\n"}},
      {"`could not measure`", {"down", "", true}},
  };
  const auto rows = reader_table();
  REQUIRE(rows.size() == fixtures.size());
  int n = 0;
  for (const auto& row : rows) {
    REQUIRE(row.size() == 6);
    CAPTURE(row[0]);
    const auto f = fixtures.find(row[0]);
    REQUIRE_MESSAGE(f != fixtures.end(), "a row the test has no fixture for");
    const Fixture& fx = f->second;
    config(fx.word, fx.thresholds);
    if (!fx.live) {
      Result rec = run_gate({"run", "--config", "gate.yaml", "--out", ".gate/rec", "--quiet"}, work, key);
      INFO(rec.out << rec.err);
      REQUIRE(rec.exit_code == 0);
    }
    REQUIRE(sh(work, git + "add -A && " + git + "commit -q --allow-empty -m row" + std::to_string(++n))
                .exit_code == 0);

    // The action's check step, as a pull request's CI runs it.
    std::map<std::string, std::string> inputs{{"INPUT_CONFIG", "gate.yaml"},
                                              {"INPUT_MODE", fx.live ? "replay" : "replay-only"}};
    if (fx.live) inputs.insert(key.begin(), key.end());
    Step s = run_step(work, "check", inputs);
    INFO(s.out << s.err);
    CHECK(s.outputs["exit-code"] == row[1]);
    CHECK(s.outputs["verdict"] == code_span(row[4]));
    const std::string xml = slurp(work / ".gate/ci/verdict.xml");
    const std::size_t decision = xml.find("<testcase classname=\"gate\" name=\"decision\">");
    REQUIRE(decision != std::string::npos);
    CHECK(xml.substr(decision, xml.find("</testcase>", decision) - decision).find(code_span(row[2])) !=
          std::string::npos);
    const std::vector<std::string> commands = command_lines(s.out);
    if (row[3] == "none") {
      CHECK(commands.empty());
    } else {
      CHECK(std::any_of(commands.begin(), commands.end(),
                        [&](const std::string& c) { return c.starts_with(code_span(row[3])); }));
    }

    // The pre-push hook on the same commit.
    if (fx.live)
      REQUIRE(
          run_gate({"hook", "install", "--config", "gate.yaml", "--", "--mode", "replay"}, work).exit_code ==
          0);
    Result push = sh(work, (fx.live ? "GATE_WALK_KEY=" + key.at("GATE_WALK_KEY") + " " : std::string()) +
                               "git push -q origin main");
    INFO(push.out);
    CHECK(has(push.out, code_span(row[5])));
    CHECK(push.exit_code == (row[1] == "0" ? 0 : 1));
  }
}

TEST_CASE("a cache miss: verdict cache-miss, the miss list in the artifact, the summary says how to record") {
  TempDir tmp;
  copy_demo(tmp.path());
  std::string config = slurp(tmp.path() / "demo" / "gate.yaml");
  config.replace(config.find("name: demo-model"), 16, "name: never-recorded");
  spit(tmp.path() / "demo" / "gate.yaml", config);
  Step s = run_step(tmp.path(), "check",
                    {{"INPUT_CONFIG", "demo/gate.yaml"},
                     {"INPUT_BASELINE", demo_baseline()},
                     {"INPUT_MODE", "replay-only"}});
  INFO(s.out << s.err);
  CHECK(s.outputs["verdict"] == "cache-miss");
  CHECK(s.outputs["exit-code"] == "4");
  CHECK(s.outputs.count("success-rate") == 0);
  CHECK(lines(s.outputs["artifact-paths"]) == std::vector<std::string>{".gate/ci/cache-misses.txt"});
  CHECK(has(s.summary, "--mode replay"));
  CHECK(run_step(tmp.path(), "enforce", {{"GATE_EXIT", "4"}}).exit_code == 4);
}

TEST_CASE("shards write partial reports; the reports input merges and gates them") {
  TempDir tmp;
  copy_demo(tmp.path());
  for (int i = 1; i <= 2; ++i) {
    Step s = run_step(tmp.path(), "check",
                      {{"INPUT_CONFIG", "demo/gate.yaml"},
                       {"INPUT_SHARD", std::to_string(i) + "/2"},
                       {"INPUT_OUT_DIR", "shards/" + std::to_string(i)}});
    INFO(s.out << s.err);
    CHECK(s.outputs["verdict"] == "partial");
    CHECK(s.outputs["artifact-name"] == "gate-report-demo-gate-" +
                                            gate::sha256_hex("demo/gate.yaml").substr(0, 8) + "-shard-" +
                                            std::to_string(i) + "-of-2");
    CHECK(s.outputs["report-path"] == "shards/" + std::to_string(i) + "/report.json");
  }
  Step merged = run_step(tmp.path(), "check",
                         {{"INPUT_CONFIG", "demo/gate.yaml"},
                          {"INPUT_BASELINE", demo_baseline()},
                          {"INPUT_REPORTS", "shards/*/report.json"}});
  INFO(merged.out << merged.err);
  CHECK(merged.outputs["verdict"] == "pass");
  CHECK(has(merged.out, "merged 2 of 2 shards"));
  CHECK(merged.outputs["report-path"] == ".gate/ci/report.json");
}

TEST_CASE("artifact names: one per config, however alike the paths") {
  TempDir tmp;
  const std::string run_sh = gate::shell_quote((source_dir() / "action" / "run.sh").string());
  auto name = [&](const std::string& config, const std::string& shard = "") {
    // The function alone, from run.sh, under bash as the action runs it.
    const std::string script = "eval \"$(sed -n '/^artifact_name() {/,/^}/p' " + run_sh +
                               ")\"; artifact_name " + gate::shell_quote(config) + " " +
                               gate::shell_quote(shard);
    Result r = sh(tmp.path(), "bash -c " + gate::shell_quote(script));
    REQUIRE(r.exit_code == 0);
    return r.out.substr(0, r.out.find('\n'));
  };
  const auto hash = [](const std::string& s) { return gate::sha256_hex(s).substr(0, 8); };
  CHECK(name("gate.yaml") == "gate-report");
  CHECK(name("./gate.yaml") == "gate-report");
  CHECK(name("demo-gate.yaml") == "gate-report-demo-gate");
  CHECK(name("demo/gate.yaml") == "gate-report-demo-gate-" + hash("demo/gate.yaml"));
  CHECK(name("demo gate.yaml") == "gate-report-demo-gate-" + hash("demo gate.yaml"));
  CHECK(name("demo-gate.yml") == "gate-report-demo-gate.yml-" + hash("demo-gate.yml"));
  CHECK(name("evals/b.yaml", "2/4") == "gate-report-evals-b-" + hash("evals/b.yaml") + "-shard-2-of-4");
  std::set<std::string> names;
  for (const char* c :
       {"gate.yaml", "demo-gate.yaml", "demo/gate.yaml", "demo gate.yaml", "demo-gate", "demo-gate.yml"})
    names.insert(name(c));
  CHECK(names.size() == 6);
}

// End-to-end: the GitHub Action's steps (action/run.sh, as action.yml runs
// them) in a fake GitHub environment, and the workflow/action linters.
#include <doctest.h>

#include <boost/json.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <thread>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

// `bash action/run.sh <step>` in `dir` with a fake GitHub environment plus
// `env` (the INPUT_* values of action.yml).
struct Step {
  int exit_code = -1;
  std::string out, err;
  std::map<std::string, std::string> outputs; // parsed $GITHUB_OUTPUT
  std::string summary;                        // $GITHUB_STEP_SUMMARY
};

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// name=value lines and name<<DELIM … DELIM blocks.
std::map<std::string, std::string> parse_outputs(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (auto heredoc = line.find("<<"); heredoc != std::string::npos && line.find('=') > heredoc) {
      const std::string name = line.substr(0, heredoc), delim = line.substr(heredoc + 2);
      std::string value, body;
      while (std::getline(in, body) && body != delim)
        value += (value.empty() ? "" : "\n") + body;
      out[name] = value;
    } else if (auto eq = line.find('='); eq != std::string::npos) {
      out[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return out;
}

Step run_step(const fs::path& dir, const std::string& step,
              const std::map<std::string, std::string>& inputs) {
  std::map<std::string, std::string> env{
      {"GATE_BIN", GATE_BINARY},
      {"GITHUB_ACTIONS", "true"},
      {"CI", "true"},
      {"GITHUB_EVENT_NAME", "pull_request"},
      {"GITHUB_EVENT_PATH", (source_dir() / "fixtures" / "github" / "pull_request.json").string()},
      {"GITHUB_REPOSITORY", "octo/gate-demo"},
      {"GITHUB_WORKSPACE", dir.string()},
      {"GITHUB_OUTPUT", (dir / "github_output").string()},
      {"GITHUB_STEP_SUMMARY", (dir / "step_summary.md").string()},
  };
  for (const auto& [k, v] : inputs)
    env[k] = v;
  fs::remove(dir / "github_output");
  fs::remove(dir / "step_summary.md");
  std::string command = "cd " + quoted(dir.string()) + " && env -u GATE_DEMO_API_KEY -u GITHUB_TOKEN";
  for (const auto& [k, v] : env)
    command += " " + k + "=" + quoted(v);
  command +=
      " bash " + quoted((source_dir() / "action" / "run.sh").string()) + " " + step + " >step.out 2>step.err";
  const int status = std::system(command.c_str());
  Step s;
  s.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  s.out = slurp(dir / "step.out");
  s.err = slurp(dir / "step.err");
  if (fs::exists(dir / "github_output")) s.outputs = parse_outputs(slurp(dir / "github_output"));
  if (fs::exists(dir / "step_summary.md")) s.summary = slurp(dir / "step_summary.md");
  return s;
}

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

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string k_baseline = (source_dir() / "baselines" / "demo.json").string();

// The fetch tests need node (the fake release server) and curl (run.sh).
bool have_node() {
  return std::system("command -v node >/dev/null 2>&1 && command -v curl >/dev/null 2>&1") == 0;
}

// The build fallback installs Debian 12's packages (.ci/deps; docs/ci.md:
// it needs `container: debian:12`), so it runs only there.
bool debian12() {
  return fs::exists("/etc/debian_version") && slurp("/etc/debian_version").rfind("12.", 0) == 0;
}

// tests/support/release_server.cjs serving `dir` (tag/asset files) on
// 127.0.0.1, stopped when this goes out of scope.
struct ReleaseServer {
  int pid = -1;
  std::string base; // http://127.0.0.1:<port>
  explicit ReleaseServer(const fs::path& dir) {
    const fs::path listen = dir.parent_path() / "release_server.out";
    const std::string command =
        "node " + quoted((source_dir() / "tests" / "support" / "release_server.cjs").string()) + " " +
        quoted(dir.string()) + " 120 >" + quoted(listen.string()) + " 2>&1 & echo $!";
    FILE* p = ::popen(command.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[32] = {};
    if (std::fgets(buf, sizeof buf, p) != nullptr) pid = std::atoi(buf);
    ::pclose(p);
    REQUIRE(pid > 0);
    for (int i = 0; i < 100 && base.empty(); ++i) {
      std::smatch m;
      const std::string text = fs::exists(listen) ? slurp(listen) : "";
      if (std::regex_search(text, m, std::regex("listening on (http://127\\.0\\.0\\.1:[0-9]+)")))
        base = m[1];
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    REQUIRE_MESSAGE(!base.empty(), "the fake release server did not start");
  }
  ~ReleaseServer() {
    if (pid > 0) ::kill(pid, SIGTERM);
  }
};

// A release `tag` whose gate-linux-<arch> is the gate under test, with a
// .sha256 that holds `sha` ("" = the right one).
fs::path make_release(const fs::path& root, const std::string& sha, const std::string& tag_name = "v9.8.7") {
  fs::path tag = root / "releases" / tag_name;
  fs::create_directories(tag);
  struct utsname u {};
  ::uname(&u);
  const std::string asset = std::string("gate-linux-") + u.machine;
  fs::copy_file(GATE_BINARY, tag / asset);
  std::string sum = sha;
  if (sum.empty()) {
    FILE* p = ::popen(("sha256sum " + quoted((tag / asset).string())).c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[65] = {};
    REQUIRE(std::fread(buf, 1, 64, p) == 64);
    ::pclose(p);
    sum = buf;
  }
  spit(tag / (asset + ".sha256"), sum + "  " + asset + "\n");
  return tag / asset;
}

// The version in CMakeLists.txt's project() line, e.g. "0.1.0".
std::string project_version() {
  std::smatch m;
  const std::string cmake = slurp(source_dir() / "CMakeLists.txt");
  REQUIRE(std::regex_search(cmake, m, std::regex(R"(\nproject\(gate VERSION ([0-9]+\.[0-9]+\.[0-9]+))")));
  return m[1];
}

// A value of a build directory's CMakeCache.txt (NAME:TYPE=value).
std::string cmake_cache_value(const fs::path& build_dir, const std::string& name) {
  std::smatch m;
  const std::string cache = slurp(build_dir / "CMakeCache.txt");
  REQUIRE_MESSAGE(std::regex_search(cache, m, std::regex("\n" + name + ":[A-Z]+=([^\n]*)")),
                  name << " is not in " << build_dir / "CMakeCache.txt");
  return m[1];
}

} // namespace

TEST_CASE("a passing check sets every output from the verdict JSON, the summary and the artifact list") {
  TempDir tmp;
  copy_demo(tmp.path());
  Step s = run_step(
      tmp.path(), "check",
      {{"INPUT_CONFIG", "demo/gate.yaml"}, {"INPUT_BASELINE", k_baseline}, {"INPUT_MODE", "replay-only"}});
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
  // Named after the config, so that two gates in one workflow do not clash.
  CHECK(s.outputs["artifact-name"] == "gate-report-demo-gate");
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
  Step s = run_step(
      tmp.path(), "check",
      {{"INPUT_CONFIG", "demo/gate.yaml"}, {"INPUT_BASELINE", k_baseline}, {"INPUT_REPORTS", regressed}});
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
  Step s = run_step(
      tmp.path(), "check",
      {{"INPUT_CONFIG", "demo/gate.yaml"}, {"INPUT_BASELINE", k_baseline}, {"INPUT_MODE", "replay-only"}});
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
    CHECK(s.outputs["artifact-name"] == "gate-report-demo-gate-shard-" + std::to_string(i) + "-of-2");
    CHECK(s.outputs["report-path"] == "shards/" + std::to_string(i) + "/report.json");
  }
  Step merged = run_step(tmp.path(), "check",
                         {{"INPUT_CONFIG", "demo/gate.yaml"},
                          {"INPUT_BASELINE", k_baseline},
                          {"INPUT_REPORTS", "shards/*/report.json"}});
  INFO(merged.out << merged.err);
  CHECK(merged.outputs["verdict"] == "pass");
  CHECK(has(merged.out, "merged 2 of 2 shards"));
  CHECK(merged.outputs["report-path"] == ".gate/ci/report.json");
}

TEST_CASE("bad action inputs are refused before anything runs") {
  TempDir tmp;
  Step s = run_step(tmp.path(), "check", {{"INPUT_THRESHOLDS", "max-success-drop-pp=3;rm"}});
  CHECK(s.exit_code == 2);
  CHECK(has(s.err, "thresholds: expected name=value"));
  Step r = run_step(tmp.path(), "check", {{"INPUT_REPORTS", "nothing/*.json"}});
  CHECK(r.exit_code == 2);
  // The confirm input reaches gate check as --confirm.
  // (the check step records the error; the enforce step fails the job).
  Step c = run_step(tmp.path(), "check", {{"INPUT_CONFIRM", "many"}});
  INFO(c.out << c.err);
  CHECK(c.outputs["verdict"] == "error");
  CHECK(has(c.err, "the argument ('many') for option '--confirm' is invalid"));
}

TEST_CASE("action.yml: every input referenced is declared, every output is set by run.sh") {
  const std::string action = slurp(source_dir() / "action.yml");
  const std::string script = slurp(source_dir() / "action" / "run.sh");
  const std::size_t inputs_at = action.find("\ninputs:\n"), outputs_at = action.find("\noutputs:\n"),
                    runs_at = action.find("\nruns:\n");
  REQUIRE(inputs_at < outputs_at);
  REQUIRE(outputs_at < runs_at);
  std::set<std::string> declared;
  const std::regex key("\n  ([a-z-]+):\n");
  const std::string inputs = action.substr(inputs_at, outputs_at - inputs_at + 1);
  for (auto it = std::sregex_iterator(inputs.begin(), inputs.end(), key); it != std::sregex_iterator(); ++it)
    declared.insert((*it)[1]);
  CHECK(declared.size() >= 10);
  const std::regex use("inputs\\.([a-z-]+)");
  for (auto it = std::sregex_iterator(action.begin(), action.end(), use); it != std::sregex_iterator();
       ++it) {
    INFO("inputs." << (*it)[1]);
    CHECK(declared.count((*it)[1]) == 1);
  }
  const std::regex step_output("steps\\.check\\.outputs\\.([a-z-]+)");
  for (auto it = std::sregex_iterator(action.begin(), action.end(), step_output);
       it != std::sregex_iterator(); ++it) {
    INFO("steps.check.outputs." << (*it)[1]);
    CHECK(has(script, "set_output " + std::string((*it)[1])));
  }
  for (const char* out :
       {"verdict", "success-rate", "delta-pp", "consistency-gap", "regressed", "report-path"})
    CHECK(has(action, std::string("\n  ") + out + ":\n"));
}

TEST_CASE("fetch: the release binary of the action's tag, its sha256 verified") {
  if (!have_node()) return gate::testing::skip_test("node and curl are needed");
  TempDir tmp;
  const fs::path asset = make_release(tmp.path(), "");
  ReleaseServer server(tmp.path() / "releases");
  const std::map<std::string, std::string> env{{"GATE_RELEASE_BASE", server.base},
                                               {"GATE_RELEASE_REF", "v9.8.7"},
                                               {"RUNNER_TEMP", (tmp.path() / "runner").string()}};
  Step s = run_step(tmp.path(), "fetch", env);
  INFO(s.out << s.err);
  CHECK(s.exit_code == 0);
  CHECK(s.outputs["source"] == "release");
  const fs::path got = s.outputs["gate"];
  CHECK(got == tmp.path() / "runner" / "gate-release" / asset.filename());
  CHECK(slurp(got) == slurp(asset));
  CHECK(has(s.out, "from release v9.8.7, sha256"));
  CHECK(has(s.out, "verified"));
  // The check step runs the downloaded binary (GATE_BIN, as action.yml passes it).
  copy_demo(tmp.path());
  Step c = run_step(tmp.path(), "check",
                    {{"GATE_BIN", got.string()},
                     {"INPUT_CONFIG", "demo/gate.yaml"},
                     {"INPUT_BASELINE", k_baseline},
                     {"INPUT_MODE", "replay-only"}});
  INFO(c.out << c.err);
  CHECK(c.exit_code == 0);
  CHECK(c.outputs["verdict"] == "pass");
}

TEST_CASE("fetch: a wrong or missing checksum is refused and says so") {
  if (!have_node()) return gate::testing::skip_test("node and curl are needed");
  TempDir tmp;
  const fs::path asset = make_release(tmp.path(), std::string(64, '0'));
  ReleaseServer server(tmp.path() / "releases");
  std::map<std::string, std::string> env{{"GATE_RELEASE_BASE", server.base},
                                         {"GATE_RELEASE_REF", "v9.8.7"},
                                         {"RUNNER_TEMP", (tmp.path() / "runner").string()}};
  Step s = run_step(tmp.path(), "fetch", env);
  INFO(s.out << s.err);
  CHECK(s.exit_code == 2);
  CHECK(has(s.err,
            "::error::gate action: sha256 mismatch for " + asset.filename().string() + " of release v9.8.7"));
  CHECK(has(s.err, std::string(64, '0')));
  CHECK(has(s.err, "refusing it"));
  CHECK(s.outputs.count("gate") == 0);
  CHECK(s.outputs.count("source") == 0);
  CHECK_FALSE(fs::exists(tmp.path() / "runner" / "gate-release" / asset.filename()));

  fs::remove(asset.string() + ".sha256");
  s = run_step(tmp.path(), "fetch", env);
  INFO(s.out << s.err);
  CHECK(s.exit_code == 2);
  CHECK(has(s.err, "release v9.8.7 has no " + asset.filename().string() +
                       ".sha256 (HTTP 404): refusing an unverified binary"));
  CHECK(s.outputs.count("gate") == 0);
}

TEST_CASE("fetch: no release for the ref (404, a branch, uses: ./) falls back to the build") {
  if (!have_node()) return gate::testing::skip_test("node and curl are needed");
  TempDir tmp;
  make_release(tmp.path(), "");
  ReleaseServer server(tmp.path() / "releases");
  Step s = run_step(tmp.path(), "fetch",
                    {{"GATE_RELEASE_BASE", server.base},
                     {"GATE_RELEASE_REF", "v0.0.1"},
                     {"RUNNER_TEMP", (tmp.path() / "runner").string()}});
  INFO(s.out << s.err);
  CHECK(s.exit_code == 0);
  CHECK(s.outputs["source"] == "build");
  CHECK(s.outputs.count("gate") == 0);
  CHECK(has(s.out, "release v0.0.1 has no gate-linux-"));
  for (const char* ref : {"main", "v1.2", "1.2.3", "abc123"}) {
    Step b = run_step(tmp.path(), "fetch", {{"GATE_RELEASE_BASE", server.base}, {"GATE_RELEASE_REF", ref}});
    INFO(ref << ": " << b.out << b.err);
    CHECK(b.exit_code == 0);
    CHECK(b.outputs["source"] == "build");
    CHECK(has(b.out, "is no release tag"));
  }
}

// What `command` prints on stdout (stderr too when it says 2>&1), and its
// exit code.
std::pair<int, std::string> capture(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string text;
  char buf[512];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    text.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

// The commit `gate --version` names ("gate 0.1.0 (commit 10948ba27fc7)"),
// "" when the binary was built outside git.
std::string binary_commit() {
  const std::string text = capture(quoted(GATE_BINARY) + " --version").second;
  std::smatch m;
  return std::regex_search(text, m, std::regex(R"(\(commit ([0-9a-f]{12})\))")) ? std::string(m[1]) : "";
}

// A fetch step that took the release binary of `version` (`asset`).
void check_release(const Step& s, const std::string& version, const fs::path& asset) {
  INFO(s.out << s.err);
  CHECK(s.exit_code == 0);
  CHECK(s.outputs.at("source") == "release");
  CHECK(has(s.out, "from release v" + version + ", sha256"));
  CHECK(slurp(s.outputs.at("gate")) == slurp(asset));
}

TEST_CASE(
    "fetch: a commit SHA (or uses: ./ at that commit) downloads the release built from it; another builds") {
  if (!have_node()) return gate::testing::skip_test("node and curl are needed");
  const std::string commit = binary_commit();
  if (commit.empty())
    return gate::testing::skip_test("the gate under test names no commit (built outside git)");
  TempDir tmp;
  const std::string version = project_version();
  const fs::path asset = make_release(tmp.path(), "", "v" + version);
  ReleaseServer server(tmp.path() / "releases");
  const std::string sha = commit + std::string(28, 'a');
  std::map<std::string, std::string> env{{"GATE_RELEASE_BASE", server.base},
                                         {"GATE_RELEASE_REF", sha},
                                         {"RUNNER_TEMP", (tmp.path() / "runner").string()}};
  Step s = run_step(tmp.path(), "fetch", env);
  check_release(s, version, asset);
  CHECK(has(s.out, "gate action: commit " + commit + ": looking for it in release v" + version));

  // No ref (uses: ./): the checkout's commit decides the same way.
  env["GATE_RELEASE_REF"] = "";
  env["GATE_ACTION_COMMIT"] = sha;
  check_release(run_step(tmp.path(), "fetch", env), version, asset);

  // A commit the release was not built from is built from source, and the
  // downloaded binary does not stay behind.
  env.erase("GATE_ACTION_COMMIT");
  const std::string other = (commit[0] == 'f' ? std::string(40, 'e') : std::string(40, 'f'));
  env["GATE_RELEASE_REF"] = other;
  Step b = run_step(tmp.path(), "fetch", env);
  INFO(b.out << b.err);
  CHECK(b.exit_code == 0);
  CHECK(b.outputs["source"] == "build");
  CHECK(b.outputs.count("gate") == 0);
  CHECK(has(b.out, "commit " + other.substr(0, 12) + " is not release v" + version + " (built from " +
                       commit + "): building gate from source"));
  CHECK_FALSE(fs::exists(tmp.path() / "runner" / "gate-release" / asset.filename()));

  // A commit whose version has no release (404) builds too.
  fs::remove_all(tmp.path() / "releases" / ("v" + version));
  env["GATE_RELEASE_REF"] = sha;
  Step none = run_step(tmp.path(), "fetch", env);
  INFO(none.out << none.err);
  CHECK(none.outputs["source"] == "build");
  CHECK(has(none.out, "release v" + version + " has no gate-linux-"));

  // Something that is not a commit is said, not guessed around.
  env["GATE_RELEASE_REF"] = "";
  env["GATE_ACTION_COMMIT"] = "not-a-sha";
  Step bad = run_step(tmp.path(), "fetch", env);
  CHECK(bad.exit_code == 2);
  CHECK(has(bad.err, "::error::gate action: the action's commit 'not-a-sha' is no 40-digit SHA"));
}

// `.ci/deps --print` for an /etc/os-release holding `os`: its exit code,
// then what it printed (stdout and stderr).
std::pair<int, std::string> deps_for(const fs::path& dir, const std::string& os) {
  spit(dir / "os-release", os);
  return capture("GATE_OS_RELEASE=" + quoted((dir / "os-release").string()) + " bash " +
                 quoted((source_dir() / ".ci" / "deps").string()) + " --print 2>&1");
}

TEST_CASE("the build path's packages: Debian 12's Boost 1.81 packages, the plain names on Debian 13 and "
          "ubuntu-latest, a clear refusal elsewhere") {
  TempDir tmp;
  const std::string common = " libssl-dev libyaml-cpp-dev libre2-dev doctest-dev openssl";
  auto [code12, debian12_pkgs] = deps_for(tmp.path(), "ID=debian\nVERSION_ID=\"12\"\n");
  CHECK(code12 == 0);
  CHECK(
      has(debian12_pkgs, "libboost1.81-dev libboost-program-options1.81-dev libboost-json1.81-dev" + common));
  // ubuntu-latest (24.04) and Debian 13 default to Boost 1.83: libboost-json-dev
  // and the others by their plain names (the names .ci/debian13 installs).
  for (const char* os : {"ID=ubuntu\nVERSION_ID=\"24.04\"\n", "ID=ubuntu\nVERSION_ID=\"26.04\"\n",
                         "ID=debian\nVERSION_ID=\"13\"\n"}) {
    const auto result = deps_for(tmp.path(), os);
    const int code = result.first;
    const std::string pkgs = result.second;
    INFO(os << ": " << pkgs);
    CHECK(code == 0);
    CHECK(has(pkgs, "g++ cmake make libboost-dev libboost-program-options-dev libboost-json-dev" + common));
    CHECK_FALSE(has(pkgs, "1.81"));
  }
  auto [code22, jammy] = deps_for(tmp.path(), "ID=ubuntu\nVERSION_ID=\"22.04\"\n");
  CHECK(code22 == 1);
  CHECK(has(jammy, "Ubuntu 22.04 has no Boost >= 1.81, which gate needs: use ubuntu-24.04 or later, or "
                   "container: debian:12"));
  auto [code_other, fedora] = deps_for(tmp.path(), "ID=fedora\nVERSION_ID=41\n");
  CHECK(code_other == 1);
  CHECK(has(fedora, "fedora 41 is neither Debian nor Ubuntu"));
  // On this machine, when it is Debian 12, every name it prints is a real,
  // installed package (the build above used them).
  if (debian12()) {
    auto [code, here] = deps_for(tmp.path(), slurp("/etc/os-release"));
    REQUIRE(code == 0);
    std::istringstream words(here);
    for (std::string word; words >> word;) {
      const std::string pkg = word;
      INFO(pkg);
      CHECK(std::system(("dpkg-query -W -f='${Status}' " + quoted(pkg) +
                         " 2>/dev/null | grep -q 'install ok installed'")
                            .c_str()) == 0);
    }
  }
}

TEST_CASE("actionlint and the action/workflow schema check pass on every workflow and action.yml") {
  std::vector<fs::path> files{source_dir() / "action.yml"};
  for (const auto& dir : {source_dir() / ".github" / "workflows", source_dir() / "examples" / "workflows"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".yml" || e.path().extension() == ".yaml") files.push_back(e.path());
  CHECK(files.size() >= 5);
  TempDir tmp;
  std::string command = "node " + quoted((source_dir() / "action" / "lint.cjs").string());
  for (const auto& f : files)
    command += " " + quoted(f.string());
  command += " >" + quoted((tmp.path() / "lint.out").string()) + " 2>&1";
  const int status = std::system(command.c_str());
  const std::string out = slurp(tmp.path() / "lint.out");
  INFO(out);
  // 2 = the linters are not installed: `bash .ci/deps --test` installs them.
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(has(out, std::to_string(files.size()) + " file(s), 0 finding(s)"));

  // The check is real: a broken workflow fails it.
  spit(tmp.path() / "broken.yml", "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                                  "      - run: echo ${{ github.event.pull_request.title }}\n");
  const std::string broken = "node " + quoted((source_dir() / "action" / "lint.cjs").string()) + " " +
                             quoted((tmp.path() / "broken.yml").string()) + " >/dev/null 2>&1";
  const int bad = std::system(broken.c_str());
  CHECK(WEXITSTATUS(bad) == 1);
}

TEST_CASE("fetch: a major tag (v0, v1) downloads the release its CMakeLists.txt names") {
  if (!have_node()) return gate::testing::skip_test("node and curl are needed");
  TempDir tmp;
  const std::string version = project_version(), major = "v" + version.substr(0, version.find('.'));
  const fs::path asset = make_release(tmp.path(), "", "v" + version);
  ReleaseServer server(tmp.path() / "releases");
  std::map<std::string, std::string> env{{"GATE_RELEASE_BASE", server.base},
                                         {"GATE_RELEASE_REF", major},
                                         {"RUNNER_TEMP", (tmp.path() / "runner").string()}};
  Step s = run_step(tmp.path(), "fetch", env);
  check_release(s, version, asset);
  CHECK(has(s.out, "gate action: " + major + " is gate " + version));

  // A major tag moved to another major's commit is a maintainer's mistake: said, never guessed around.
  env["GATE_RELEASE_REF"] = "v98";
  Step wrong = run_step(tmp.path(), "fetch", env);
  CHECK(wrong.exit_code == 2);
  CHECK(has(wrong.err,
            "::error::gate action: the tag v98 points at gate " + version + ", which is no v98.x.y release"));
  CHECK(wrong.outputs.count("source") == 0);
}

TEST_CASE(
    "install: the binary on PATH as gate, its path as the gate output; install-only must be true or false") {
  TempDir tmp;
  const fs::path github_path = tmp.path() / "github_path";
  const std::map<std::string, std::string> env{{"RUNNER_TEMP", (tmp.path() / "runner").string()},
                                               {"GITHUB_PATH", github_path.string()},
                                               {"INPUT_INSTALL_ONLY", "true"}};
  Step s = run_step(tmp.path(), "install", env);
  INFO(s.out << s.err);
  REQUIRE(s.exit_code == 0);
  const fs::path bin = tmp.path() / "runner" / "gate-bin";
  CHECK(s.outputs["gate"] == (bin / "gate").string());
  CHECK(fs::equivalent(bin / "gate", GATE_BINARY));
  CHECK(slurp(github_path) == bin.string() + "\n");
  CHECK(has(s.out, "on PATH (" + (bin / "gate").string() + ")"));
  // A later step finds it by name, as a workflow's `run: gate compare …` does.
  const std::string later = "PATH=" + quoted(bin.string()) + ":/usr/bin:/bin gate --version >" +
                            quoted((tmp.path() / "version.out").string());
  CHECK(std::system(later.c_str()) == 0);
  CHECK(has(slurp(tmp.path() / "version.out"), "gate "));

  std::map<std::string, std::string> bad = env;
  bad["INPUT_INSTALL_ONLY"] = "yes";
  Step b = run_step(tmp.path(), "install", bad);
  CHECK(b.exit_code == 2);
  CHECK(has(b.err, "install-only: expected true or false, got \"yes\""));
  bad["INPUT_INSTALL_ONLY"] = "false";
  bad["GATE_BIN"] = (tmp.path() / "no-such-gate").string();
  b = run_step(tmp.path(), "install", bad);
  CHECK(b.exit_code == 2);
  CHECK(has(b.err, "no gate binary at"));
}

TEST_CASE("action.yml: with install-only, every step after the install is skipped") {
  const std::string action = slurp(source_dir() / "action.yml");
  const std::size_t install_at = action.find("\n    - name: Put gate on PATH\n");
  REQUIRE(install_at != std::string::npos);
  CHECK(has(action.substr(install_at, action.find("\n    - name:", install_at + 1) - install_at),
            "INPUT_INSTALL_ONLY: ${{ inputs.install-only }}"));
  int after = 0;
  for (std::size_t at = action.find("\n    - name:", install_at + 1); at != std::string::npos; ++after) {
    const std::size_t next = action.find("\n    - name:", at + 1);
    const std::string step = action.substr(at, next == std::string::npos ? std::string::npos : next - at);
    INFO(step);
    CHECK(std::regex_search(step, std::regex("\n      if: [^\n]*inputs\\.install-only != 'true'")));
    at = next;
  }
  CHECK(after == 4); // check, comment, upload, enforce
}

// The build fallback as action.yml runs it when fetch finds no release:
// deps, cache-key, build, install, then check with the binary it built. A
// cold build of gate takes minutes (about 535 CPU-seconds), more than CI's
// budget, so the build step gets the tests' own build directory, already
// built, as a warm actions/cache hit restores one: .ci/build configures it
// again (with the build type, GATE_PORTABLE and GATE_UNITY it was made with, so nothing
// changes) and brings the gate target up to date. The cold compile is the
// same .ci/build that .ci/run starts with.
TEST_CASE(
    "fallback: no release (404) builds gate with the action's own steps, and the check runs that build") {
  if (!have_node() || !debian12()) return gate::testing::skip_test("node, curl and Debian 12 are needed");
  TempDir tmp;
  fs::create_directories(tmp.path() / "releases");
  ReleaseServer server(tmp.path() / "releases");
  const fs::path build_dir = fs::path(GATE_BINARY).parent_path();
  std::map<std::string, std::string> env{
      {"GATE_RELEASE_BASE", server.base},
      {"GATE_RELEASE_REF", "v9.8.7"},
      {"RUNNER_TEMP", (tmp.path() / "runner").string()},
      {"GATE_BIN", ""},
      {"GATE_BUILD_DIR", build_dir.string()},
      {"GATE_BUILD_TYPE", cmake_cache_value(build_dir, "CMAKE_BUILD_TYPE")},
      {"GATE_PORTABLE", cmake_cache_value(build_dir, "GATE_PORTABLE")},
      {"GATE_UNITY", cmake_cache_value(build_dir, "GATE_UNITY")}};
  Step fetch = run_step(tmp.path(), "fetch", env);
  INFO(fetch.out << fetch.err);
  REQUIRE(fetch.outputs["source"] == "build");

  Step deps = run_step(tmp.path(), "deps", env);
  INFO(deps.out << deps.err);
  CHECK(deps.exit_code == 0);

  Step key = run_step(tmp.path(), "cache-key", env);
  struct utsname u {};
  ::uname(&u);
  CHECK(std::regex_match(key.outputs["key"],
                         std::regex(std::string("gate-build-Linux-") + u.machine + "-[0-9a-f]{16}")));
  CHECK(run_step(tmp.path(), "cache-key", env).outputs["key"] == key.outputs["key"]);

  Step build = run_step(tmp.path(), "build", env);
  INFO(build.out << build.err);
  REQUIRE(build.exit_code == 0);
  CHECK(has(build.out, "Built target gate"));
  // The tests' targets survive: the build step configures none away.
  CHECK(cmake_cache_value(build_dir, "GATE_BUILD_TESTS") == "ON");

  Step install = run_step(tmp.path(), "install", env);
  INFO(install.out << install.err);
  REQUIRE(install.exit_code == 0);
  CHECK(fs::equivalent(install.outputs["gate"], build_dir / "gate"));

  copy_demo(tmp.path());
  env["GATE_BIN"] = install.outputs["gate"];
  env["INPUT_CONFIG"] = "demo/gate.yaml";
  env["INPUT_BASELINE"] = k_baseline;
  env["INPUT_MODE"] = "replay-only";
  Step check = run_step(tmp.path(), "check", env);
  INFO(check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK(check.outputs["verdict"] == "pass");
}

// Workflows that work when copied (issue 16 item 5): a placeholder, or a
// script that only this repository has, fails a user's first run.
TEST_CASE("the docs and the example workflows name the real action: the project's path at a version tag") {
  std::smatch m;
  const std::string cmake = slurp(source_dir() / "CMakeLists.txt");
  REQUIRE(std::regex_search(
      cmake, m, std::regex(R"(HOMEPAGE_URL https://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+))")));
  const std::string repository = m[1]; // the one place the path is defined

  std::vector<fs::path> docs{source_dir() / "README.md", source_dir() / "ARCHITECTURE.md",
                             source_dir() / "action.yml"};
  for (const auto& dir :
       {source_dir() / "docs", source_dir() / "examples", source_dir() / "action", source_dir() / ".github"})
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file()) docs.push_back(e.path());
  const std::regex uses(R"(uses: *([A-Za-z0-9_.<>-]+/gate)@([^\s`'"]+))");
  std::map<std::string, int> uses_in;
  for (const auto& file : docs) {
    const std::string text = slurp(file);
    const std::string name = fs::relative(file, source_dir()).string();
    INFO(name);
    CHECK_FALSE(has(text, "your-org"));
    CHECK_FALSE(has(text, "<owner>/gate"));
    for (auto it = std::sregex_iterator(text.begin(), text.end(), uses); it != std::sregex_iterator(); ++it) {
      INFO((*it)[0]);
      CHECK((*it)[1] == repository);
      CHECK(std::regex_match((*it)[2].str(), std::regex(R"(v[0-9]+|v[0-9]+\.[0-9]+\.[0-9]+|vX\.Y\.Z)")));
      ++uses_in[name];
    }
    // An example is copied into another repository, where .ci/ does not exist.
    if (name.rfind("examples/", 0) == 0) CHECK_FALSE(has(text, ".ci/"));
  }
  for (const char* name : {"README.md", "docs/ci.md", "examples/workflows/pr-gate.yml",
                           "examples/workflows/sharded.yml", "examples/workflows/fork-commenter.yml"}) {
    INFO(name);
    CHECK(uses_in[name] >= 1);
  }
}

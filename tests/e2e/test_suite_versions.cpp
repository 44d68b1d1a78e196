// End-to-end: a newer suite version is never ignored in silence (issue
// 27.7). `gate suite new-version` prints the next steps for the gate.yaml
// that pins the suite; `gate check` on a pinned older version says so on
// its first line; a task the new version adds shows how it does.
#include <doctest.h>

#include <filesystem>
#include <sstream>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

using namespace gate::e2e;
namespace fs = std::filesystem;

namespace {

bool has(const std::string& hay, const std::string& needle) {
  const bool found = hay.find(needle) != std::string::npos;
  if (!found) MESSAGE("expected \"" << needle << "\" in:\n" << hay);
  return found;
}

std::string cases(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i)
    out += R"({"id": "t)" + std::to_string(i) + R"(", "input": "question )" + std::to_string(i) +
           R"(", "checks": [{"type": "contains", "value": "yes"}]})" + "\n";
  return out;
}

std::string config(const std::string& base_url, const std::string& version) {
  return "suite:\n  path: suite\n  version: " + version +
         "\nmodel:\n  provider: openai\n  base_url: " + base_url +
         "\n  api_key_env: GATE_VERSIONS_KEY\n  name: m\n  temperature: 0\nruns: 3\ncache:\n  dir: cache\n"
         "  mode: replay\nbaseline: baseline.json\noutputs:\n  dir: out\n";
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

} // namespace

TEST_CASE("a newer suite version: new-version names the gate.yaml line and the baseline update, check says "
          "the pin is not the latest on its first line, and an added task shows its pass rate") {
  gate::testing::Script script;
  script.rules.push_back({"", {"yes"}});
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  const std::map<std::string, std::string> key{{"GATE_VERSIONS_KEY", "sk-versions-not-a-secret-01"}};
  spit(tmp.path() / "cases.jsonl", cases(4));
  REQUIRE(run_gate({"suite", "create", "suite", "--name", "versions", "--from", "cases.jsonl"}, tmp.path())
              .exit_code == 0);
  spit(tmp.path() / "gate.yaml", config(upstream.base_url(), "v1"));
  REQUIRE(run_gate({"run", "--config", "gate.yaml", "--quiet"}, tmp.path(), key).exit_code == 0);
  REQUIRE(run_gate({"baseline", "update", "--report", "out/report.json", "--config", "gate.yaml"}, tmp.path())
              .exit_code == 0);

  // A fifth task, as a new version.
  spit(tmp.path() / "cases.jsonl", cases(5));
  Result added = run_gate({"suite", "new-version", "suite", "--from", "cases.jsonl"}, tmp.path());
  INFO(added.out << added.err);
  REQUIRE(added.exit_code == 0);
  CHECK(has(added.out, "added v2 to suite (now latest; older versions unchanged)\nnext, to test v2:\n"));
  CHECK(has(added.out, "  1. gate.yaml:3: suite.version: v2 (or no version: the latest)\n"));
  CHECK(has(added.out, "  2. gate run --config gate.yaml --mode replay"));
  CHECK(has(added.out, "  3. gate baseline update --report out/report.json --config gate.yaml"));

  // Still pinned to v1: the check says so first, and in the verdict.
  Result pinned = run_gate({"check", "--config", "gate.yaml", "--markdown", "out/pinned.md"}, tmp.path());
  INFO(pinned.out << pinned.err);
  CHECK(pinned.exit_code == 0);
  CHECK(
      first_line(pinned.err) ==
      "gate: warning: gate.yaml pins suite.version v1, but suite's latest version is v2: this run tests v1. "
      "To test v2, set suite.version: v2 (or remove the pin: no version means the latest), record it, and "
      "accept it with gate baseline update");
  CHECK(has(slurp(tmp.path() / "out" / "pinned.md"),
            "pins suite.version v1, but suite's latest version is v2"));

  // The steps as printed: the pin moved, v2 recorded, the new task shown.
  spit(tmp.path() / "gate.yaml", config(upstream.base_url(), "v2"));
  Result v2 = run_gate({"check", "--config", "gate.yaml", "--mode", "replay", "--allow-suite-change",
                        "--markdown", "out/v2.md", "--json", "out/v2.json"},
                       tmp.path(), key);
  INFO(v2.out << v2.err);
  CHECK(v2.exit_code == 0);
  CHECK(v2.err.find("pins suite.version") == std::string::npos);
  CHECK(has(slurp(tmp.path() / "out" / "v2.md"), "### Added tasks (1)"));
  CHECK(has(slurp(tmp.path() / "out" / "v2.md"), "- ` t5 `: 3/3 runs passed"));
  const auto json = read_json(tmp.path() / "out" / "v2.json");
  CHECK(json.at("added").as_array().size() == 1);
  CHECK(json.at("added_runs").at(0).at("passed") == 3);
  CHECK(json.at("added_runs").at(0).at("runs") == 3);
}

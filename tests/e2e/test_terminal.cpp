// End-to-end: untrusted text on the terminal and in Actions logs
// (RELIABILITY.md item 36, issue 21 item 1). A task id that holds a line
// feed followed by a workflow command, and ESC, is driven to regress; what
// gate prints to stdout and stderr must hold no raw ESC, and no line
// outside the annotations' stop-commands block may start with `::`.
#include <doctest.h>

#include <sstream>

#include <gate/util/sha256.hpp>

#include "harness.hpp"
#include <tests/support/fake_upstream.hpp>

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

// As JSON in cases.jsonl, and as gate must print it (util/terminal.hpp).
const std::string k_hostile_json = R"(hostile\n::set-output name=x::y\u001b[31m\r::warning::w)";
const std::string k_hostile_shown = R"(hostile\n::set-output name=x::y\x1b[31m\r::warning::w)";

// Six tasks whose checks pass on the fake's "echo: …" answer, one of them
// with the hostile id; k = 8 so one task going 8/8 → 0/8 is significant.
fs::path hostile_suite(const fs::path& dir, const std::string& base_url, const std::string& cache,
                       const std::string& mode = "replay", const std::string& input = "hostile question") {
  std::string cases;
  for (int i = 0; i < 5; ++i)
    cases += R"({"id": "t)" + std::to_string(i) + R"(", "input": "question )" + std::to_string(i) +
             R"(", "checks": [{"type": "contains", "value": "echo"}]})"
             "\n";
  cases += R"({"id": ")" + k_hostile_json + R"(", "input": ")" + input +
           R"(", "checks": [{"type": "contains", "value": "echo"}]})"
           "\n";
  fs::create_directories(dir / "suite" / "versions" / "v1");
  spit(dir / "suite" / "versions" / "v1" / "cases.jsonl", cases);
  spit(dir / "suite" / "metadata.json",
       R"({"name": "hostile", "latest": "v1", "versions": [{"version": "v1", "sha256": ")" +
           gate::sha256_hex(cases) + R"(", "cases": 6}]})");
  const fs::path config = dir / ("gate-" + cache + ".yaml");
  spit(config, "suite:\n  path: suite\nmodel:\n  base_url: " + base_url +
                   "\n  api_key_env: GATE_TERM_KEY\n  name: m\nruns: 8\nconcurrency: 4\ncache:\n  dir: " +
                   cache + "\n  mode: " + mode + "\noutputs:\n  dir: out-" + cache + "\n");
  return config;
}

const std::map<std::string, std::string> k_env{{"GATE_TERM_KEY", "sk-term-test-not-a-secret-01"},
                                               {"GITHUB_ACTIONS", "true"}};

// Lines of `text` outside the ::stop-commands::TOKEN … ::TOKEN:: block
// that start with "::", other than the block's own two lines and gate's own
// annotations (render/annotations.hpp: `::error title=gate::…`, whose data
// has its line breaks as %0A, so one line each).
std::vector<std::string> commands_outside_block(const std::string& text) {
  std::vector<std::string> found;
  std::istringstream in(text);
  std::string line, token;
  while (std::getline(in, line)) {
    if (token.empty() && line.rfind("::stop-commands::", 0) == 0) {
      token = line.substr(17);
      continue;
    }
    if (!token.empty()) {
      if (line == "::" + token + "::") token.clear();
      continue;
    }
    const bool annotation = line.rfind("::error title=gate::", 0) == 0 ||
                            line.rfind("::warning title=gate::", 0) == 0 ||
                            line.rfind("::notice title=gate::", 0) == 0;
    if (line.rfind("::", 0) == 0 && !annotation) found.push_back(line);
  }
  return found;
}

void check_inert(const Result& r) {
  INFO(r.out);
  INFO(r.err);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(commands_outside_block(r.out) == std::vector<std::string>{});
  CHECK(commands_outside_block(r.err) == std::vector<std::string>{});
  // Inside the block too: the hostile command never starts a line.
  CHECK((r.out + r.err).find("\n::set-output") == std::string::npos);
  CHECK((r.out + r.err).find("\n::warning::w") == std::string::npos);
}

} // namespace

TEST_CASE("rel-36: a task id holding a newline + workflow command and ESC is printed inert by check, compare "
          "and run") {
  gate::testing::clear_network_env();
  gate::testing::FakeUpstream good(gate::testing::Script{});
  good.start();
  gate::testing::Script bad_script;
  bad_script.rules.push_back({"hostile question", {"no"}});
  gate::testing::FakeUpstream bad(bad_script);
  bad.start();
  TempDir tmp;

  const fs::path before = hostile_suite(tmp.path(), good.base_url(), "cache-a");
  Result rec = run_gate({"run", "--config", before.string(), "--quiet"}, tmp.path(), k_env);
  REQUIRE(rec.exit_code == 0);
  check_inert(rec);
  Result up =
      run_gate({"baseline", "update", "--report", "out-cache-a/report.json", "--baseline", "base.json"},
               tmp.path(), k_env);
  REQUIRE(up.exit_code == 0);
  check_inert(up);

  // The hostile task now fails every run: gate check regresses on it.
  const fs::path after = hostile_suite(tmp.path(), bad.base_url(), "cache-b");
  Result check = run_gate({"check", "--config", after.string(), "--baseline", "base.json", "--quiet"},
                          tmp.path(), k_env);
  CHECK(check.exit_code == 1);
  check_inert(check);
  CHECK(check.out.find("::stop-commands::") != std::string::npos); // the annotations were printed
  CHECK(check.out.find(k_hostile_shown) != std::string::npos);     // the headline names it, escaped

  for (const std::string format : {"text", "md", "json"}) {
    CAPTURE(format);
    Result cmp = run_gate(
        {"compare", "--baseline", "base.json", "--current", "out-cache-b/report.json", "--format", format},
        tmp.path(), k_env);
    CHECK(cmp.exit_code == 1);
    check_inert(cmp);
  }

  // replay-only with the hostile task's prompt changed: its 8 runs are the
  // miss list on stderr.
  const fs::path miss_config =
      hostile_suite(tmp.path(), good.base_url(), "cache-a", "replay-only", "changed");
  Result miss = run_gate({"run", "--config", miss_config.string(), "--quiet"}, tmp.path(), k_env);
  CHECK(miss.exit_code == 4);
  check_inert(miss);
  CHECK(miss.err.find("missing: task " + k_hostile_shown) != std::string::npos);
}

TEST_CASE("rel-36: an error naming a hostile file name is printed inert by the one catch in main") {
  TempDir tmp;
  const std::string name = "missing\n::warning::w\x1b[2J.json";
  Result r =
      run_gate({"compare", "--baseline", name, "--current", name}, tmp.path(), {{"GITHUB_ACTIONS", "true"}});
  CHECK(r.exit_code == 2);
  check_inert(r);
  CHECK(r.err.find(R"(no baseline at missing\n::warning::w\x1b[2J.json)") != std::string::npos);
}

// End-to-end: a committed cache that a pull request can edit (issue 21
// item 9). The checksum catches corruption, not a rewrite with a recomputed
// checksum; `gate check --trusted-cache DIR` compares every replayed entry
// with the base branch's copy.
#include <doctest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdlib>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

// math-days, run 1: the demo's model answered 7 (the check wants 8).
const std::string k_failing_entry =
    "50/50c39cb5dff6719e2bc138132a1153e65c5576e822c340429f2bed907b3c7798.entry";
// extract-date-iso, run 2.
const std::string k_other_entry = "1c/1ca4bb9153ae191277c8719acd13177854ef5f0f8b09af798e08a486c13b0a21.entry";

Result check(const fs::path& cwd, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"check",
                                "--config",
                                "demo/gate.yaml",
                                "--baseline",
                                (source_dir() / "baselines" / "demo.json").string(),
                                "--out",
                                "out",
                                "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_gate(args, cwd);
}

} // namespace

TEST_CASE("--trusted-cache: an entry the branch rewrote with a fresh checksum fails the gate, naming it") {
  TempDir tmp;
  copy_demo(tmp.path());
  fs::copy(tmp.path() / "demo" / "cache", tmp.path() / "trusted", fs::copy_options::recursive);
  rewrite_answer(tmp.path() / "demo" / "cache" / k_failing_entry, R"(\"content\":\"Answer: 7\")",
                 R"(\"content\":\"Answer: 8\")");

  // Without the trusted cache the rewrite is served: the checksum verifies.
  Result plain = check(tmp.path(), {});
  INFO(plain.out << plain.err);
  CHECK(plain.exit_code == 0);
  CHECK(plain.err.find("corrupt") == std::string::npos);
  fs::remove_all(tmp.path() / "out");

  Result r = check(tmp.path(), {"--trusted-cache", "trusted"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("gate: error: 1 replayed cache entry differs from the trusted cache trusted: demo/cache/" +
                   k_failing_entry + " (task \"math-days\" run 1)") != std::string::npos);
  CHECK(r.err.find("restore these entries from the base branch, or record them again in CI") !=
        std::string::npos);
  CHECK(!fs::exists(tmp.path() / "out" / "report.json")); // nothing judged, nothing written
  CHECK(!fs::exists(tmp.path() / "out" / "verdict.json"));
}

TEST_CASE(
    "--trusted-cache: entries the branch added are listed as recorded outside CI in every verdict form") {
  TempDir tmp;
  copy_demo(tmp.path());
  fs::copy(tmp.path() / "demo" / "cache", tmp.path() / "trusted", fs::copy_options::recursive);
  // The base branch lacks one entry: the branch recorded it (same bytes as
  // the demo's, so the verdict is the demo's own pass).
  fs::remove(tmp.path() / "trusted" / k_other_entry);

  Result r = check(tmp.path(), {"--trusted-cache", "trusted"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const std::string warning =
      "1 replayed answer was recorded outside CI (not in the trusted cache trusted): the "
      "branch supplied task \"extract-date-iso\" run 2";
  CHECK(r.out.find("  ! " + warning + "\n") != std::string::npos);
  CHECK(r.err.find("gate: warning: " + warning + "\n") != std::string::npos);
  CHECK(slurp(tmp.path() / "out" / "verdict.md").find("recorded outside CI") != std::string::npos);
  const auto json = read_json(tmp.path() / "out" / "verdict.json");
  bool in_json = false;
  for (const auto& w : json.at("warnings").as_array())
    in_json = in_json || w.as_string() == warning;
  CHECK(in_json);
  CHECK(slurp(tmp.path() / "out" / "verdict.xml").find("recorded outside CI") != std::string::npos);

  // The whole trusted cache present: nothing to list.
  fs::copy(tmp.path() / "demo" / "cache" / k_other_entry, tmp.path() / "trusted" / k_other_entry);
  Result same = check(tmp.path(), {"--trusted-cache", "trusted"});
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("recorded outside CI") == std::string::npos);

  // A trusted cache that is not there is bad input, not an empty one.
  Result missing = check(tmp.path(), {"--trusted-cache", "nowhere"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("--trusted-cache: expected a cache directory, nowhere is missing") !=
        std::string::npos);
}

namespace {

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int shell(const fs::path& dir, const std::string& command) {
  return std::system(("cd " + quoted(dir.string()) + " && " + command + " >>shell.log 2>&1").c_str());
}

// action/run.sh check on a pull request whose base branch is `main`.
std::string action_check(const fs::path& repo, const std::string& trusted_input) {
  fs::remove(repo / "github_output");
  std::string env =
      "env -u GATE_DEMO_API_KEY GITHUB_ACTIONS=true GITHUB_EVENT_NAME=pull_request GITHUB_BASE_REF=main"
      " GATE_BIN=" +
      quoted(gate_binary()) + " GITHUB_OUTPUT=" + quoted((repo / "github_output").string()) +
      " GITHUB_STEP_SUMMARY=/dev/null RUNNER_TEMP=" + quoted(repo.parent_path().string()) +
      " INPUT_CONFIG=demo/gate.yaml INPUT_OUT_DIR=.gate/ci INPUT_BASELINE=" +
      quoted((source_dir() / "baselines" / "demo.json").string()) +
      (trusted_input.empty() ? "" : " INPUT_TRUSTED_CACHE=" + trusted_input);
  shell(repo, env + " bash " + quoted((source_dir() / "action" / "run.sh").string()) + " check");
  return fs::exists(repo / "github_output") ? slurp(repo / "github_output") : "";
}

} // namespace

TEST_CASE(
    "the action compares with the base branch's committed cache by default; trusted-cache: off does not") {
  TempDir tmp;
  const fs::path repo = tmp.path() / "repo";
  fs::create_directories(repo);
  copy_demo(repo);
  REQUIRE(shell(repo, "git init -q -b main . && git -c user.name=t -c user.email=t@t add demo && "
                      "git -c user.name=t -c user.email=t@t commit -q -m base && git remote add origin " +
                          quoted(repo.string()) + " && git checkout -q -b pr") == 0);
  rewrite_answer(repo / "demo" / "cache" / k_failing_entry, R"(\"content\":\"Answer: 7\")",
                 R"(\"content\":\"Answer: 8\")");
  REQUIRE(shell(repo, "git -c user.name=t -c user.email=t@t commit -q -am 'a passing answer'") == 0);

  const std::string by_default = action_check(repo, "");
  INFO(by_default << slurp(repo / "shell.log"));
  CHECK(by_default.find("verdict=error\n") != std::string::npos);
  CHECK(by_default.find("exit-code=2\n") != std::string::npos);
  CHECK(slurp(repo / "shell.log").find("differs from the trusted cache") != std::string::npos);

  const std::string off = action_check(repo, "off");
  CHECK(off.find("verdict=pass\n") != std::string::npos);
}

TEST_CASE("--trusted-cache holds the agents' answers, served by the proxy, too: an added one is named, a "
          "rewritten one refused") {
  TempDir tmp;
  fs::copy(source_dir() / "fixtures" / "agents", tmp.path() / "agents", fs::copy_options::recursive);
  const fs::path cache = tmp.path() / "agents" / "cache";
  fs::copy(cache, tmp.path() / "trusted", fs::copy_options::recursive);
  std::vector<fs::path> recorded = files_below(cache);
  std::sort(recorded.begin(), recorded.end());
  REQUIRE_FALSE(recorded.empty());
  const fs::path entry = recorded.front();
  const fs::path trusted_copy = tmp.path() / "trusted" / fs::relative(entry, cache);
  // Its scope, "/t/<task>/r/<run>/...", names the task and run it answered.
  const std::string text = slurp(entry);
  const std::size_t line = text.find('\n') + 1;
  const std::string path(
      boost::json::parse(text.substr(line, text.find('\n', line) - line)).at("path").as_string());
  const std::size_t r_at = path.find("/r/");
  const std::string task = path.substr(3, r_at - 3);
  const std::string run = path.substr(r_at + 3, path.find('/', r_at + 3) - r_at - 3);
  auto replay = [&](const std::string& out) {
    return run_gate({"run", "--config", (tmp.path() / "agents" / "gate.yaml").string(), "--mode",
                     "replay-only", "--out", out, "--quiet", "--trusted-cache", "trusted"},
                    tmp.path());
  };

  // The branch added the answer: replayed, and named.
  fs::remove(trusted_copy);
  Result added = replay("out1");
  INFO(added.out << added.err);
  CHECK(added.exit_code == 0);
  CHECK(added.err.find("gate: warning: 1 replayed answer was recorded outside CI (not in the trusted cache "
                       "trusted): the branch supplied task \"" +
                       task + "\" run " + run) != std::string::npos);

  // The branch rewrote it (its usage, with a fresh checksum): refused.
  fs::copy_file(entry, trusted_copy);
  rewrite_answer(entry, R"(\"completion_tokens\":)", R"(\"completion_tokens\":1)");
  Result refused = replay("out2");
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("1 replayed cache entry differs from the trusted cache trusted: " + entry.string() +
                         " (task \"" + task + "\" run " + run + ")") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path() / "out2" / "report.json"));
}

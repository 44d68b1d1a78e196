// End-to-end: `gate hook install|uninstall` in a temporary git repository
// that pushes to a local bare remote.
#include <doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "../support/fake_upstream.hpp"
#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

std::string config_text(const std::string& model, const std::string& base_url) {
  return "suite:\n  path: suite\n  version: v2\nprompt:\n  system_file: prompts/support.md\nmodel:\n  "
         "provider: openai\n  base_url: " +
         base_url + "\n  api_key_env: GATE_DEMO_API_KEY\n  key_alias: demo-recorder\n  name: " + model +
         "\n  temperature: 0\n  seed: 7\n  max_tokens: 256\nruns: 3\nconcurrency: 4\ncache:\n  dir: cache\n"
         "  mode: replay\nbaseline: ../baseline.json\noutputs:\n  dir: ../.gate/out\n";
}

const char* k_git = "git -c user.name=gate-test -c user.email=gate-test@example.invalid";

// A work tree with the demo suite, its cache and the demo baseline
// committed, and a bare remote "origin".
struct Repo {
  TempDir tmp;
  fs::path work = tmp.path() / "work";
  fs::path remote = tmp.path() / "remote.git";

  Repo() {
    fs::create_directories(work);
    REQUIRE(sh(tmp.path(), "git init -q --bare remote.git").exit_code == 0);
    REQUIRE(sh(work, "git init -q -b main").exit_code == 0);
    copy_demo(work);
    spit(work / "demo" / "gate.yaml", config_text("demo-model", "http://127.0.0.1:18089/v1"));
    fs::copy_file(source_dir() / "baselines" / "demo.json", work / "baseline.json");
    spit(work / ".gitignore", ".gate/\n");
    commit("demo suite and baseline");
    REQUIRE(sh(work, "git remote add origin ../remote.git").exit_code == 0);
  }
  void commit(const std::string& message) {
    Result r = sh(work, "git add -A && " + std::string(k_git) + " commit -q -m \"" + message + "\"");
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
  }
  std::string head() { return sh(work, "git rev-parse HEAD").out; }
  std::string remote_main() { return sh(remote, "git rev-parse main").out; }
  fs::path hook() { return work / ".git" / "hooks" / "pre-push"; }
};

// Makes the worse synthetic model's answers the current ones: records them
// from the fake upstream into the committed cache and points the config
// at that model.
void regress(Repo& repo) {
  gate::testing::FakeUpstream upstream(
      gate::testing::parse_script(slurp(source_dir() / "fixtures" / "compare" / "upstream-regressed.json")));
  upstream.start();
  const fs::path config = repo.work / "demo" / "gate.yaml";
  spit(config, config_text("demo-model-v2", upstream.base_url()));
  Result rec = run_gate({"run", "--config", config.string(), "--mode", "record", "--quiet"}, repo.work,
                        {{"GATE_DEMO_API_KEY", "demo-not-a-secret"}});
  INFO(rec.err);
  REQUIRE(rec.exit_code == 0);
  spit(config, config_text("demo-model-v2", "http://127.0.0.1:18090/v1"));
  repo.commit("switch to the v2 model");
}

} // namespace

TEST_CASE("the pre-push hook lets a clean push through, blocks a regression, and --no-verify skips it") {
  Repo repo;
  Result install = run_gate({"hook", "install", "--config", "demo/gate.yaml"}, repo.work);
  INFO(install.out << install.err);
  REQUIRE(install.exit_code == 0);
  REQUIRE(fs::exists(repo.hook()));
  CHECK((fs::status(repo.hook()).permissions() & fs::perms::owner_exec) != fs::perms::none);

  Result clean = sh(repo.work, "git push -q origin main");
  INFO(clean.out);
  CHECK(clean.exit_code == 0);
  CHECK(repo.remote_main() == repo.head());

  const std::string pushed = repo.remote_main();
  regress(repo);
  Result blocked = sh(repo.work, "git push -q origin main");
  INFO(blocked.out);
  CHECK(blocked.exit_code != 0);
  CHECK(blocked.out.find("❌ gate failed") != std::string::npos); // the Markdown verdict
  CHECK(blocked.out.find("push blocked") != std::string::npos);
  CHECK(blocked.out.find("git push --no-verify") != std::string::npos);
  CHECK(repo.remote_main() == pushed);
  // The command that accepts the change, as printed, from the top of the repository.
  const std::string accept = "accept it and commit the new baseline: ";
  const std::size_t at = blocked.out.find(accept);
  REQUIRE(at != std::string::npos);
  std::string command = blocked.out.substr(at + accept.size());
  command = command.substr(0, command.find('\n'));
  const std::string head12 = repo.head().substr(0, 12);
  CHECK(command == "gate baseline update --report " +
                       (repo.work / ".git" / "gate-hook" / head12 / "report.json").string() + " --config " +
                       (repo.work / "demo" / "gate.yaml").string());
  Result accepted = sh(repo.work, std::string(GATE_BINARY) + command.substr(4));
  INFO(accepted.out);
  CHECK(accepted.exit_code == 0);
  CHECK(slurp(repo.work / "baseline.json").find("demo-model-v2") != std::string::npos);

  Result skipped = sh(repo.work, "git push -q --no-verify origin main");
  INFO(skipped.out);
  CHECK(skipped.exit_code == 0);
  CHECK(repo.remote_main() == repo.head());

  Result uninstall = run_gate({"hook", "uninstall"}, repo.work);
  CHECK(uninstall.exit_code == 0);
  CHECK_FALSE(fs::exists(repo.hook()));
}

TEST_CASE("a cache miss blocks the push and says how to record") {
  Repo repo;
  REQUIRE(run_gate({"hook", "install", "--config", "demo/gate.yaml"}, repo.work).exit_code == 0);
  spit(repo.work / "demo" / "gate.yaml", config_text("unrecorded-model", "http://127.0.0.1:18089/v1"));
  repo.commit("a model nobody recorded");
  Result r = sh(repo.work, "git push -q origin main");
  CHECK(r.exit_code != 0);
  CHECK(r.out.find("missing from the cache") != std::string::npos);
  CHECK(r.out.find("--mode replay") != std::string::npos);
}

TEST_CASE("a foreign hook is never clobbered: refused, or chained and restored") {
  Repo repo;
  const std::string foreign =
      "#!/bin/sh\ncat >/dev/null\necho ran >\"$(git rev-parse --show-toplevel)/.gate-foreign\"\n";
  spit(repo.hook(), foreign);
  fs::permissions(repo.hook(), fs::perms::owner_all);

  Result refused = run_gate({"hook", "install", "--config", "demo/gate.yaml"}, repo.work);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("not written by gate") != std::string::npos);
  CHECK(refused.err.find("--chain") != std::string::npos);
  CHECK(slurp(repo.hook()) == foreign);
  CHECK(run_gate({"hook", "uninstall"}, repo.work).exit_code == 2); // not ours: left alone
  CHECK(slurp(repo.hook()) == foreign);

  Result chained = run_gate({"hook", "install", "--config", "demo/gate.yaml", "--chain"}, repo.work);
  INFO(chained.out << chained.err);
  REQUIRE(chained.exit_code == 0);
  Result push = sh(repo.work, "git push -q origin main");
  INFO(push.out);
  CHECK(push.exit_code == 0);
  CHECK(fs::exists(repo.work / ".gate-foreign")); // the old hook ran too
  CHECK(repo.remote_main() == repo.head());

  REQUIRE(run_gate({"hook", "uninstall"}, repo.work).exit_code == 0);
  CHECK(slurp(repo.hook()) == foreign);
}

TEST_CASE("the hook checks the pushed commit, not the work tree, and says which") {
  Repo repo;
  REQUIRE(run_gate({"hook", "install", "--config", "demo/gate.yaml"}, repo.work).exit_code == 0);
  const std::string pushed = repo.remote_main();

  SUBCASE("a regressing commit is blocked although the work tree holds a clean revert") {
    const std::string good = repo.head();
    regress(repo);
    // The revert sits uncommitted in the work tree: checking the tree would pass.
    REQUIRE(sh(repo.work, "git checkout " + good.substr(0, 40) + " -- .").exit_code == 0);
    Result blocked = sh(repo.work, "git push -q origin main");
    INFO(blocked.out);
    CHECK(blocked.exit_code != 0);
    CHECK(repo.remote_main() == pushed);
    const std::string head = sh(repo.work, "git rev-parse --short=12 HEAD").out.substr(0, 12);
    CHECK(blocked.out.find("checked commit " + head) != std::string::npos);
    CHECK(blocked.out.find("❌ gate failed") != std::string::npos);        // the headline
    CHECK(blocked.out.find("tasks that got worse") != std::string::npos); // a few, by id
    CHECK(blocked.out.find(": passed 3/3 → ") != std::string::npos);
    CHECK(blocked.out.find("full verdict: ") != std::string::npos);
    CHECK(blocked.out.find("verdict.md") != std::string::npos);
    CHECK(blocked.out.find("| ") == std::string::npos); // no raw Markdown table
    CHECK(std::count(blocked.out.begin(), blocked.out.end(), '\n') < 30);
    // No temporary work tree is left registered.
    CHECK(sh(repo.work, "git worktree list").out.find("gate-hook") == std::string::npos);
  }

  SUBCASE("a good commit passes although an uncommitted file is broken") {
    spit(repo.work / "x.txt", "x\n");
    repo.commit("an unrelated change");
    spit(repo.work / "demo" / "gate.yaml", "this: [is not a config\n");
    Result r = sh(repo.work, "git push -q origin main");
    INFO(r.out);
    CHECK(r.exit_code == 0);
    CHECK(repo.remote_main() == repo.head());
    CHECK(r.out.find("checked commit ") != std::string::npos);
  }
}

TEST_CASE("arguments given at install are kept in the hook") {
  Repo repo;
  // Check options after "--" go to every check the hook runs; a bad one
  // shows that they are passed (and the hook says it could not check).
  Result install = run_gate(
      {"hook", "install", "--config", "demo/gate.yaml", "--", "--max-new-failures", "many"}, repo.work);
  INFO(install.out << install.err);
  REQUIRE(install.exit_code == 0);
  CHECK(install.out.find("--max-new-failures many") != std::string::npos);
  CHECK(slurp(repo.hook()).find("'--max-new-failures' 'many'") != std::string::npos);
  spit(repo.work / "x.txt", "x\n");
  repo.commit("an unrelated change");
  Result r = sh(repo.work, "git push -q origin main");
  INFO(r.out);
  CHECK(r.exit_code != 0);
  CHECK(r.out.find("--max-new-failures") != std::string::npos);
  CHECK(r.out.find("could not check") != std::string::npos);
}

TEST_CASE("a committed prompt edit is a change the hook checks: the tasks it renders into, and no others") {
  Repo repo;
  REQUIRE(run_gate({"hook", "install", "--config", "demo/gate.yaml"}, repo.work).exit_code == 0);
  const fs::path prompt = repo.work / "demo" / "prompts" / "support.md";
  std::string text = slurp(prompt);
  text.insert(text.size() - 1, " Always thank the customer.");
  spit(prompt, text);
  repo.commit("thank the customer");
  // Replay-only: the support tasks now send requests nobody recorded; the
  // other scenarios' requests are unchanged and replay.
  Result r = sh(repo.work, "git push -q origin main");
  INFO(r.out);
  CHECK(r.exit_code != 0);
  CHECK(r.out.find("missing from the cache") != std::string::npos);
  // The 11 support tasks x 3 runs, each of them a support task.
  CHECK(r.out.find("33 response(s) are not in the cache") != std::string::npos);
  const std::string head = sh(repo.work, "git rev-parse --short=12 HEAD").out.substr(0, 12);
  std::istringstream misses(slurp(repo.work / ".git" / "gate-hook" / head / "cache-misses.txt"));
  int listed = 0;
  for (std::string line; std::getline(misses, line);)
    if (line.find("task ") != std::string::npos) {
      ++listed;
      CHECK_MESSAGE(line.find("task support-") != std::string::npos, line);
    }
  CHECK(listed == 33);
}

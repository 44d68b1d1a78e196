// End-to-end: the GitHub Action's install path (fetch, verify, build, the
// package names), its inputs and outputs as action.yml declares them, and the
// workflow/action linters. What the check step makes of a verdict is in
// test_action_verdicts.cpp.
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

#include "action_step.hpp"
#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

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
                     {"INPUT_BASELINE", demo_baseline()},
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
  const std::string common = " libssl-dev libyaml-cpp-dev libre2-dev libicu-dev doctest-dev openssl";
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
  CHECK(std::regex_match(key.outputs["key"], std::regex(std::string("gate-build-Linux-") + u.machine +
                                                        "-debian-12-[0-9a-f]{16}")));
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
  env["INPUT_BASELINE"] = demo_baseline();
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

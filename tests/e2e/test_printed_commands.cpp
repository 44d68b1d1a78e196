// End-to-end: every command gate prints as a next step works as printed
// (issue 30 item 3). gate init's steps are run by e2e/test_init.cpp; here
// the no-baseline hint of gate check and gate import's "Next:" line, run
// through sh as printed (quoting included) in the directory they were
// printed for, against the fake upstream with a fake key.
#include <doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <gate/util/text.hpp>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

using namespace gate::e2e;
namespace fs = std::filesystem;

namespace {

// Runs a printed command through sh, word for word as a user pastes it
// (quoting included), with `gate` the binary under test and `env` set.
Result run_printed(const std::string& command, const fs::path& dir,
                   const std::map<std::string, std::string>& env) {
  REQUIRE_MESSAGE(command.starts_with("gate "), "not a gate command: " << command);
  std::string script = "gate() { " + gate::shell_quote(gate_binary()) + " \"$@\"; }; ";
  for (const auto& [k, v] : env)
    script += "export " + k + "=" + gate::shell_quote(v) + "; ";
  return sh(dir, script + command);
}

// The text between `open` and the next `close` after it.
std::string between(const std::string& text, const std::string& open, const std::string& close,
                    std::size_t from = 0) {
  const std::size_t a = text.find(open, from);
  REQUIRE_MESSAGE(a != std::string::npos, "no \"" << open << "\" in:\n" << text);
  const std::size_t b = text.find(close, a + open.size());
  REQUIRE(b != std::string::npos);
  return text.substr(a + open.size(), b - a - open.size());
}

} // namespace

TEST_CASE("gate check without a baseline: the commands its hint prints make one, and the check then passes") {
  gate::testing::FakeUpstream upstream(
      gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json")));
  upstream.start();
  TempDir tmp;
  const fs::path config = copy_demo(tmp.path());
  const fs::path dir = config.parent_path();
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "baseline", "baseline.json");
  std::string yaml = slurp(config);
  yaml.replace(yaml.find("../../.gate/demo"), 16, "out"); // outputs.dir, inside the temp dir
  spit(config, yaml);
  const std::map<std::string, std::string> key = {{"GATE_DEMO_API_KEY", "demo-not-a-secret"}};

  // In the config's directory, and from above it with --config: the hint
  // names the config the check was given.
  const fs::path rel = fs::relative(config, tmp.path());
  for (const auto& [cwd, args] : std::vector<std::pair<fs::path, std::vector<std::string>>>{
           {dir, {"check"}}, {tmp.path(), {"check", "--config", rel.string()}}}) {
    CAPTURE(cwd);
    fs::remove(dir / "baseline.json");
    Result check = run_gate(args, cwd, key);
    INFO(check.out << check.err);
    REQUIRE(check.exit_code == 2);
    const std::string hint = between(check.err, "create one with ", ")");
    std::vector<std::string> commands;
    for (std::size_t at = 0; (at = hint.find('`', at)) != std::string::npos;) {
      const std::size_t end = hint.find('`', at + 1);
      commands.push_back(hint.substr(at + 1, end - at - 1));
      at = end + 1;
    }
    REQUIRE(commands.size() == 2);
    for (const auto& c : commands) {
      Result r = run_printed(c, cwd, key);
      INFO(c << "\n" << r.out);
      CHECK(r.exit_code == 0);
    }
    CHECK(fs::exists(dir / "baseline.json"));
    Result again = run_gate(args, cwd, key);
    INFO(again.out << again.err);
    CHECK(again.exit_code == 0);
  }
  CHECK(upstream.requests() == 0);
}

TEST_CASE("gate baseline update without a gate.yaml here names what to pass") {
  TempDir tmp;
  Result r = run_gate({"baseline", "update"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("pass --baseline FILE or --config") != std::string::npos);
}

TEST_CASE("gate import's Next: line runs as printed, and names the mode gate init names") {
  gate::testing::FakeUpstream upstream(
      gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json")));
  upstream.start();
  TempDir tmp;
  const fs::path out = tmp.path() / "evals" / "support suite"; // printed quoted
  Result im =
      run_gate({"import", "promptfoo",
                (source_dir() / "fixtures" / "promptfoo" / "support" / "promptfooconfig.yaml").string(),
                "--out", out.string()},
               tmp.path());
  INFO(im.out << im.err);
  REQUIRE(im.exit_code == 0);
  const std::string next = between(im.out, "Next: ", " (with");
  CHECK(next.find("--mode replay") != std::string::npos);
  // What the key would record is already in the cassette; the fake stands
  // in for the provider so that nothing can leave the machine.
  fs::copy(source_dir() / "fixtures" / "promptfoo" / "support" / "cassette", out / "cache",
           fs::copy_options::recursive);
  set_yaml(out / "gate.yaml", "base_url", upstream.base_url());
  Result run = run_printed(next, tmp.path(), {{"OPENAI_API_KEY", "sk-fake-not-a-key"}});
  INFO(next << "\n" << run.out);
  CHECK(run.exit_code == 0);
}

TEST_CASE("gate run: runs that cannot reach the model point to gate doctor, with the config as given") {
  TempDir tmp;
  const fs::path config = copy_demo(tmp.path());
  fs::remove_all(config.parent_path() / "cache");
  set_yaml(config, "base_url", "http://127.0.0.1:1/v1"); // nothing listens on port 1
  set_yaml(config, "mode", "replay");
  Result r = run_gate(
      {"run", "--config", config.string(), "--filter", "support-return-window", "--out", "out", "--quiet"},
      tmp.path(), {{"GATE_DEMO_API_KEY", "demo-not-a-secret"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("could not reach the model (first: connection: cannot connect to 127.0.0.1:1") !=
        std::string::npos);
  CHECK(r.err.find("`gate doctor --config " + gate::shell_word(config.string()) + "` checks") !=
        std::string::npos);
}

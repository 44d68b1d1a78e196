// The official OpenAI and Anthropic SDKs (npm `openai`, `@anthropic-ai/sdk`)
// through `gate proxy`: recorded against the fake upstream, then replayed
// with the upstream stopped, plain and streaming, with identical results
// (issue 7 acceptance). Needs node and the packages .ci/deps --test installs
// into $GATE_TOOLS_DIR (default ~/.cache/gate-tools); without them each case
// says so and passes without running.
#include <doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"
#include "sdk/proxy_child.hpp"
#include <tests/support/fake_upstream.hpp>

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

constexpr const char* k_key = "sk-sdk-canary-0c4d7e2a9b31";

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

fs::path tools_dir() {
  if (const char* d = std::getenv("GATE_TOOLS_DIR"); d != nullptr && *d != '\0') return d;
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr ? home : "/nonexistent") / ".cache" / "gate-tools";
}

// Why the SDK test cannot run here, or "" when it can.
std::string missing_sdk(const std::string& package) {
  if (std::system("command -v node >/dev/null 2>&1") != 0) return "node is not on PATH";
  if (!fs::exists(tools_dir() / "node_modules" / package / "package.json"))
    return "the npm package " + package + " is not in " + tools_dir().string() +
           " (install it with .ci/deps --test)";
  return "";
}

struct NodeRun {
  int exit_code = -1;
  std::string out, err;
};

NodeRun run_script(const std::string& script, const std::string& base_url, const fs::path& scratch) {
  const fs::path out = scratch / "node.out", err = scratch / "node.err";
  const std::string command = "node " + quoted((source_dir() / "tests" / "e2e" / "sdk" / script).string()) +
                              " " + quoted(base_url) + " >" + quoted(out.string()) + " 2>" +
                              quoted(err.string());
  const int status = std::system(command.c_str());
  NodeRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Records the script's calls through a proxy in record mode, then replays
// them through a fresh replay-only proxy with the upstream gone; returns the
// two outputs (one JSON line each).
std::pair<NodeRun, NodeRun> record_then_replay(const std::string& provider, const std::string& script,
                                               std::uint64_t calls) {
  gate::testing::clear_network_env();
  gate::testing::FakeUpstream upstream(gate::testing::Script{});
  upstream.start();
  TempDir tmp;
  copy_demo(tmp.path());
  const std::string upstream_url =
      provider == "openai" ? upstream.base_url() : "http://127.0.0.1:" + std::to_string(upstream.port());
  write_config(tmp.path(), upstream_url, provider, "GATE_SDK_TEST_KEY");
  const std::map<std::string, std::string> env{{"GATE_SDK_TEST_KEY", k_key}};

  std::string out;
  unsigned short port = 0;
  Child rec = start_proxy(tmp.path(), "record", env, out, port);
  REQUIRE(port != 0);
  NodeRun recorded =
      run_script(script, "http://127.0.0.1:" + std::to_string(port) + "/t/sdk/r/0", tmp.path());
  Result r1 = stop(rec);
  CHECK(upstream.requests() == calls);
  upstream.stop();

  std::string out2; // its own: `out` already holds the first "listening on" line
  Child rep = start_proxy(tmp.path(), "replay-only", env, out2, port);
  REQUIRE(port != 0);
  NodeRun replayed =
      run_script(script, "http://127.0.0.1:" + std::to_string(port) + "/t/sdk/r/0", tmp.path());
  Result r2 = stop(rep);
  CHECK(r2.err.find("replay-only cache miss") == std::string::npos);

  for (const auto& f : files_below(tmp.path())) {
    CAPTURE(f);
    CHECK(slurp(f).find(k_key) == std::string::npos);
  }
  for (const std::string* text : {&out, &out2, &r1.err, &r2.err, &recorded.out, &replayed.out})
    CHECK(text->find(k_key) == std::string::npos);
  return {recorded, replayed};
}

// Runs `script` of the SDK in npm `package` through record and replay and
// checks the outputs: a clean exit, the fake upstream's answers (`texts`,
// each a JSON fragment of the output), the same line both times.
void check_sdk(const std::string& package, const std::string& provider, const std::string& script,
               std::uint64_t calls, const std::vector<std::string>& texts) {
  if (std::string why = missing_sdk(package); !why.empty()) {
    MESSAGE("SKIPPED: " << why);
    return;
  }
  const auto both = record_then_replay(provider, script, calls);
  const auto& recorded = both.first;
  const auto& replayed = both.second;
  INFO("record stderr: " << recorded.err);
  INFO("replay stderr: " << replayed.err);
  CHECK(recorded.exit_code == 0);
  CHECK(replayed.exit_code == 0);
  for (const auto& t : texts) {
    CAPTURE(t);
    CHECK(recorded.out.find(t) != std::string::npos);
  }
  CHECK(replayed.out == recorded.out);
}

} // namespace

TEST_CASE("the openai SDK records through gate proxy and replays identically, plain and streamed") {
  check_sdk("openai", "openai", "openai.mjs", 2,
            {R"("text":"echo: write a haiku")", R"("text":"echo: stream a haiku")",
             R"("usage":{"prompt_tokens":)"});
}

TEST_CASE("the Anthropic SDK records through gate proxy and replays identically, plain and streamed") {
  check_sdk("@anthropic-ai/sdk", "anthropic", "anthropic.mjs", 3,
            {R"("text":"echo: write a haiku")", R"("text":"echo: stream a haiku")",
             R"("text":"echo: stream it again")", "message_stop", R"("output_tokens":)"});
}

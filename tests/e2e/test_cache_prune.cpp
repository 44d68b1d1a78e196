// End-to-end: the committed cache stays the size of the suite (issue 30
// item 4). After prompt edits, `gate cache prune` finds the entries that
// neither the suite as configured now (its requests × runs) nor the
// baseline's recorded requests reference: a dry run says how many and how
// many bytes, --apply removes exactly those, and both the current prompt
// and the baseline's still replay without a call.
#include <doctest.h>

#include <string>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

using namespace gate::e2e;
namespace fs = std::filesystem;

namespace {

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& f : fs::recursive_directory_iterator(dir))
    n += f.path().extension() == ".entry";
  return n;
}

bool has(const std::string& hay, const std::string& needle) {
  bool found = hay.find(needle) != std::string::npos;
  if (!found) MESSAGE("expected \"" << needle << "\" in:\n" << hay);
  return found;
}

} // namespace

TEST_CASE("cache prune removes exactly the entries neither the suite nor the baseline references") {
  gate::testing::FakeUpstream upstream(
      gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json")));
  upstream.start();
  TempDir tmp;
  const fs::path config = copy_demo(tmp.path());
  const fs::path cache = tmp.path() / "demo" / "cache";
  set_yaml(config, "base_url", upstream.base_url());
  set_yaml(config, "mode", "replay");
  set_yaml(config, "baseline", "../bl.json");
  const std::map<std::string, std::string> key = {{"GATE_DEMO_API_KEY", "demo-not-a-secret"}};
  auto gate = [&](std::vector<std::string> args) {
    Result r = run_gate(args, tmp.path(), key);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return r;
  };
  const std::size_t recorded = entries(cache);
  REQUIRE(recorded == 132);

  gate({"run", "--config", config.string(), "--out", "base", "--quiet"});
  gate({"baseline", "update", "--report", "base/report.json", "--baseline", "bl.json"});
  CHECK(has(gate({"cache", "prune", "--config", config.string()}).out, "would remove 0 stale entries"));

  // Two prompt edits, each recorded: the support scenario's 11 tasks × 3 runs each time.
  const fs::path prompt = tmp.path() / "demo" / "prompts" / "support.md";
  const std::string original = slurp(prompt);
  for (const char* edit : {" Always thank the customer.", " Never promise a refund."}) {
    std::string text = slurp(prompt);
    text.insert(text.size() - 1, edit);
    spit(prompt, text);
    gate({"run", "--config", config.string(), "--out", "cur", "--quiet"});
  }
  CHECK(upstream.requests() == 66);
  REQUIRE(entries(cache) == recorded + 66);

  // The first edit's 33 entries are stale; the baseline's and the current prompt's are not.
  Result dry = gate({"cache", "prune", "--config", config.string()});
  CHECK(has(dry.out, "would remove 33 stale entries ("));
  CHECK(has(dry.out, "run again with --apply"));
  CHECK(entries(cache) == recorded + 66);
  Result applied = gate({"cache", "prune", "--config", config.string(), "--apply"});
  CHECK(has(applied.out, "removed 33 stale entries ("));
  // The byte counts of the dry run and of the removal agree.
  const auto bytes = [](const std::string& out) { return out.substr(out.find("stale entries (")); };
  CHECK(bytes(dry.out).substr(0, 30) == bytes(applied.out).substr(0, 30));
  CHECK(entries(cache) == recorded + 33);
  CHECK(has(gate({"cache", "prune", "--config", config.string()}).out, "would remove 0 stale entries"));

  // Nothing still referenced went: the current prompt and the baseline's replay without a call.
  set_yaml(config, "mode", "replay-only");
  gate({"run", "--config", config.string(), "--out", "again", "--quiet"});
  spit(prompt, original);
  gate({"run", "--config", config.string(), "--out", "orig", "--quiet"});
  CHECK(upstream.requests() == 66);
}

// End-to-end: confirmation runs (issue 18). A 15-task suite whose prompt
// edit breaks 5 tasks cannot fail on its first comparison at k = 3; with
// --confirm 3 gate re-asks both sides of exactly those tasks, records the
// runs, and a replay-only rerun reaches the same verdict with no call.
#include <doctest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <string>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

using namespace gate::e2e;
namespace fs = std::filesystem;

namespace {

const std::map<std::string, std::string> k_key{{"GATE_CONFIRM_KEY", "sk-confirm-not-a-secret-0001"}};

std::string id(int i) { return (i < 10 ? "t0" : "t") + std::to_string(i); }

// Tasks t01..t15 answer "yes" (their check passes) to any prompt, except
// that t01..t05 answer "no" to the edited prompt ("… v2").
gate::testing::Script breaks_five() {
  gate::testing::Script s;
  for (int i = 1; i <= 5; ++i)
    s.rules.push_back({"question " + id(i) + " v2", {"no"}});
  s.rules.push_back({"", {"yes"}});
  return s;
}

// The suite, its gate.yaml (the prompt "question <id> v1") and a baseline
// recorded from it; returns the config's path.
fs::path recorded_suite(const fs::path& dir, const gate::testing::FakeUpstream& upstream) {
  std::string cases;
  for (int i = 1; i <= 15; ++i)
    cases += R"({"id": ")" + id(i) + R"(", "vars": {"q": ")" + id(i) +
             R"("}, "checks": [{"type": "contains", "value": "yes"}]})" + "\n";
  spit(dir / "cases.jsonl", cases);
  Result create =
      run_gate({"suite", "create", "suite", "--name", "confirm-demo", "--from", "cases.jsonl"}, dir);
  INFO(create.out << create.err);
  REQUIRE(create.exit_code == 0);
  const fs::path config = dir / "gate.yaml";
  spit(config, "suite:\n  path: suite\nprompt:\n  user: \"question {{q}} v1\"\nmodel:\n  provider: openai\n"
               "  base_url: " +
                   upstream.base_url() +
                   "\n  api_key_env: GATE_CONFIRM_KEY\n  name: m\n  temperature: 0\nruns: 3\ncache:\n"
                   "  dir: cache\n  mode: replay\nbaseline: baseline.json\n");
  Result base = run_gate({"run", "--config", config.string(), "--out", "base", "--quiet"}, dir, k_key);
  INFO(base.out << base.err);
  REQUIRE(base.exit_code == 0);
  Result promote =
      run_gate({"baseline", "update", "--report", "base/report.json", "--config", config.string()}, dir);
  INFO(promote.out << promote.err);
  REQUIRE(promote.exit_code == 0);
  // The pull request: the prompt changes.
  std::string text = slurp(config);
  text.replace(text.find("v1\""), 3, "v2\"");
  spit(config, text);
  return config;
}

bool has(const std::string& hay, const std::string& needle) {
  bool found = hay.find(needle) != std::string::npos;
  if (!found) MESSAGE("expected \"" << needle << "\" in:\n" << hay);
  return found;
}

} // namespace

TEST_CASE("confirmation: 5 of 15 tasks broken is inconclusive at k = 3, confirmed with --confirm 3, "
          "and a replay-only rerun repeats the verdict with no call") {
  gate::testing::FakeUpstream upstream(breaks_five());
  upstream.start();
  TempDir tmp;
  const fs::path config = recorded_suite(tmp.path(), upstream);
  const auto before = upstream.requests();
  CHECK(before == 45);

  // Without confirmation (--confirm 0; it is on by default): the first
  // comparison cannot decide.
  Result plain =
      run_gate({"check", "--config", config.string(), "--out", "plain", "--quiet", "--confirm", "0"},
               tmp.path(), k_key);
  INFO(plain.out << plain.err);
  CHECK(plain.exit_code == 0);
  CHECK(has(plain.out, "⚠ gate inconclusive"));
  const auto after_plain = upstream.requests();
  CHECK(after_plain == before + 45);

  // With it: 5 tasks × 3 runs × 2 sides, all fresh (new replica indexes).
  Result confirmed = run_gate({"check", "--config", config.string(), "--out", "cur", "--quiet", "--confirm",
                               "3", "--json", "cur/verdict.json", "--markdown", "cur/verdict.md", "--html",
                               "cur/verdict.html", "--junit", "cur/verdict.xml"},
                              tmp.path(), k_key);
  INFO(confirmed.out << confirmed.err);
  CHECK(confirmed.exit_code == 1);
  CHECK(has(confirmed.out, "❌ gate failed"));
  CHECK(has(confirmed.out, "confirmed by 5 tasks × 3 fresh runs per side"));
  CHECK(has(confirmed.out, "worse on t01, t02, t03, t04, t05"));
  CHECK(upstream.requests() == after_plain + 30);
  // The baseline side sent the baseline's request, the current side the edited one.
  int v1 = 0, v2 = 0;
  for (const auto& r : upstream.log())
    (r.body.find(" v1") != std::string::npos ? v1 : v2) += 1;
  CHECK(v1 == 45 + 15);
  CHECK(v2 == 45 + 15);
  const auto verdict = read_json(tmp.path() / "cur" / "verdict.json");
  const auto& c = verdict.at("confirmation");
  CHECK(c.at("state") == "confirmed");
  CHECK(c.at("calls") == 30);
  CHECK(c.at("tasks").as_array().size() == 5);
  const std::string md = slurp(tmp.path() / "cur" / "verdict.md");
  CHECK(has(md, "### Confirmation"));
  CHECK(has(md, "**Confirmed**: 5 tasks × 3 fresh runs per side"));
  CHECK(has(md, "| t01 | 3/3 | 0/3 | worse |"));
  const std::string html = slurp(tmp.path() / "cur" / "verdict.html");
  CHECK(has(html, "<section id=\"gate-confirmation\">"));
  CHECK(has(html, "<strong>Confirmed</strong>: 5 tasks"));
  // A JUnit reader counts the failure the confirmation found (and the
  // verdict's own): no row or task failed on its own.
  const std::string xml = slurp(tmp.path() / "cur" / "verdict.xml");
  CHECK(has(xml, "<testsuites name=\"gate\" tests=\""));
  CHECK(has(xml, "failures=\"2\""));
  CHECK(has(xml, "<testcase classname=\"gate\" name=\"decision\">\n      <failure type=\"failed\""));
  CHECK(has(xml, "<testcase classname=\"gate\" name=\"confirmation\">"));
  CHECK(has(xml, "<failure type=\"confirmed\""));
  CHECK(has(xml, "t01: baseline 3/3, current 0/3 (worse)"));
  CHECK(has(xml, "p &lt;0.001"));

  // The same check, replay-only and without a key: every run is recorded.
  const auto recorded = upstream.requests();
  Result again = run_gate({"check", "--config", config.string(), "--out", "again", "--quiet", "--confirm",
                           "3", "--mode", "replay-only"},
                          tmp.path());
  INFO(again.out << again.err);
  CHECK(again.exit_code == 1);
  auto headline = [](const std::string& out) {
    const std::size_t from = out.find("❌");
    return out.substr(from, out.find("verdict:", from) - from);
  };
  CHECK(headline(again.out) == headline(confirmed.out));
  CHECK(upstream.requests() == recorded);
}

TEST_CASE(
    "confirmation stays within its budget, needs a key for fresh calls, and replay-only lists the runs") {
  gate::testing::FakeUpstream upstream(breaks_five());
  upstream.start();
  TempDir tmp;
  const fs::path config = recorded_suite(tmp.path(), upstream);
  // The current side recorded once, so that only the confirmation needs calls.
  Result plain =
      run_gate({"check", "--config", config.string(), "--out", "plain", "--quiet", "--confirm", "0"},
               tmp.path(), k_key);
  REQUIRE(plain.exit_code == 0);

  // Replay-only: the runs are not recorded, so the verdict lists them (exit 4).
  Result listed = run_gate(
      {"check", "--config", config.string(), "--out", "o1", "--confirm", "2", "--mode", "replay-only"},
      tmp.path());
  INFO(listed.out << listed.err);
  CHECK(listed.exit_code == 4);
  CHECK(has(listed.out, "⚠ gate inconclusive"));
  CHECK(has(listed.out, "task \"t01\" baseline run 3"));
  CHECK(has(listed.out, "GATE_CONFIRM_KEY=… gate check --config"));
  const std::string skipped = slurp(tmp.path() / "o1" / "verdict.xml");
  CHECK(has(skipped, "<skipped message=\"not run: replay-only; record with GATE_CONFIRM_KEY="));

  // An out-of-range --confirm is bad input, refused before any run: no
  // report is written and the upstream is not asked.
  const auto asked = upstream.requests();
  Result too_many =
      run_gate({"check", "--config", config.string(), "--out", "o4", "--confirm", "200", "--quiet"},
               tmp.path(), k_key);
  INFO(too_many.out << too_many.err);
  CHECK(too_many.exit_code == 2);
  CHECK(has(too_many.err, "--confirm: expected runs in 0..100, got 200"));
  CHECK_FALSE(fs::exists(tmp.path() / "o4" / "report.json"));
  CHECK(upstream.requests() == asked);

  // No key in replay mode: the fresh calls cannot be made, and it says so.
  Result no_key = run_gate({"check", "--config", config.string(), "--out", "o2", "--confirm", "2", "--quiet"},
                           tmp.path());
  INFO(no_key.out << no_key.err);
  CHECK(no_key.exit_code == 3);
  CHECK(has(no_key.err, "GATE_CONFIRM_KEY"));

  // A budget of 8 calls: 2 tasks × 2 runs × 2 sides; the rest are left out.
  std::string text = slurp(config);
  spit(config, text + "confirm:\n  runs: 2\n  max_calls: 8\n");
  const auto before = upstream.requests();
  Result budget =
      run_gate({"check", "--config", config.string(), "--out", "o3", "--quiet", "--json", "o3/v.json"},
               tmp.path(), k_key);
  INFO(budget.out << budget.err);
  CHECK(upstream.requests() - before <= 8);
  const auto c = read_json(tmp.path() / "o3" / "v.json").at("confirmation");
  CHECK(c.at("calls").as_int64() <= 8);
  CHECK(c.at("tasks").as_array().size() == 2);
  CHECK(c.at("left_out").as_array().size() == 3);
}

TEST_CASE("--trusted-cache holds the confirmation runs too: branch-supplied runs are named, rewritten ones "
          "refused") {
  gate::testing::FakeUpstream upstream(breaks_five());
  upstream.start();
  TempDir tmp;
  const fs::path config = recorded_suite(tmp.path(), upstream);
  Result plain =
      run_gate({"check", "--config", config.string(), "--out", "plain", "--quiet", "--confirm", "0"},
               tmp.path(), k_key);
  INFO(plain.out << plain.err);
  REQUIRE(plain.exit_code == 0);
  // The base branch's cache: the baseline's and this branch's first runs.
  fs::copy(tmp.path() / "cache", tmp.path() / "trusted", fs::copy_options::recursive);
  // The author records the confirmation on their machine and commits it.
  Result recorded = run_gate(
      {"check", "--config", config.string(), "--out", "rec", "--quiet", "--confirm", "3"}, tmp.path(), k_key);
  INFO(recorded.out << recorded.err);
  REQUIRE(recorded.exit_code == 1);
  std::vector<fs::path> added;
  for (const fs::path& f : files_below(tmp.path() / "cache"))
    if (!fs::exists(tmp.path() / "trusted" / fs::relative(f, tmp.path() / "cache"))) added.push_back(f);
  REQUIRE(added.size() == 30);

  // CI replays them: the verdict names every confirmation run the branch supplied.
  const std::vector<std::string> ci{
      "check", "--config", config.string(), "--out",  "ci",        "--quiet",         "--confirm",
      "3",     "--mode",   "replay-only",   "--json", "ci/v.json", "--trusted-cache", "trusted"};
  Result named = run_gate(ci, tmp.path());
  INFO(named.out << named.err);
  CHECK(named.exit_code == 1);
  CHECK(has(named.out, "30 replayed answers of the confirmation runs were recorded outside CI (not in the "
                       "trusted cache trusted): the branch supplied task \"t01\" runs 3, 4, 5; "));
  const auto warnings = read_json(tmp.path() / "ci" / "v.json").at("warnings");
  CHECK(boost::json::serialize(warnings).find("of the confirmation runs were recorded outside CI") !=
        std::string::npos);

  // Recorded in CI after all (now trusted), then rewritten on the branch:
  // one current-side "no" turned "yes" with a fresh checksum.
  for (const fs::path& f : added) {
    fs::create_directories((tmp.path() / "trusted" / fs::relative(f, tmp.path() / "cache")).parent_path());
    fs::copy_file(f, tmp.path() / "trusted" / fs::relative(f, tmp.path() / "cache"));
  }
  const std::string no = R"(\"content\":\"no\")";
  auto rewritten = std::find_if(added.begin(), added.end(),
                                [&](const fs::path& f) { return slurp(f).find(no) != std::string::npos; });
  REQUIRE(rewritten != added.end());
  rewrite_answer(*rewritten, no, R"(\"content\":\"yes\")");
  fs::remove_all(tmp.path() / "ci");
  Result refused = run_gate(ci, tmp.path());
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 2);
  CHECK(has(refused.err, "1 replayed cache entry differs from the trusted cache trusted: " +
                             rewritten->string() + " (task"));
  CHECK_FALSE(fs::exists(tmp.path() / "ci" / "v.json")); // nothing judged
}

TEST_CASE("an outage during confirmation never dismisses the doubt: every fresh call a 500 is exit 3") {
  gate::testing::FakeUpstream upstream(breaks_five());
  upstream.start();
  TempDir tmp;
  const fs::path config = recorded_suite(tmp.path(), upstream);
  // No retries, so that the outage costs no backoff; the current side is
  // recorded once, so that only the confirmation calls the model.
  std::string text = slurp(config);
  text.replace(text.find("  temperature: 0\n"), 16, "  temperature: 0\n  max_retries: 0\n");
  spit(config, text);
  Result plain =
      run_gate({"check", "--config", config.string(), "--out", "plain", "--quiet", "--confirm", "0"},
               tmp.path(), k_key);
  INFO(plain.out << plain.err);
  REQUIRE(plain.exit_code == 0);
  const unsigned short port = upstream.port();
  upstream.stop();
  gate::testing::Script down;
  gate::testing::Fault all;
  all.times = 1000000; // every request: HTTP 500
  down.faults.push_back(all);
  gate::testing::FakeUpstream outage(down);
  outage.start(port);

  for (const std::string on_inconclusive : {"warn", "fail"}) {
    CAPTURE(on_inconclusive);
    const std::string out = "o-" + on_inconclusive;
    spit(config, text + "thresholds:\n  on_inconclusive: " + on_inconclusive + "\n");
    Result r = run_gate({"check", "--config", config.string(), "--out", out, "--json", out + "/v.json",
                         "--junit", out + "/v.xml", "--markdown", out + "/v.md"},
                        tmp.path(), k_key);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 3);
    CHECK(has(r.out, "could not measure"));
    CHECK(has(r.out, "confirmation runs: 30 of 30 fresh runs errored"));
    CHECK(r.out.find("dismissed") == std::string::npos);
    const auto v = read_json(tmp.path() / out / "v.json");
    CHECK(v.at("status") == "could not measure");
    CHECK(v.at("confirmation").at("state") == "could not measure");
    CHECK(v.at("confirmation").at("errored") == 30);
    CHECK(slurp(tmp.path() / out / "v.md").find("Dismissed") == std::string::npos);
    CHECK(has(slurp(tmp.path() / out / "v.xml"),
              "<error type=\"unmeasured\" message=\"Could not measure: 30 fresh runs errored"));
  }
  CHECK(outage.requests() >= 60);
}

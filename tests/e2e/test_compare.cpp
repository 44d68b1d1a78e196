// End-to-end: `gate compare`, `gate check` and `gate baseline update` on the
// demo baseline and the committed regressed report.
#include <doctest.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

fs::path baseline() { return source_dir() / "baselines" / "demo.json"; }
fs::path regressed() { return source_dir() / "fixtures" / "compare" / "regressed.json"; }

// Golden files are compared byte for byte; GATE_UPDATE_GOLDEN=1 rewrites them.
void check_golden(const std::string& name, const std::string& actual) {
  fs::path golden = source_dir() / "tests" / "golden" / name;
  const char* update = std::getenv("GATE_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") spit(golden, actual);
  REQUIRE(fs::exists(golden));
  CHECK(slurp(golden) == actual);
}

// Rewrites every string value equal to `from` (object keys too) in a JSON text.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
  return text;
}

} // namespace

TEST_CASE("the demo gate passes against its committed baseline") {
  TempDir tmp;
  fs::path config = copy_demo(tmp.path());
  Result r = run_gate(
      {"check", "--config", config.string(), "--baseline", baseline().string(), "--out", "out", "--quiet"},
      tmp.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("\n✅ gate passed") != std::string::npos);
  for (const char* f : {"report.json", "verdict.md", "verdict.json", "verdict.xml", "verdict.html"})
    CHECK(fs::exists(tmp.path() / "out" / f));
}

TEST_CASE("a report with real regressions exits 1 and its Markdown matches the golden file") {
  TempDir tmp;
  Result r = run_gate({"compare", "--baseline", baseline().string(), "--current", regressed().string(),
                       "--markdown", "verdict.md", "--json", "verdict.json", "--junit", "verdict.xml"},
                      tmp.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("❌ gate failed") != std::string::npos);
  // The model changed between baseline and current: the first line says so.
  CHECK(r.out.find("routes differ") < r.out.find('\n'));
  check_golden("compare_regressed.md", slurp(tmp.path() / "verdict.md"));
  auto v = read_json(tmp.path() / "verdict.json");
  CHECK(v.at("schema").as_string() == "gate.verdict/1");
  CHECK(v.at("passed").as_bool() == false);
  CHECK(slurp(tmp.path() / "verdict.xml").find("<failure") != std::string::npos);
  // A failing task shows what it asked in every form, not only the Markdown.
  bool asked = false;
  for (const auto& t : v.at("tasks").as_array())
    if (t.at("id").as_string() == "cls-account-password")
      asked = t.at("input_excerpt").as_string() == "user: I can't log in, the reset email never arrives.";
  CHECK(asked);
  CHECK(slurp(tmp.path() / "verdict.xml")
            .find("input: user: I can&apos;t log in, the reset email never "
                  "arrives.\n") != std::string::npos);
}

TEST_CASE("a suite change exits 2 naming both versions, unless allowed") {
  TempDir tmp;
  spit(tmp.path() / "other.json",
       replace_all(slurp(regressed()), "\"version\":\"v2\"", "\"version\":\"v3\""));
  Result r = run_gate({"compare", "--baseline", baseline().string(), "--current", "other.json"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("v2") != std::string::npos);
  CHECK(r.err.find("v3") != std::string::npos);
  Result allowed = run_gate(
      {"compare", "--baseline", baseline().string(), "--current", "other.json", "--allow-suite-change"},
      tmp.path());
  CHECK(allowed.exit_code == 1);
}

TEST_CASE("a missing or broken baseline is bad input, never 'all passed'") {
  TempDir tmp;
  Result missing =
      run_gate({"compare", "--baseline", "nope.json", "--current", regressed().string()}, tmp.path());
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("nope.json") != std::string::npos);
  std::string text = slurp(baseline());
  spit(tmp.path() / "truncated.json", text.substr(0, text.size() / 2));
  Result truncated =
      run_gate({"compare", "--baseline", "truncated.json", "--current", regressed().string()}, tmp.path());
  CHECK(truncated.exit_code == 2);
  CHECK(truncated.err.find("truncated.json") != std::string::npos);
}

TEST_CASE("hostile text from tasks and answers renders inert") {
  TempDir tmp;
  const std::string hostile_id = "x</details><img src=x>[x](http://evil) @org/team ::error::pwned";
  std::string text = slurp(regressed());
  text = replace_all(text, "\"math-sum\"", "\"" + hostile_id + "\"");
  text = replace_all(text, "Answer: 5145", "Answer: 5145\\n::add-mask::x\\n::set-output name=a::b ```");
  spit(tmp.path() / "hostile.json", text);
  spit(tmp.path() / "base.json", replace_all(slurp(baseline()), "\"math-sum\"", "\"" + hostile_id + "\""));
  Result r =
      run_gate({"compare", "--baseline", "base.json", "--current", "hostile.json", "--markdown", "v.md"},
               tmp.path(), {{"GITHUB_ACTIONS", "true"}});
  CHECK(r.exit_code == 1);
  std::string md = slurp(tmp.path() / "v.md");
  CHECK(md.find("</details><img") == std::string::npos);
  CHECK(md.find("<img src=x>") == std::string::npos);
  CHECK(md.find("[x](http://evil)") == std::string::npos);
  CHECK(md.find("@org/team") == std::string::npos);
  // Every workflow command on stdout is gate's own.
  std::size_t start = 0;
  while (start < r.out.size()) {
    std::size_t end = r.out.find('\n', start);
    std::string line = r.out.substr(start, end - start);
    if (line.rfind("::", 0) == 0) {
      INFO(line);
      CHECK((line.rfind("::error", 0) == 0 || line.rfind("::stop-commands::", 0) == 0 ||
             line.find("::add-mask::") == std::string::npos));
      CHECK(line.find("::set-output") == std::string::npos);
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

TEST_CASE("baseline update shows what changes, writes atomically and refuses a suite change") {
  TempDir tmp;
  fs::copy(baseline(), tmp.path() / "base.json");
  Result r = run_gate({"baseline", "update", "--report", regressed().string(), "--baseline", "base.json"},
                      tmp.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("What changes") != std::string::npos);
  CHECK(slurp(tmp.path() / "base.json") == slurp(regressed()));

  spit(tmp.path() / "v2.json", replace_all(slurp(regressed()), "\"version\":\"v2\"", "\"version\":\"v3\""));
  Result refused =
      run_gate({"baseline", "update", "--report", "v2.json", "--baseline", "base.json"}, tmp.path());
  CHECK(refused.exit_code == 2);
  CHECK(slurp(tmp.path() / "base.json") == slurp(regressed())); // untouched
  Result forced = run_gate(
      {"baseline", "update", "--report", "v2.json", "--baseline", "base.json", "--force"}, tmp.path());
  CHECK(forced.exit_code == 0);
}

TEST_CASE("the first baseline update creates the baseline's directory") {
  TempDir tmp;
  Result r =
      run_gate({"baseline", "update", "--report", regressed().string(), "--baseline", "baselines/demo.json"},
               tmp.path());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(slurp(tmp.path() / "baselines" / "demo.json") == slurp(regressed()));
}

TEST_CASE("in GitHub Actions: annotations on stdout and the verdict appended to the step summary") {
  TempDir tmp;
  spit(tmp.path() / "summary.md", "previous step\n");
  Result r =
      run_gate({"compare", "--baseline", baseline().string(), "--current", regressed().string()}, tmp.path(),
               {{"GITHUB_ACTIONS", "true"}, {"GITHUB_STEP_SUMMARY", (tmp.path() / "summary.md").string()}});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("::error") != std::string::npos);
  const std::string summary = slurp(tmp.path() / "summary.md");
  CHECK(summary.rfind("previous step\n", 0) == 0); // appended, not replaced
  CHECK(summary.find("<!-- gate-verdict -->") != std::string::npos);
  CHECK(summary.find("gate failed") != std::string::npos);
  CHECK(summary.size() <= (1u << 20) + 20);
}

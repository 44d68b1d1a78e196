// End-to-end: promptfoo and gate agree test by test on the configs of
// fixtures/promptfoo/agree, or the import report says why (issue 29).
// Each theme's promptfoo.json is what promptfoo 0.121.20 itself gave,
// recorded by record.sh against the fake upstream serving the theme's
// upstream.json; here the same config is imported by gate, run against the
// same rules, and each test's outcome compared. A test gate left out, or one
// whose outcome differs, must have a line of the import report within the
// test's lines of the config, in its list of what was not carried over.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

constexpr const char* k_recorded_port = "127.0.0.1:18095";

struct Case {
  std::size_t line = 0; // the test's line in the config
  bool passed = true;   // every run passed
};

// The config lines the import report lists as not carried over ("  FILE:LINE:
// ..."). A note ("carried over with a difference") explains no disagreement:
// what was carried over must behave as in promptfoo.
std::vector<std::size_t> report_lines(const std::string& report) {
  std::vector<std::size_t> out;
  std::istringstream in(report);
  bool unmapped = false;
  for (std::string l; std::getline(in, l);) {
    if (!l.starts_with("  ")) unmapped = l.starts_with("Not carried over");
    const std::string prefix = "  promptfooconfig.yaml:";
    if (!unmapped || !l.starts_with(prefix)) continue;
    out.push_back(std::stoul(l.substr(prefix.size())));
  }
  return out;
}

} // namespace

TEST_CASE(
    "promptfoo 0.121.20 and gate agree test by test on fixtures/promptfoo/agree, or the report says why") {
  const fs::path set = source_dir() / "fixtures" / "promptfoo" / "agree";
  if (sh(set, "command -v node").exit_code != 0)
    return gate::testing::skip_test("node is not on PATH; the javascript assertions' checks run it");
  std::vector<fs::path> themes;
  for (const auto& e : fs::directory_iterator(set))
    if (e.is_directory()) themes.push_back(e.path());
  std::sort(themes.begin(), themes.end());
  REQUIRE(themes.size() >= 3);
  std::size_t tests = 0, agreed = 0, explained = 0;
  std::string table;
  for (const fs::path& theme : themes) {
    const std::string name = theme.filename().string();
    CAPTURE(name);
    TempDir tmp;
    gate::testing::FakeUpstream up(gate::testing::parse_script(slurp(theme / "upstream.json"), name));
    up.start();
    // The config as recorded, pointed at this run's fake upstream.
    fs::copy(theme, tmp.path() / "config", fs::copy_options::recursive);
    std::string config = slurp(tmp.path() / "config" / "promptfooconfig.yaml");
    const std::string port = "127.0.0.1:" + std::to_string(up.port());
    for (std::size_t at; (at = config.find(k_recorded_port)) != std::string::npos;)
      config.replace(at, std::string(k_recorded_port).size(), port);
    spit(tmp.path() / "config" / "promptfooconfig.yaml", config);

    const fs::path out = tmp.path() / "out";
    Result im = run_gate({"import", "promptfoo", (tmp.path() / "config" / "promptfooconfig.yaml").string(),
                          "--out", out.string()},
                         tmp.path());
    INFO(im.out << im.err);
    REQUIRE(im.exit_code == 0);
    Result run =
        run_gate({"run", "--config", (out / "gate.yaml").string(), "--mode", "record", "--quiet"}, tmp.path(),
                 {{"OPENAI_API_KEY", "sk-agreement-0123456789abcdef"},
                  {"ANTHROPIC_API_KEY", "sk-ant-agreement-0123456789"}});
    INFO(run.out << run.err);
    REQUIRE((run.exit_code == 0 || run.exit_code == 1));

    // gate's cases: description → the test's config line and outcome.
    std::map<std::string, Case> gate_cases;
    std::map<std::string, std::string> id_of;
    std::istringstream cases(slurp(out / "suite" / "versions" / "v1" / "cases.jsonl"));
    for (std::string l; std::getline(cases, l);) {
      const auto c = boost::json::parse(l).as_object();
      const auto& meta = c.at("metadata").as_object();
      const std::string where(meta.at("promptfoo").as_string());
      const std::string desc(meta.at("description").as_string());
      gate_cases[desc].line = std::stoul(where.substr(where.rfind(':') + 1));
      id_of[std::string(c.at("id").as_string())] = desc;
    }
    const auto report = read_json(out / ".gate" / "out" / "report.json");
    for (const auto& t : report.at("tasks").as_array())
      for (const auto& r : t.at("runs").as_array())
        if (!r.at("passed").as_bool())
          gate_cases[id_of.at(std::string(t.at("id").as_string()))].passed = false;

    // The config's test lines, in order, bound each test's lines.
    std::vector<std::size_t> starts;
    std::istringstream lines(config);
    std::size_t n = 0;
    for (std::string l; std::getline(lines, l);)
      if (++n, l.starts_with("  - {description:")) starts.push_back(n);
    const std::vector<std::size_t> listed = report_lines(slurp(out / "import-report.txt"));

    const auto recorded = read_json(theme / "promptfoo.json");
    REQUIRE(recorded.at("promptfoo").as_string() == "0.121.20");
    const auto& pf_tests = recorded.at("tests").as_array();
    REQUIRE(pf_tests.size() == starts.size());
    for (std::size_t i = 0; i < pf_tests.size(); ++i) {
      ++tests;
      const std::string desc(pf_tests[i].at("description").as_string());
      bool pf = true;
      for (const auto& p : pf_tests[i].at("pass").as_array())
        pf = pf && p.as_bool();
      const auto it = gate_cases.find(desc);
      if (it != gate_cases.end() && it->second.passed == pf) {
        ++agreed;
        continue;
      }
      const std::size_t first = starts[i], last = i + 1 < starts.size() ? starts[i + 1] - 1 : n;
      const bool has_line =
          std::any_of(listed.begin(), listed.end(), [&](std::size_t l) { return l >= first && l <= last; });
      explained += has_line ? 1 : 0;
      table += "  " + name + " / " + desc + ": promptfoo " + (pf ? "pass" : "fail") + ", gate " +
               (it == gate_cases.end() ? std::string("left out")
                : it->second.passed    ? "pass"
                                       : "fail") +
               (has_line ? ", listed in the import report" : ", NOT in the import report") + "\n";
    }
  }
  MESSAGE(agreed << " of " << tests << " tests agree; the others:\n" << table);
  CHECK(agreed + explained == tests);
  CHECK(tests >= 100);
}

// End-to-end: promptfoo's javascript assertions as imported script checks
// (promptfoo_javascript.mjs under node), where promptfoo's and gate's worlds
// part: a context field gate cannot give, a grader that does not load, a
// grader that loads files of its own, and a .js grader under a package.json
// of "type": "module". The agreement with promptfoo itself on the ordinary
// cases is tests/e2e/test_import_agree.cpp (fixtures/promptfoo/agree/javascript).
// Needs node on PATH (a skip without it), as the checks themselves do.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <map>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

TEST_CASE(
    "javascript assertions: what gate cannot give is errored, never a verdict; graders load as they did") {
  TempDir tmp;
  const fs::path dir = tmp.path();
  if (sh(dir, "command -v node").exit_code != 0)
    return gate::testing::skip_test("node is not on PATH; the javascript checks run it");
  gate::testing::FakeUpstream upstream(
      gate::testing::parse_script(R"({"rules": [{"match": "hello", "answers": ["Hello there"]}]})"));
  upstream.start();
  fs::create_directories(dir / "cfg" / "esm");
  spit(dir / "cfg" / "promptfooconfig.yaml",
       "prompts: ['{{q}}']\nproviders:\n  - id: openai:chat:m\n    config:\n"
       "      apiBaseUrl: " +
           upstream.base_url() + R"(
tests:
  - description: provider
    vars: {q: hello}
    assert:
      - type: javascript
        value: context.provider.id() === 'x'
  - description: broken-grader
    vars: {q: hello}
    assert:
      - type: javascript
        value: file://broken.js
  - description: esm-js
    vars: {q: hello}
    assert:
      - type: javascript
        value: file://esm/grade.js
  - description: local-require
    vars: {q: hello}
    assert:
      - type: javascript
        value: file://uses_helper.js
      - type: contains
        value: Hello
)");
  spit(dir / "cfg" / "broken.js", "module.exports = (output) => {\n");
  spit(dir / "cfg" / "esm" / "package.json", R"({"type": "module"})");
  spit(dir / "cfg" / "esm" / "grade.js", "export default (output) => output.startsWith('Hello');\n");
  spit(dir / "cfg" / "uses_helper.js",
       "const h = require('./helper');\nmodule.exports = (output) => h.ok(output);\n");

  Result im = run_gate({"import", "promptfoo", "cfg/promptfooconfig.yaml", "--out", "out"}, dir);
  INFO(im.out << im.err);
  REQUIRE(im.exit_code == 0);
  // The ES module keeps its kind in its extension, whatever package.json
  // stands above the suite; the grader that loads ./helper is not copied.
  CHECK(fs::exists(dir / "out" / "suite" / "promptfoo_graders" / "grade.mjs"));
  CHECK(fs::exists(dir / "out" / "suite" / "promptfoo_graders" / "broken.cjs"));
  CHECK(!fs::exists(dir / "out" / "suite" / "promptfoo_graders" / "uses_helper.cjs"));
  const std::string report = slurp(dir / "out" / "import-report.txt");
  CHECK(report.find("promptfooconfig.yaml:25: assert \"javascript\": the grader loads files of its own") !=
        std::string::npos);
  spit(dir / "package.json", R"({"type": "commonjs"})"); // above the suite: changes nothing

  Result run = run_gate({"run", "--config", "out/gate.yaml", "--runs", "1", "--out", "rep", "--quiet"}, dir,
                        {{"OPENAI_API_KEY", "k"}});
  INFO(run.out << run.err);
  const auto report_json = read_json(dir / "rep" / "report.json");
  std::map<std::string, std::string> got;
  for (const auto& t : report_json.at("tasks").as_array()) {
    const auto& r = t.at("runs").as_array().at(0);
    got[std::string(t.at("id").as_string())] = std::string(r.at("error").as_string()) + "|" +
                                               std::string(r.at("error_message").as_string()) + "|" +
                                               (r.at("passed").as_bool() ? "pass" : "fail");
  }
  INFO(boost::json::serialize(report_json.at("tasks")));
  REQUIRE(got.size() == 4);
  // context.provider: promptfoo would call it; gate says it cannot, errored.
  CHECK(got.at("provider").starts_with("check|"));
  CHECK(got.at("provider").find("context.provider: promptfoo passes it to the assertion") !=
        std::string::npos);
  CHECK(got.at("provider").ends_with("|fail"));
  // A grader that does not load is promptfoo's eval error, gate's errored check.
  CHECK(got.at("broken-grader").starts_with("check|"));
  CHECK(got.at("broken-grader").find("the grader file promptfoo_graders/broken.cjs failed to run") !=
        std::string::npos);
  CHECK(got.at("esm-js") == "||pass");
  CHECK(got.at("local-require") == "||pass"); // its contains check, without the grader
  CHECK(run.exit_code != 0);                  // errored runs: the run says it could not measure them
}

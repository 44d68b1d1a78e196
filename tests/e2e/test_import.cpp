// End-to-end: `gate import promptfoo` on the promptfoo configs of
// fixtures/promptfoo (promptfoo's documented format: prompts from files and
// inline, several providers, defaultTest, inline tests and tests from CSV,
// JSON Lines and YAML files), then the imported suites replayed offline from
// the cassettes record.sh recorded from the fake upstream, with the exact
// outcomes and the exact list of what was not carried over.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

const std::string k_canary = "sk-canary-promptfoo-0123456789abcdef";

// The report's "Not carried over" lines, without their indentation.
std::vector<std::string> unmapped_lines(const std::string& report) {
  std::vector<std::string> out;
  const std::size_t begin = report.find("Not carried over");
  const std::size_t end = report.find("\nCarried over with a difference");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::size_t at = report.find('\n', begin) + 1;
  while (at < end) {
    const std::size_t nl = report.find('\n', at);
    out.push_back(report.substr(at + 2, nl - at - 2));
    at = nl + 1;
  }
  return out;
}

// Each task's first run as "id" → passed and "id label" → passed; every
// run of a task must agree (the fake upstream answers the same each time).
std::map<std::string, bool> outcomes(const boost::json::value& report) {
  std::map<std::string, bool> out;
  for (const auto& t : report.at("tasks").as_array()) {
    const std::string id(t.at("id").as_string());
    for (const auto& r : t.at("runs").as_array()) {
      std::map<std::string, bool> run{{id, r.at("passed").as_bool()}};
      for (const auto& c : r.at("checks").as_array())
        run[id + " " + std::string(c.at("label").as_string())] = c.at("passed").as_bool();
      for (const auto& [k, v] : run) {
        auto [it, fresh] = out.emplace(k, v);
        CHECK(it->second == v);
      }
    }
  }
  return out;
}

struct Imported {
  fs::path dir;
  Result import;
  std::string report;
};

Imported import_fixture(const fs::path& tmp, const std::string& name) {
  const fs::path config = source_dir() / "fixtures" / "promptfoo" / name / "promptfooconfig.yaml";
  Imported im{tmp / name,
              run_gate({"import", "promptfoo", config.string(), "--out", (tmp / name).string()}, tmp), ""};
  INFO(im.import.out << im.import.err);
  REQUIRE(im.import.exit_code == 0);
  im.report = slurp(im.dir / "import-report.txt");
  return im;
}

// Replays the imported suite offline: no key, and nothing listens at the
// recorded base URL.
boost::json::value replay(const Imported& im, const std::string& name, const std::string& runs) {
  fs::copy(source_dir() / "fixtures" / "promptfoo" / name / "cassette", im.dir / "cache",
           fs::copy_options::recursive);
  Result r = run_gate({"run", "--config", (im.dir / "gate.yaml").string(), "--mode", "replay-only", "--out",
                       (im.dir / "out").string(), "--quiet"},
                      im.dir);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find(runs + " of " + runs + " runs replayed; 0 errored") != std::string::npos);
  return read_json(im.dir / "out" / "report.json");
}

} // namespace

TEST_CASE(
    "fixtures/promptfoo support: imported, the unmapped list exact, replayed offline with exact outcomes") {
  TempDir tmp;
  const Imported im = import_fixture(tmp.path(), "support");
  CHECK(
      unmapped_lines(im.report) ==
      std::vector<std::string>{
          "promptfooconfig.yaml:7: prompt \"file://prompts/support.txt\" part 2: nunjucks beyond {{name}} (a "
          "filter, a field or an expression), which gate's templates do not have",
          "promptfooconfig.yaml:8: prompt 2: written to prompts/prompt-2.md but not run: gate.yaml runs one "
          "prompt (prompt-1); point prompt.user_file at it to compare it with the baseline",
          "promptfooconfig.yaml:18: provider \"anthropic:messages:claude-3-5-haiku-latest\": not run: "
          "gate.yaml "
          "has one model (openai:chat:fake-model); change its model block to this one to compare",
          "promptfooconfig.yaml:19: provider \"ollama:chat:llama3.2\": gate speaks OpenAI's, Anthropic's and "
          "Azure OpenAI's APIs, and OpenAI-compatible servers given by apiBaseUrl",
          "promptfooconfig.yaml:53: key \"outputPath\": not carried over by gate import",
          "tests/extra.jsonl:2: assert \"is-valid-openai-tools-call\": no gate check does what this "
          "assertion "
          "does",
          "tests/more.yaml:17: assert \"python\": a grader file, which promptfoo calls with its context "
          "(vars, "
          "prompt, test); gate import maps inline code that reads only output",
          "tests/more.yaml:23: threshold \"0.5\": not kept (a \"javascript\" assertion inside, which "
          "promptfoo "
          "scores from 0 to 1 where gate's check passes or fails); each assertion is a check of its own, and "
          "the case passes only when every one does",
          "tests/more.yaml:27: options.provider: not carried over: gate grades llm_judge with judge.model "
          "and "
          "its own prompt",
          "tests/support.csv:4: assert \"levenshtein\": promptfoo's threshold is an edit distance in "
          "characters; "
          "gate's similar check compares a ratio (1 - distance / the longer length), a different test",
      });
  CHECK(im.report.find("11 tests read, 11 cases written; 35 assertions read, 32 checks written.") !=
        std::string::npos);
  CHECK(im.import.err.find("gate import: 10 not carried over, 7 carried over with a difference") !=
        std::string::npos);
  // The provider's apiKey is nowhere: not in gate.yaml, the report or the output.
  CHECK(no_canary_in(im.dir, im.import.out + im.import.err, k_canary));
  const std::string yaml = slurp(im.dir / "gate.yaml");
  CHECK(yaml.find("api_key_env: OPENAI_API_KEY") != std::string::npos);
  CHECK(yaml.find("runs: 3") != std::string::npos);
  CHECK(slurp(im.dir / "prompts" / "prompt-2.md") == "Answer briefly: {{question}}\n");

  const bool node = sh(im.dir, "command -v node").exit_code == 0;
  const auto got = outcomes(replay(im, "support", "33"));
  const std::map<std::string, bool> want = {
      {"international-shipping", true},
      {"international-shipping not(icontains)", true},
      {"international-shipping contains:shipping", true},
      {"international-shipping not_contains:shipping", true},
      {"opening-hours", false},
      {"opening-hours not(icontains)", true},
      {"opening-hours equals", false},
      {"order-status-as-json", true},
      {"order-status-as-json not(icontains)", true},
      {"order-status-as-json json_schema", true},
      {"order-status-as-json json", true},
      {"policy-text", node},
      {"policy-text not(icontains)", true},
      {"policy-text contains:policy", true},
      {"policy-text script", node}, // javascript: output.length < 200 (errored without node)
      {"refund-timing", true},
      {"refund-timing not(icontains)", true},
      {"refund-timing regex", true},
      {"refund-timing llm_judge", true},
      {"return-window", true},
      {"return-window not(icontains)", true},
      {"return-window icontains", true},
      {"return-window contains_any", true},
      {"return-window regex", true}, // starts-with: ^Returns
      {"shipping-cost", false},
      {"shipping-cost not(icontains)", true},
      {"shipping-cost contains", true},
      {"shipping-cost regex", true},
      {"shipping-cost all_of(icontains, icontains)", true},
      {"shipping-cost equals", false},
      {"sizes", true},
      {"sizes not(icontains)", true},
      {"sizes any_of(icontains, icontains)", true},
      {"sizes latency_ms", true},
      {"sizes-2", false},
      {"sizes-2 not(icontains)", true},
      {"sizes-2 any_of(icontains, icontains)", false},
      {"sizes-2 latency_ms", true},
      {"test-11", true},
      {"test-11 not(icontains)", true},
      {"weather", true},
      {"weather not(icontains)", true},
      {"weather finish_reason", true},
  };
  std::string listed;
  for (const auto& [k, v] : got)
    listed += k + (v ? ": pass\n" : ": fail\n");
  INFO(listed);
  CHECK(got == want);
}

TEST_CASE("fixtures/promptfoo orders: a chat prompt, targets, repeat and a cost check with a pricing row") {
  TempDir tmp;
  const Imported im = import_fixture(tmp.path(), "orders");
  CHECK(unmapped_lines(im.report) ==
        std::vector<std::string>{
            "promptfooconfig.yaml:14: evaluateOptions.maxConcurrency: not carried over by gate import",
            "promptfooconfig.yaml:31: assert \"contains\": transform: gate checks the answer as the model "
            "gave it",
            "promptfooconfig.yaml:43: assert \"not-llm-rubric\": gate's not holds no llm_judge or group of "
            "them",
        });
  const std::string yaml = slurp(im.dir / "gate.yaml");
  CHECK(yaml.find("runs: 2\n") != std::string::npos);
  CHECK(yaml.find("  extra: {\"response_format\":{\"type\":\"json_object\"}}\n") != std::string::npos);
  CHECK(slurp(im.dir / "prompts" / "prompt-1.md") == "{{message}}\n");
  CHECK(slurp(im.dir / "prompts" / "prompt-1.system.md").starts_with("Extract the intent"));
  // The cost check needs the model's price, as the import report says.
  spit(im.dir / "gate.yaml", yaml + "pricing:\n  fake-model: {prompt: 1, completion: 2}\n");
  const std::map<std::string, bool> want = {
      {"extract-an-order", true},
      {"extract-an-order json", true},
      {"extract-an-order all_of(contains, icontains)", true},
      {"extract-an-order cost", true},
      {"extract-an-order llm_judge", true},
      {"no-order-number", true},
      {"no-order-number not(json)", true},
      {"no-order-number not(regex)", true},
      {"no-order-number contains_all", true},
  };
  CHECK(outcomes(replay(im, "orders", "4")) == want);
}

TEST_CASE("gate import promptfoo: bad input names file:line:col and writes nothing") {
  TempDir tmp;
  const fs::path dir = tmp.path();
  spit(dir / "promptfooconfig.yaml",
       "prompts:\n  - 'Hi {{name}}'\nproviders: [openai:gpt-4o-mini]\ntests: file://tests.csv\n");
  spit(dir / "tests.csv", "name,__expected\nAnn,\"contains:Ann\n");
  Result r = run_gate({"import", "promptfoo", "promptfooconfig.yaml", "--out", "evals/x"}, dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("tests.csv:2:5: quoted field never closed") != std::string::npos);
  CHECK(!fs::exists(dir / "evals" / "x"));

  spit(dir / "tests.csv", "name,__expected\nAnn,contains:Ann\n");
  fs::create_directories(dir / "evals" / "x");
  spit(dir / "evals" / "x" / "gate.yaml", "mine\n");
  r = run_gate({"import", "promptfoo", "promptfooconfig.yaml", "--out", "evals/x"}, dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("gate import: nothing written") != std::string::npos);
  CHECK(!fs::exists(dir / "evals" / "x" / "suite"));
  CHECK(slurp(dir / "evals" / "x" / "gate.yaml") == "mine\n");

  // --out with a directory symlink inside: nothing lands where it points.
  fs::remove_all(dir / "evals" / "x");
  fs::create_directories(dir / "elsewhere");
  fs::create_directories(dir / "evals" / "x");
  fs::create_directory_symlink(dir / "elsewhere", dir / "evals" / "x" / "suite");
  r = run_gate({"import", "promptfoo", "promptfooconfig.yaml", "--out", "evals/x"}, dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("evals/x/suite is a symlink (no file is written through one") != std::string::npos);
  CHECK(fs::is_empty(dir / "elsewhere"));

  // A newcomer who leaves out --out is told what it is, not only the usage line.
  r = run_gate({"import", "promptfoo", "promptfooconfig.yaml"}, dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--out DIR is required: the directory to write the suite into") != std::string::npos);

  r = run_gate({"import", "promptfoo", "promptfooconfig.yaml", "--out", "evals/y"}, dir);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  Result verify = run_gate({"suite", "verify", "evals/y/suite"}, dir);
  INFO(verify.out << verify.err);
  CHECK(verify.exit_code == 0);
}

// gate import promptfoo on hand-written configs: files read (CSV, JSON
// Lines, YAML), defaultTest merged, vars expanded, providers mapped, the
// unmapped list exact with file:line, and what is written loads in gate.
#include <doctest.h>

#include <boost/json.hpp>
#include <fstream>

#include <gate/config/config.hpp>
#include <gate/importer/detail.hpp>
#include <gate/importer/importer.hpp>
#include <gate/suite/suite.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <tests/support/temp_dir.hpp>

namespace fs = std::filesystem;
using namespace gate::importer;
using gate::testing::TempDir;

namespace {

void spit(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string file_text(const Import& im, const std::string& path) {
  for (const auto& f : im.files)
    if (f.path == path) return f.text;
  FAIL("no file " << path);
  return "";
}

std::vector<std::string> lines(const std::vector<Finding>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs)
    out.push_back(finding_line(f));
  return out;
}

std::vector<boost::json::value> cases(const Import& im) {
  std::vector<boost::json::value> out;
  const std::string text = file_text(im, "suite/versions/v1/cases.jsonl");
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    out.push_back(boost::json::parse(text.substr(at, nl - at)));
    at = nl + 1;
  }
  return out;
}

// The error, or the failure of an import that writes only the report.
std::string bad_input(const fs::path& config) {
  try {
    const Import im = import_promptfoo(config, "x");
    if (!im.failure.empty()) {
      CHECK(im.files.size() == 1);
      CHECK(im.files.at(0).path == "import-report.txt");
    }
    return im.failure;
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("tests from inline YAML, CSV, JSON Lines and a YAML file, with defaultTest merged as promptfoo "
          "merges it") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "promptfooconfig.yaml", R"(description: demo
prompts: ['Weather in {{city}} for {{who}}?']
providers: [openai:gpt-4o-mini]
defaultTest:
  vars:
    who: Ann
  assert:
    - type: not-contains
      value: sorry
tests:
  - vars:
      city: Paris
      who: Ben
    assert:
      - type: contains
        value: Paris
  - file://data/*.csv
  - file://data/more.jsonl
  - file://data/more.yaml
)");
  // A quoted field with a comma, a "" and a line end inside: the row's line is where it starts.
  spit(d / "data" / "a.csv",
       "city,__expected,__description\r\n\"Rome, IT\",\"contains:\"\"Rome\"\"\",\"two\nlines\"\r\n"
       "Oslo,icontains:oslo,\r\n");
  spit(d / "data" / "more.jsonl",
       "\n{\"vars\": {\"city\": \"Lima\", \"extra\": 1}, \"assert\": [{\"type\": \"is-json\"}]}\n");
  spit(d / "data" / "more.yaml",
       "- vars:\n    city: [Kyiv, Baku]\n  assert:\n    - type: contains\n      value: '{{city}}'\n");
  const Import im = import_promptfoo(d / "promptfooconfig.yaml", "demo");
  CHECK(im.tests == 6);
  CHECK(im.cases == 6);
  CHECK(im.assertions == 12);
  CHECK(im.checks == 12);
  CHECK(im.unmapped.empty());
  const auto cs = cases(im);
  REQUIRE(cs.size() == 6);
  // defaultTest's assertion first, the test's vars over defaultTest's.
  CHECK(
      gate::json::canonical(cs[0]) ==
      R"({"checks":[{"type":"not_contains","value":"sorry"},{"type":"contains","value":"Paris"}],"id":"test-1",)"
      R"("metadata":{"promptfoo":"promptfooconfig.yaml:11"},"vars":{"city":"Paris","who":"Ben"}})");
  CHECK(cs[1].at("id") == "two-lines");
  CHECK(cs[1].at("vars").at("city") == "Rome, IT");
  CHECK(cs[1].at("vars").at("who") == "Ann");
  CHECK(cs[1].at("checks").at(1).at("value") == "\"Rome\"");
  CHECK(cs[1].at("metadata").at("promptfoo") == "data/a.csv:2");
  CHECK(cs[2].at("metadata").at("promptfoo") == "data/a.csv:4");
  // A var the prompt does not use is not kept (gate refuses unused vars).
  CHECK(gate::json::canonical(cs[3].at("vars")) == R"({"city":"Lima","who":"Ann"})");
  CHECK(cs[3].at("metadata").at("promptfoo") == "data/more.jsonl:2");
  // A list-valued var: one case per value, the assertion rendered with each.
  CHECK(cs[4].at("vars").at("city") == "Kyiv");
  CHECK(cs[5].at("vars").at("city") == "Baku");
  CHECK(cs[5].at("checks").at(1).at("value") == "Baku");
  CHECK(cs[5].at("id") == "test-6");
  CHECK(file_text(im, "prompts/prompt-1.md") == "Weather in {{city}} for {{who}}?\n");

  // What is written loads as gate loads it: the suite (pin included) and gate.yaml.
  for (const auto& f : im.files)
    spit(d / "out" / f.path, f.text);
  const auto s = gate::suite::load(d / "out" / "suite", "");
  CHECK(s.cases.size() == 6);
  const gate::config::Config cfg = gate::config::load(d / "out" / "gate.yaml");
  CHECK(cfg.model.name == "gpt-4o-mini");
  CHECK(cfg.runs == 3);
}

TEST_CASE("CSV cells as promptfoo's csv reader takes them: trimmed __expected, list metadata, a falsy "
          "__threshold unset, __providerOutput") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "c.yaml", "prompts: ['About {{item}}']\nproviders: [openai:gpt-4o-mini]\ntests: file://t.csv\n");
  spit(d / "t.csv",
       " item ,__expected1,__expected2,__metadata:labels[],__metadata:kind,__threshold,__providerOutput\n"
       "tea,contains: leaf ,\" icontains-any: green , black\",\"hot, a\\,b ,c\",,0,\n"
       "ice,\"is-json: {\"\"type\"\": \"\"object\"\"}\",,,cold,,\n"
       "pop,contains:fizz,,,,,canned answer\n");
  const Import im = import_promptfoo(d / "c.yaml", "x");
  const auto cs = cases(im);
  REQUIRE(cs.size() == 2);
  // "contains: leaf " checks for "leaf", as promptfoo trims the cell and the value.
  CHECK(gate::json::canonical(cs[0].at("checks")) ==
        R"([{"type":"contains","value":"leaf"},{"checks":[{"type":"icontains","value":"green"},)"
        R"({"type":"icontains","value":"black"}],"type":"any_of"}])");
  CHECK(cs[0].at("vars").at("item") == "tea"); // the column's name trimmed
  // labels[]: split at commas not after a backslash; an empty cell sets no key.
  CHECK(gate::json::canonical(cs[0].at("metadata").at("metadata")) == R"({"labels":["hot","a,b","c"]})");
  // is-json's value is a schema, kept as written.
  CHECK(cs[1].at("checks").at(0).at("type") == "json_schema");
  // __threshold 0 is no threshold in promptfoo (nothing listed); __providerOutput
  // makes promptfoo check that text, so the row is left out.
  CHECK(lines(im.unmapped) ==
        std::vector<std::string>{
            "t.csv:4: key \"providerOutput\" of a test: the test is left out: gate runs every "
            "case with gate.yaml's model and prompt and passes it when every check passes"});
}

TEST_CASE("the unmapped list is exact, each with file:line, in file order") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "promptfooconfig.yaml", R"(prompts:
  - file://p.txt
  - id: file://chat.json
providers:
  - id: openai:chat:gpt-4o
    config:
      apiKey: sk-canary-unit-0123456789abcdef
      temperature: 0.2
      frequency_penalty: 0.5
      organization: org-1
  - bedrock:anthropic.claude-v2
scenarios: []
tests:
  - description: has a threshold
    vars: {q: hi}
    threshold: 0.8
    options: {provider: openai:gpt-4o}
    assert:
      - type: ruby
        value: 'output.length > 1'
      - type: contains
        value: hi
  - description: nothing gate can check
    vars: {q: x}
    assert:
      - type: ruby
        value: 'true'
  - vars: {q: {nested: 1}}
    assert:
      - type: contains
        value: a
  - file://t.xlsx
)");
  spit(d / "p.txt", "Q: {{q}}\r\n  ---  \r\n\n---\n{% if q %}{{q}}{% endif %}\n");
  spit(
      d / "chat.json",
      R"([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "{{q}}"}])");
  const Import im = import_promptfoo(d / "promptfooconfig.yaml", "x");
  CHECK(
      lines(im.unmapped) ==
      std::vector<std::string>{
          "promptfooconfig.yaml:2: prompt \"file://p.txt\" part 2: nunjucks tags ({% %}, {# #}) or an "
          "escaped "
          "\\{{, which gate's {{var}} templates do not have",
          "promptfooconfig.yaml:3: prompt \"file://chat.json\": a conversation other than [system,] user; "
          "gate's prompt is a system and a user template",
          "promptfooconfig.yaml:10: provider config \"organization\": not a setting gate import carries over",
          "promptfooconfig.yaml:11: provider \"bedrock:anthropic.claude-v2\": gate speaks OpenAI's, "
          "Anthropic's "
          "and Azure OpenAI's APIs, and OpenAI-compatible servers given by apiBaseUrl",
          "promptfooconfig.yaml:12: key \"scenarios\": not carried over by gate import",
          "promptfooconfig.yaml:16: threshold \"0.8\": not kept (a \"ruby\" assertion inside, which "
          "promptfoo "
          "scores from 0 to 1 where gate's check passes or fails); each assertion is a check of its own, and "
          "the case passes only when every one does",
          "promptfooconfig.yaml:17: options.provider: not carried over: gate grades llm_judge with "
          "judge.model "
          "and its own prompt",
          "promptfooconfig.yaml:19: assert \"ruby\": runs code inside promptfoo; gate's script check "
          "runs "
          "a program of your own with the answer on stdin (docs/suite-format.md \"Script checks\"), and no "
          "generated one would behave the same",
          "promptfooconfig.yaml:23: test \"nothing gate can check\": left out of the suite: none of its "
          "assertions maps to a gate check",
          "promptfooconfig.yaml:26: assert \"ruby\": runs code inside promptfoo; gate's script check "
          "runs a "
          "program of your own with the answer on stdin (docs/suite-format.md \"Script checks\"), and no "
          "generated one would behave the same",
          "promptfooconfig.yaml:28: var \"q\": an object value; gate's vars are text and its templates have "
          "no "
          "fields",
          "promptfooconfig.yaml:32: tests \"file://t.xlsx\": tests from a .xlsx file, which promptfoo runs "
          "or "
          "reads with a loader of its own",
      });
  CHECK(im.cases == 1);
  const std::string yaml = file_text(im, "gate.yaml");
  CHECK(yaml.find("sk-canary") == std::string::npos);
  CHECK(yaml.find("  temperature: 0.2\n") != std::string::npos);
  CHECK(yaml.find("  extra: {\"frequency_penalty\":0.5}\n") != std::string::npos);
  for (const auto& f : im.files)
    CHECK(f.text.find("canary") == std::string::npos);
}

TEST_CASE("providers: OpenAI, Anthropic, Azure and OpenAI-compatible ones become gate.yaml's model block") {
  TempDir tmp;
  const fs::path d = tmp.path();
  auto model_of = [&](const std::string& providers) {
    spit(d / "c.yaml", "prompts: ['{{q}}']\nproviders:\n" + providers +
                           "tests:\n  - vars: {q: a}\n    assert:\n"
                           "      - type: contains\n        value: a\n");
    const Import im = import_promptfoo(d / "c.yaml", "x");
    const std::string y = file_text(im, "gate.yaml");
    const std::size_t b = y.find("model:\n"), e = y.find("runs:");
    return y.substr(b, e - b);
  };
  CHECK(model_of("  - openai:gpt-4o-mini\n") == "model:\n  # from promptfoo's openai:gpt-4o-mini\n  "
                                                "provider: openai\n  api_key_env: OPENAI_API_KEY   # gate "
                                                "never writes the key anywhere\n  name: gpt-4o-mini\n");
  CHECK(
      model_of(
          "  - id: anthropic:messages:claude-sonnet-4-5\n    config: {max_tokens: 1024, temperature: 0}\n") ==
      "model:\n  # from promptfoo's anthropic:messages:claude-sonnet-4-5\n  provider: anthropic\n  "
      "api_key_env: "
      "ANTHROPIC_API_KEY   # gate never writes the key anywhere\n  name: claude-sonnet-4-5\n  temperature: "
      "0\n"
      "  max_tokens: 1024\n");
  CHECK(model_of("  - id: azure:chat:prod-4o\n    config: {apiHost: acme.openai.azure.com, apiVersion: "
                 "2024-10-21}\n") ==
        "model:\n  # from promptfoo's azure:chat:prod-4o\n  provider: azure\n  base_url: "
        "https://acme.openai.azure.com/openai\n  api_version: 2024-10-21\n  api_key_env: "
        "AZURE_OPENAI_API_KEY   # "
        "gate never writes the key anywhere\n  name: prod-4o\n");
  CHECK(model_of("  - openai:chat:llama3:\n      config:\n        apiBaseUrl: http://127.0.0.1:11434/v1\n"
                 "        apiKeyEnvar: OLLAMA_KEY\n        seed: 3\n") ==
        "model:\n  # from promptfoo's openai:chat:llama3\n  provider: openai\n  base_url: "
        "http://127.0.0.1:11434/v1\n"
        "  api_key_env: OLLAMA_KEY   # gate never writes the key anywhere\n  name: llama3\n  seed: 3\n");
  CHECK(model_of("  - openai:responses:o4-mini\n").find("  api: responses\n") != std::string::npos);
  // None gate speaks: a placeholder, said so in the report.
  spit(d / "c.yaml",
       "prompts: ['{{q}}']\nproviders: [ollama:chat:llama3]\ntests:\n  - vars: {q: a}\n    assert:\n"
       "      - type: contains\n        value: a\n");
  const Import im = import_promptfoo(d / "c.yaml", "x");
  CHECK(file_text(im, "gate.yaml").find("name: REPLACE-ME") != std::string::npos);
  CHECK(lines(im.unmapped).front() ==
        "c.yaml:0: providers: none maps to a model gate speaks; gate.yaml's model is a placeholder");
}

TEST_CASE("providers: anthropic:<claude model> is promptfoo's Messages shorthand; one gate cannot speak is "
          "named by its id") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "c.yaml", "prompts: ['{{q}}']\nproviders:\n  - id: http\n    label: Bot\n    config: {url: "
                     "'https://bot.example/chat'}\n  - exec:\n      config: {}\n  - anthropic:claude-2.1\n"
                     "  - id: anthropic:claude-opus-4-1\n    config: {temperature: 0}\n"
                     "tests:\n  - vars: {q: a}\n    assert:\n      - type: contains\n        value: a\n");
  const Import im = import_promptfoo(d / "c.yaml", "x");
  const std::string y = file_text(im, "gate.yaml");
  CHECK(y.find("  provider: anthropic\n") != std::string::npos);
  CHECK(y.find("  name: claude-opus-4-1\n") != std::string::npos);
  const std::string speaks =
      "gate speaks OpenAI's, Anthropic's and Azure OpenAI's APIs, and OpenAI-compatible "
      "servers given by apiBaseUrl";
  CHECK(lines(im.unmapped) ==
        std::vector<std::string>{"c.yaml:3: provider \"http\": " + speaks,
                                 "c.yaml:6: provider \"exec\": " + speaks,
                                 "c.yaml:8: provider \"anthropic:claude-2.1\": " + speaks});
}

TEST_CASE("assertion templates by $ref, a test with no assertion, a grader's rubricPrompt, and a left-out "
          "test's assertions counted") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "c.yaml", R"(prompts: ['{{q}}']
providers: [openai:gpt-4o]
assertionTemplates:
  polite:
    type: icontains
    value: please
tests:
  - vars: {q: a}
    assert:
      - $ref: '#/assertionTemplates/polite'
      - $ref: '#/definitions/other'
  - vars: {q: b}
  - vars: {q: c}
    options:
      rubricPrompt: 'Grade {{ output }} by the points'
    assert:
      - type: llm-rubric
        value: mentions c
      - type: contains
        value: c
  - vars: {q: d}
    options: {transform: output.trim()}
    assert:
      - type: contains
        value: d
      - type: contains
        value: e
)");
  const Import im = import_promptfoo(d / "c.yaml", "x");
  const auto cs = cases(im);
  REQUIRE(cs.size() == 2);
  CHECK(gate::json::canonical(cs[0].at("checks")) == R"([{"type":"icontains","value":"please"}])");
  CHECK(gate::json::canonical(cs[1].at("checks")) == R"([{"type":"contains","value":"c"}])");
  CHECK(im.assertions == 6);
  CHECK(im.checks == 2);
  CHECK(
      lines(im.unmapped) ==
      std::vector<std::string>{
          "c.yaml:11: assert $ref \"#/definitions/other\": not resolved: gate import resolves "
          "#/assertionTemplates/NAME of the config",
          "c.yaml:12: test 2: left out of the suite: it has no assertion, and a gate case needs a check",
          "c.yaml:15: options.rubricPrompt: not carried over: gate grades llm_judge with judge.model and its "
          "own prompt",
          "c.yaml:17: assert \"llm-rubric\": a custom rubricPrompt; gate's judge has one fixed prompt",
          "c.yaml:22: options.transform: the test is left out: it changes the prompt or the answer its "
          "assertions see"});
}

TEST_CASE("bad input: file:line:col and what was expected") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "a.yaml", "prompts: [x]\nprompts: [y]\n");
  CHECK(bad_input(d / "a.yaml") == "a.yaml:2:1: duplicate key \"prompts\" (first at line 1)");
  spit(d / "b.yaml", "prompts: ['{{q}}']\ntests: file://t.jsonl\n");
  spit(d / "t.jsonl", "{\"vars\": {\"q\": \"a\"}}\n{\"vars\": \n");
  CHECK(bad_input(d / "b.yaml").starts_with("t.jsonl:2:"));
  spit(d / "c.yaml", "- a\n- b\n");
  CHECK(bad_input(d / "c.yaml").starts_with("c.yaml:1:1: expected a mapping of keys at top level"));
  spit(d / "d.yaml", "prompts: ['{{q}}']\ntests: file://t.csv\n");
  spit(d / "t.csv", "q,__expected\na,b,c\n");
  CHECK(bad_input(d / "d.yaml") == "t.csv:2: 3 fields; expected 2 as in the header");
  spit(d / "e.yaml", "prompts: ['{{ q | upper }}']\ntests: []\n");
  CHECK(bad_input(d / "e.yaml").starts_with("e.yaml: no prompt gate can use; e.yaml:1: prompt: nunjucks"));
  spit(d / "f.yaml", "prompts: ['{{q}}']\ntests:\n  - vars: {q: a}\n    assert:\n      - type: ruby\n"
                     "        value: 'true'\n");
  CHECK(
      bad_input(d / "f.yaml") ==
      "f.yaml: no test with an assertion gate can check (1 tests read); nothing to import; 2 reasons; "
      "f.yaml:3: test 1: left out of the suite: none of its assertions maps to a gate check; f.yaml:5: "
      "assert "
      "\"ruby\": runs code inside promptfoo; gate's script check runs a program of your own with the "
      "answer on stdin (docs/suite-format.md \"Script checks\"), and no generated one would behave the same");
  // A prompt named by a file that does not exist stops, as promptfoo does
  // (ENOENT), instead of becoming the prompt's text (examples/ollama-comparison).
  spit(d / "h.yaml", "prompts:\n  - prompts/openai_prompt.json\ntests:\n  - vars: {q: a}\n");
  CHECK(bad_input(d / "h.yaml").starts_with("h.yaml:2: prompt \"prompts/openai_prompt.json\": no such file"));
  // More reasons than the message shows: it says how many, the report has them all.
  std::string many = "prompts: ['{{q}}']\ntests:\n";
  for (int i = 0; i < 7; ++i)
    many += "  - vars: {q: a}\n";
  spit(d / "g.yaml", many);
  CHECK(bad_input(d / "g.yaml")
            .starts_with(
                "g.yaml: no test with an assertion gate can check (7 tests read); nothing to import; 7 "
                "reasons (the first 5 here); g.yaml:3: test 1:"));
  const Import g = import_promptfoo(d / "g.yaml", "x");
  CHECK(g.files.at(0).text.find("Not carried over (7):") != std::string::npos);
}

TEST_CASE("files outside the config's directory are refused unless allowed, and every file read is listed") {
  TempDir tmp;
  const fs::path d = tmp.path() / "cfg";
  fs::create_directories(d / "prompts");
  fs::create_directories(tmp.path() / "shared");
  spit(tmp.path() / "secret.txt", "outside\n");
  spit(tmp.path() / "shared" / "q.txt", "Shared {{q}}\n");
  spit(d / "prompts" / "p.txt", "Q: {{q}}\n");
  fs::create_symlink(tmp.path() / "secret.txt", d / "link.txt");
  const std::string tests = "tests:\n  - vars: {q: a}\n    assert: [{type: contains, value: a}]\n";
  // ../, an absolute path and a symlink leaving the directory: each refused
  // at its line, before anything is read or written.
  spit(d / "up.yaml", "prompts: ['file://../secret.txt']\n" + tests);
  CHECK(
      bad_input(d / "up.yaml").starts_with("up.yaml:1: \"../secret.txt\" is outside the config's directory"));
  spit(d / "abs.yaml", "prompts: ['file://" + (tmp.path() / "secret.txt").string() + "']\n" + tests);
  CHECK(bad_input(d / "abs.yaml").find("is outside the config's directory") != std::string::npos);
  spit(d / "link.yaml", "prompts: ['file://link.txt']\n" + tests);
  CHECK(bad_input(d / "link.yaml").find("pass --allow-outside DIR") != std::string::npos);
  spit(d / "var.yaml", "prompts: ['{{q}}']\ntests:\n  - vars: {q: file://../secret.txt}\n"
                       "    assert: [{type: contains, value: a}]\n");
  CHECK(bad_input(d / "var.yaml").starts_with("var.yaml:3: \"../secret.txt\" is outside"));
  // --allow-outside DIR lets DIR be read, and nothing else outside.
  spit(d / "shared.yaml", "prompts: ['file://../shared/q.txt']\n" + tests);
  const Import ok = import_promptfoo(d / "shared.yaml", "x", {tmp.path() / "shared"});
  CHECK(ok.failure.empty());
  CHECK(ok.files_read == std::vector<std::string>{"shared.yaml", "../shared/q.txt"});
  CHECK(file_text(ok, "import-report.txt").find("Files read (2):\n  shared.yaml\n  ../shared/q.txt\n") !=
        std::string::npos);
  CHECK_THROWS_AS(import_promptfoo(d / "up.yaml", "x", {tmp.path() / "shared"}), gate::Error);
  // Inside: read and listed.
  spit(d / "in.yaml", "prompts: ['file://prompts/p.txt']\n" + tests);
  CHECK(import_promptfoo(d / "in.yaml", "x").files_read ==
        std::vector<std::string>{"in.yaml", "prompts/p.txt"});
}

TEST_CASE(
    "a test threshold, from YAML or a CSV __threshold, scores the test's checks as one weighted check") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "t.csv", "q,__expected1,__expected2,__threshold\nx,contains:x,contains:zz,0.5\ny,contains:y,,\n");
  spit(d / "c.yaml", "prompts: ['{{q}}']\ntests: file://t.csv\n");
  const Import im = import_promptfoo(d / "c.yaml", "x");
  REQUIRE(im.failure.empty());
  const auto cs = cases(im);
  REQUIRE(cs.size() == 2);
  CHECK(
      gate::json::canonical(cs[0].at("checks")) ==
      R"([{"checks":[{"type":"contains","value":"x"},{"type":"contains","value":"zz"}],"threshold":0.5,"type":"weighted","weights":[1,1]}])");
  CHECK(gate::json::canonical(cs[1].at("checks")) == R"([{"type":"contains","value":"y"}])");
  for (const auto& line : lines(im.unmapped))
    CHECK(line.find("threshold") == std::string::npos);
  // A threshold promptfoo ignores (text) is ignored, noted.
  spit(d / "s.yaml", "prompts: ['{{q}}']\ntests:\n  - vars: {q: a}\n    threshold: '0.5'\n"
                     "    assert: [{type: contains, value: a}, {type: contains, value: b}]\n");
  const Import s = import_promptfoo(d / "s.yaml", "x");
  CHECK(gate::json::canonical(cases(s).at(0).at("checks")) ==
        R"([{"type":"contains","value":"a"},{"type":"contains","value":"b"}])");
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0].reason.starts_with("ignored, as promptfoo ignores a threshold that is not a number"));
}

TEST_CASE("untrusted text in findings is escaped: no control byte reaches the report") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "c.yaml",
       "prompts: ['{{q}}']\ntests:\n  - description: \"bad\\e[2Jname\\nforged: line\"\n    vars: {q: a}\n"
       "    assert:\n      - type: \"java\\e]script\"\n");
  {
    const std::string m = bad_input(d / "c.yaml");
    CHECK(!m.empty());
    CHECK(m.find('\x1b') == std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
  }
  const Finding f{"c.yaml:3", "test \"a\x1b[2Jb\"", "why\nforged"};
  CHECK(finding_line(f) == "c.yaml:3: test \"a\\x1b[2Jb\": why\\nforged");
}

TEST_CASE("prompts: .txt split at --- lines, .md whole, chat JSON inline or in a file, the mapping form") {
  TempDir tmp;
  const fs::path d = tmp.path();
  const std::string tests =
      "tests:\n  - vars: {q: a}\n    assert:\n      - type: contains\n        value: a\n";
  auto import_with = [&](const std::string& prompts) {
    spit(d / "c.yaml", prompts + "providers: [openai:gpt-4o]\n" + tests);
    return import_promptfoo(d / "c.yaml", "x");
  };
  spit(d / "p.txt", "\n  Q: {{q}}  \r\n  ---  \r\n\n---\nR: {{q}}\n");
  spit(d / "p.md", "# Q\n---\n{{q}}\n\n");
  Import im = import_with("prompts: [file://p.txt, file://p.md]\n");
  CHECK(file_text(im, "prompts/prompt-1.md") == "Q: {{q}}\n");
  CHECK(file_text(im, "prompts/prompt-2.md") == "R: {{q}}\n");
  CHECK(file_text(im, "prompts/prompt-3.md") == "# Q\n---\n{{q}}\n\n\n");
  CHECK(im.unmapped.size() == 2); // prompts 2 and 3: written, not run

  im = import_with(
      "prompts:\n  - '[{\"role\": \"system\", \"content\": \"Be {{q}}.\"}, {\"role\": \"user\", \"content\": "
      "\"{{q}}?\"}]'\n");
  CHECK(file_text(im, "prompts/prompt-1.system.md") == "Be {{q}}.\n");
  CHECK(file_text(im, "prompts/prompt-1.md") == "{{q}}?\n");
  CHECK(file_text(im, "gate.yaml").find("  system_file: prompts/prompt-1.system.md\n") != std::string::npos);

  spit(d / "chat.yaml", "- role: user\n  content: 'Hi {{q}}'\n");
  im = import_with("prompts:\n  file://chat.yaml: greeting\n");
  CHECK(file_text(im, "prompts/prompt-1.md") == "Hi {{q}}\n");

  im = import_with("prompts:\n  - {raw: 'Hey {{q}}', label: raw}\n  - file://grade.py\n");
  CHECK(file_text(im, "prompts/prompt-1.md") == "Hey {{q}}\n");
  REQUIRE(im.unmapped.size() == 1);
  CHECK(finding_line(im.unmapped[0]) == "c.yaml:3: prompt \"file://grade.py\": a prompt function or template "
                                        "in a .py file, which promptfoo runs "
                                        "or reads with a loader of its own");
}

TEST_CASE("prompts: a bare file name is the file, a templated chat file and a chat of parts are listed, no "
          "prompts key is promptfoo's default {{prompt}}") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "ask.txt", "Ask {{q}}\n");
  spit(d / "conv.json",
       "[\n  {% for m in history %}{\"role\": \"user\", \"content\": \"{{m}}\"},{% endfor %}\n"
       "  {\"role\": \"user\", \"content\": \"{{q}}\"}\n]\n");
  spit(d / "parts.yaml",
       "messages:\n  - role: user\n    content:\n      - type: text\n        text: '{{q}}'\n");
  spit(d / "list.yaml", "- role: user\n  content:\n    - type: text\n      text: '{{q}}'\n");
  spit(d / "c.yaml", "prompts: [ask.txt, conv.json, file://parts.yaml, file://list.yaml, 'plain {{q}}.']\n"
                     "providers: [openai:gpt-4o]\n"
                     "tests:\n  - vars: {q: a}\n    assert:\n      - type: contains\n        value: a\n");
  const Import im = import_promptfoo(d / "c.yaml", "x");
  CHECK(file_text(im, "prompts/prompt-1.md") == "Ask {{q}}\n");
  CHECK(file_text(im, "prompts/prompt-2.md") == "plain {{q}}.\n");
  CHECK(
      lines(im.unmapped) ==
      std::vector<std::string>{
          "c.yaml:1: prompt \"file://conv.json\": nunjucks tags ({% %}, {# #}) or an escaped \\{{, which "
          "gate's {{var}} templates do not have",
          "c.yaml:1: prompt \"file://parts.yaml\": expected a list of chat messages ({role, content}), got a "
          "mapping",
          "c.yaml:1: prompt \"file://list.yaml\": a chat message whose content is a list of parts (text, "
          "images, cache_control); gate's prompt is text templates",
          "c.yaml:1: prompt 2: written to prompts/prompt-2.md but not run: gate.yaml runs one prompt "
          "(prompt-1); point prompt.user_file at it to compare it with the baseline"});
  // No prompts key: promptfoo's readConfig makes it ["{{prompt}}"].
  spit(d / "none.yaml", "providers: [openai:gpt-4o]\ntests:\n  - vars: {prompt: hi}\n    assert:\n"
                        "      - type: contains\n        value: a\n");
  const Import dflt = import_promptfoo(d / "none.yaml", "x");
  CHECK(file_text(dflt, "prompts/prompt-1.md") == "{{prompt}}\n");
  CHECK(cases(dflt).at(0).at("vars").at("prompt") == "hi");
  CHECK(
      lines(dflt.notes) ==
      std::vector<std::string>{
          "none.yaml:0: prompts: none in the config: promptfoo's default prompt {{prompt}}, the test's var"});
}

TEST_CASE(
    "what promptfoo expands or runs at eval time is listed: var globs, prompt settings, JavaScript configs") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(
      d / "c.yaml",
      "prompts:\n  - raw: '{{q}}'\n    config: {temperature: 1}\ntests:\n  - vars: {q: 'file://docs/*.txt'}\n"
      "    assert:\n      - type: contains\n        value: a\n  - vars: {q: b}\n    assert:\n"
      "      - type: contains\n        value: b\n");
  const Import im = import_promptfoo(d / "c.yaml", "x");
  CHECK(
      lines(im.unmapped) ==
      std::vector<std::string>{
          "c.yaml:0: providers: none maps to a model gate speaks; gate.yaml's model is a placeholder",
          "c.yaml:3: prompt key \"config\": not carried over: gate sends the prompt with gate.yaml's model "
          "settings",
          "c.yaml:5: var \"q\": a glob, which promptfoo expands into one test per file; gate import does not",
      });
  CHECK(im.cases == 1);
  spit(d / "promptfooconfig.js", "module.exports = {};\n");
  CHECK(bad_input(d / "promptfooconfig.js").starts_with("promptfooconfig.js: a JavaScript config"));
}

TEST_CASE("a test whose options or keys change the request or the answer is left out, never half-checked") {
  TempDir tmp;
  const fs::path d = tmp.path();
  spit(d / "c.yaml", R"(prompts: ['{{q}}']
providers: [openai:gpt-4o]
tests:
  - vars: {q: a}
    options:
      transform: JSON.parse(output)
    assert:
      - type: contains
        value: a
  - vars: {q: b}
    provider: anthropic:messages:claude-sonnet-4-5
    assert:
      - type: contains
        value: b
  - file://t.csv
  - vars: {q: c}
    assert:
      - type: contains
        value: c
)");
  spit(d / "t.csv", "q,__expected,__prefix\nd,contains:d,Answer: \n");
  const Import im = import_promptfoo(d / "c.yaml", "x");
  CHECK(lines(im.unmapped) == std::vector<std::string>{
                                  "c.yaml:6: options.transform: the test is left out: it changes the prompt "
                                  "or the answer its assertions see",
                                  "c.yaml:11: key \"provider\" of a test: the test is left out: gate runs "
                                  "every case with gate.yaml's "
                                  "model and prompt and passes it when every check passes",
                                  "t.csv:2: options.prefix: the test is left out: it changes the prompt or "
                                  "the answer its assertions see",
                              });
  CHECK(im.tests == 4);
  CHECK(im.cases == 1);
  CHECK(cases(im).at(0).at("vars").at("q") == "c");
}

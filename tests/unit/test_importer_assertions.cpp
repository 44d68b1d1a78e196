// gate import promptfoo: each promptfoo assertion gate can check, as the
// exact gate check it becomes, and each it cannot, with the reason.
#include <doctest.h>

#include <boost/json.hpp>

#include <gate/importer/detail.hpp>
#include <gate/util/json.hpp>

using namespace gate::importer;
using namespace gate::importer::detail;

namespace {

const Vars k_vars = {{"city", "Paris"}, {"expected", "sunny"}};

// The assertion (YAML, one mapping) as its gate check's canonical JSON, or
// "unmapped: <reason>".
std::string mapped(const std::string& yaml, Findings* out = nullptr, bool anthropic = false) {
  Findings local;
  Findings& f = out != nullptr ? *out : local;
  const Node a = read_yaml(yaml, "t.yaml", false);
  AssertContext ctx{&k_vars, anthropic};
  auto c = map_assert(a, ctx, f);
  if (c) return gate::json::canonical(*c);
  REQUIRE(f.unmapped.size() == 1);
  CHECK(f.unmapped[0].where == "t.yaml:1");
  return "unmapped: " + f.unmapped[0].reason;
}

} // namespace

TEST_CASE("every assertion kind gate has a check for maps to exactly that check") {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"type: equals\nvalue: Paris", R"({"trim":false,"type":"equals","value":"Paris"})"},
      {"type: equals\nvalue: 42", R"({"trim":false,"type":"equals","value":"42"})"},
      {"type: contains\nvalue: '{{city}}'", R"({"type":"contains","value":"Paris"})"},
      {"type: icontains\nvalue: '{{ expected }} in {{nowhere}}'",
       R"({"type":"icontains","value":"sunny in "})"},
      {"type: not-contains\nvalue: rain", R"({"type":"not_contains","value":"rain"})"},
      {"type: not-icontains\nvalue: rain", R"({"not":{"type":"icontains","value":"rain"}})"},
      {"type: regex\nvalue: '^\\d+$'", R"({"pattern":"^\\d+\\z","type":"regex"})"},
      {"type: not-regex\nvalue: x", R"({"not":{"pattern":"x","type":"regex"}})"},
      // promptfoo's startsWith is on the answer as it came: a regex anchored at the start.
      {"type: starts-with\nvalue: Yes", R"({"pattern":"^Yes","type":"regex"})"},
      {"type: starts-with\nvalue: 'a.b (c)?'", R"({"pattern":"^a\\.b\\ \\(c\\)\\?","type":"regex"})"},
      // An assert-set with a threshold: its share of weights, weight 0 left out.
      {"type: assert-set\nthreshold: 0.5\nassert:\n  - type: contains\n    value: a\n    weight: 3\n"
       "  - type: regex\n    value: b\n  - type: contains\n    value: c\n    weight: 0",
       R"({"checks":[{"type":"contains","value":"a"},{"pattern":"b","type":"regex"}],"threshold":0.5,"type":"weighted","weights":[3,1]})"},
      // A weight-0 member of an assert-set passes in promptfoo: nothing to check.
      {"type: assert-set\nassert:\n  - type: contains\n    value: a\n  - type: contains\n    value: z\n"
       "    weight: 0",
       R"({"checks":[{"type":"contains","value":"a"}],"type":"all_of"})"},
      {"type: javascript\nvalue: output.length < 10",
       R"({"argv":["node","promptfoo_javascript.mjs","--","output.length < 10"],"type":"script"})"},
      {"type: not-javascript\nvalue: output.length\nthreshold: 3",
       R"({"argv":["node","promptfoo_javascript.mjs","--inverse","--threshold","3","--","output.length"],"type":"script"})"},
      {"type: javascript\nvalue: context.config.n < output.length\nconfig: {n: 2}",
       R"({"argv":["node","promptfoo_javascript.mjs","--config","{\"n\":2}","--","context.config.n < output.length"],"type":"script"})"},
      {"type: javascript\nvalue: output.includes('{{city}}')",
       R"J({"argv":["node","promptfoo_javascript.mjs","--","output.includes('Paris')"],"type":"script"})J"},
      {"type: contains-any\nvalue: [a, b]", R"({"type":"contains_any","values":["a","b"]})"},
      {"type: contains-all\nvalue: 'a, b ,c'", R"({"type":"contains_all","values":["a","b","c"]})"},
      {"type: icontains-any\nvalue: [A]", R"({"checks":[{"type":"icontains","value":"A"}],"type":"any_of"})"},
      {"type: icontains-all\nvalue: 'x,y'",
       R"({"checks":[{"type":"icontains","value":"x"},{"type":"icontains","value":"y"}],"type":"all_of"})"},
      {"type: is-json", R"({"type":"json"})"},
      {"type: contains-json", R"({"find":"anywhere","type":"json"})"},
      {"type: not-is-json", R"({"not":{"type":"json"}})"},
      {"type: is-json\nvalue:\n  type: object\n  required: [a]",
       R"({"schema":{"required":["a"],"type":"object"},"type":"json_schema"})"},
      {"type: contains-json\nvalue: '{\"required\": [\"a\"]}'",
       R"({"find":"anywhere","schema":{"required":["a"]},"type":"json_schema"})"},
      {"type: is-json\nvalue: |\n  type: array\n  minItems: 1\n",
       R"({"schema":{"minItems":1,"type":"array"},"type":"json_schema"})"},
      {"type: llm-rubric\nvalue: Polite about {{city}}",
       R"({"rubric":"Polite about Paris","type":"llm_judge"})"},
      {"type: latency\nthreshold: 1500", R"({"max":1500,"type":"latency_ms"})"},
      {"type: cost\nthreshold: 0.002", R"({"max_usd":0.002,"type":"cost"})"},
      {"type: finish-reason\nvalue: length", R"({"equals":"length","type":"finish_reason"})"},
      {"type: assert-set\nassert:\n  - type: contains\n    value: a\n  - type: not-contains\n    value: b",
       R"({"checks":[{"type":"contains","value":"a"},{"type":"not_contains","value":"b"}],"type":"all_of"})"},
      {"type: python\nvalue: \"'{{city}}' in output\"",
       R"({"argv":["python3","promptfoo_python.py","--","'Paris' in output"],"type":"script"})"},
      {"type: not-python\nvalue: |\n  n = len(output)\n  return n / 10\nthreshold: 0.5",
       R"({"argv":["python3","promptfoo_python.py","--inverse","--threshold","0.5","--","n = len(output)\nreturn n / 10\n"],"type":"script"})"},
      {"type: contains\nvalue: a\nmetric: tone", R"({"name":"tone","type":"contains","value":"a"})"},
      {"type: contains\nvalue: a\nweight: 3", R"({"type":"contains","value":"a"})"},
      // promptfoo compares String(value) of a YAML number or boolean.
      {"type: equals\nvalue: 1.50", R"({"trim":false,"type":"equals","value":"1.5"})"},
      {"type: equals\nvalue: 1e21", R"({"trim":false,"type":"equals","value":"1e+21"})"},
      {"type: equals\nvalue: 0.0000001", R"({"trim":false,"type":"equals","value":"1e-7"})"},
      {"type: equals\nvalue: '1.50'", R"({"trim":false,"type":"equals","value":"1.50"})"},
      {"type: contains\nvalue: true", R"({"type":"contains","value":"true"})"},
      {"type: contains\nvalue: 100", R"({"type":"contains","value":"100"})"},
      // Quoted commas stay; empty values drop.
      {"type: contains-any\nvalue: '\"Smith, John\", Doe,, '",
       R"({"type":"contains_any","values":["Smith, John","Doe"]})"},
      // JavaScript's RegExp: $ is the very end, \p without u is the text p.
      {"type: regex\nvalue: '^total: \\d+$'", R"({"pattern":"^total: \\d+\\z","type":"regex"})"},
      {"type: regex\nvalue: '\\p{L}'", R"({"pattern":"p\\x{7b}L\\x{7d}","type":"regex"})"},
      {"type: regex\nvalue: 'a.b{,2}'",
       R"({"pattern":"a[^\\x{a}\\x{d}\\x{2028}\\x{2029}]b\\x{7b},2\\x{7d}","type":"regex"})"},
      {"type: finish-reason\nvalue: tool_calls",
       R"({"checks":[{"equals":"tool_calls","type":"finish_reason"},{"equals":"function_call","type":"finish_reason"}],"type":"any_of"})"},
      {"type: word-count\nvalue: 3", R"({"max":3,"min":3,"type":"length","unit":"words"})"},
      {"type: word-count\nvalue: {min: 2}", R"({"min":2,"type":"length","unit":"words"})"},
  };
  for (const auto& [yaml_text, want] : table) {
    const std::string& yaml = yaml_text; // clang 14 captures no structured binding
    CAPTURE(yaml);
    CHECK(mapped(yaml) == want);
  }
}

TEST_CASE("what is mapped with a difference is noted at its line, with why") {
  Findings f;
  CHECK(mapped("type: contains\nvalue: a\nweight: 3", &f) == R"({"type":"contains","value":"a"})");
  REQUIRE(f.notes.size() == 1);
  CHECK(f.notes[0].reason.starts_with("weight \"3\" dropped: it weighs promptfoo's score"));
  // Anthropic's stop_reason values that promptfoo reports as "stop": no note left.
  Findings g;
  CHECK(
      mapped("type: finish-reason\nvalue: Stop", &g, true) ==
      R"({"checks":[{"equals":"end_turn","type":"finish_reason"},{"equals":"stop_sequence","type":"finish_reason"}],"type":"any_of"})");
  CHECK(mapped("type: finish-reason\nvalue: length", &g, true) ==
        R"({"equals":"max_tokens","type":"finish_reason"})");
  CHECK(g.notes.empty());
  // Unicode case folding on both sides: nothing to note.
  Findings h;
  (void)mapped("type: icontains\nvalue: ÉTÉ", &h);
  CHECK(h.notes.empty());
}

TEST_CASE(
    "a javascript check gets the test's vars as JavaScript holds them, and the prompt when it is one text") {
  const boost::json::object js_vars{{"n", 3}, {"q", "a b"}, {"flag", true}};
  const Node a = read_yaml("type: javascript\nvalue: context.vars.n > 2", "t.yaml", false);
  AssertContext ctx{&k_vars, false};
  ctx.js_vars = &js_vars;
  ctx.text_prompt = true;
  Findings f;
  auto c = map_assert(a, ctx, f);
  REQUIRE(c);
  CHECK(gate::json::canonical(*c) ==
        R"({"argv":["node","promptfoo_javascript.mjs","--vars","{\"flag\":true,\"n\":3,\"q\":\"a b\"}",)"
        R"("--prompt-from-case","--","context.vars.n > 2"],"type":"script"})");
  REQUIRE(f.notes.size() == 1);
  CHECK(f.notes[0].reason.find("its context has vars and prompt") != std::string::npos);
  // A grader file needs the config's directory to be read from.
  CHECK(mapped("type: javascript\nvalue: file://grade.js").find("read only when importing a config") !=
        std::string::npos);
}

TEST_CASE("with tools, text assertions also read the tool calls, as promptfoo reads them as JSON") {
  auto with_tools = [](const std::string& yaml, AssertContext::Tools tools, Findings& f) {
    AssertContext ctx{&k_vars, tools == AssertContext::Tools::anthropic};
    ctx.tools = tools;
    auto c = map_assert(read_yaml(yaml, "t.yaml", false), ctx, f);
    return c ? gate::json::canonical(*c) : "unmapped: " + f.unmapped.at(0).reason;
  };
  using T = AssertContext::Tools;
  Findings f;
  CHECK(
      with_tools("type: contains\nvalue: Paris", T::openai, f) ==
      R"({"checks":[{"type":"contains","value":"Paris"},{"check":{"type":"contains","value":"Paris"},"type":"tool_calls"}],"type":"any_of"})");
  REQUIRE(f.notes.size() == 1);
  CHECK(f.notes[0].reason.find("the provider has tools") != std::string::npos);
  CHECK(
      with_tools("type: not-contains\nvalue: x", T::openai, f) ==
      R"({"not":{"checks":[{"type":"contains","value":"x"},{"check":{"type":"contains","value":"x"},"type":"tool_calls"}],"type":"any_of"}})");
  CHECK(with_tools("type: is-json", T::openai, f) ==
        R"({"checks":[{"type":"json"},{"not":{"type":"no_tool_call"}}],"type":"any_of"})");
  CHECK(with_tools("type: contains-json", T::openai, f) ==
        R"({"checks":[{"find":"anywhere","type":"json"},{"not":{"type":"no_tool_call"}}],"type":"any_of"})");
  Findings g;
  CHECK(with_tools("type: is-json\nvalue: {type: object}", T::openai, g).find("applies the schema") !=
        std::string::npos);
  Findings h;
  CHECK(with_tools("type: is-json", T::anthropic, h).find("each block's JSON") != std::string::npos);
  // Without tools, nothing changes.
  Findings i;
  CHECK(with_tools("type: contains\nvalue: Paris", T::none, i) == R"({"type":"contains","value":"Paris"})");
}

TEST_CASE("an assert-set threshold that is not a number is ignored, as promptfoo ignores it") {
  Findings f;
  CHECK(mapped("type: assert-set\nthreshold: 'high'\nassert:\n  - type: contains\n    value: a", &f) ==
        R"({"checks":[{"type":"contains","value":"a"}],"type":"all_of"})");
  REQUIRE(f.notes.size() == 1);
  CHECK(f.notes[0].reason.starts_with("ignored, as promptfoo ignores a threshold that is not a number"));
}

TEST_CASE("assertions gate cannot check faithfully are unmapped, never approximated") {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"type: ruby\nvalue: output.length < 10", "runs code inside promptfoo"},
      {"type: javascript\nvalue: file://grade.ts", "a TypeScript grader"},
      {"type: javascript\nvalue: file://grade.txt", "not a JavaScript file"},
      {"type: javascript\nvalue: '{{ q | upper }}'", "nunjucks beyond {{name}}"},
      {"type: javascript\nvalue: output.length\nthreshold: high", "threshold \"high\" is not a number"},
      {"type: python\nvalue: file://grade.py", "a grader file, which promptfoo calls with its context"},
      {"type: python\nvalue: context['vars']['q'] in output", "the code reads context"},
      {"type: not-python\nvalue: file://grade.py", "a grader file"},
      {"type: levenshtein\nvalue: hello\nthreshold: 2", "promptfoo's threshold is an edit distance"},
      {"type: similar\nvalue: hello", "embedding similarity"},
      {"type: rouge-n\nvalue: hello", "levenshtein and rouge_l only"},
      {"type: is-valid-openai-tools-call", "no gate check does what this assertion does"},
      {"type: model-graded-closedqa\nvalue: x", "no gate check does what this assertion does"},
      {"type: frobnicate", "not an assertion type gate import knows"},
      {"type: equals\nvalue: {a: 1}", "a JSON value to compare with"},
      {"type: contains\nvalue: '{{ city | upper }}'", "nunjucks beyond {{name}}"},
      {"type: contains\nvalue: '{% if x %}a{% endif %}'", "nunjucks tags"},
      {"type: contains\nvalue: file://expected.txt", "a file:// value"},
      {"type: contains\nvalue: a\ntransform: output.trim()",
       "transform: gate checks the answer as the model gave it"},
      {"type: llm-rubric\nvalue: a\nprovider: openai:gpt-4o", "provider: gate grades with one judge model"},
      {"type: llm-rubric\nvalue: a\nrubricPrompt: 'x'", "a custom rubricPrompt"},
      {"type: not-llm-rubric\nvalue: a", "gate's not holds no llm_judge"},
      {"type: latency", "no threshold; expected a number"},
      {"type: contains\nvalue: a\nweight: -1", "expected a number of at least 0"},
      {"type: contains\nvalue: a\nweight: 0", "promptfoo passes this assertion whatever the answer"},
      {"type: regex\nvalue: '(?i)total'", "JavaScript refuses the pattern (Invalid group at character 2)"},
      {"type: not-regex\nvalue: 'a**'", "promptfoo fails this assertion on every run, negated or not"},
      {"type: regex\nvalue: '[z-a]'", "Range out of order"},
      {"type: regex\nvalue: '(a)\\1'", "a backreference"},
      {"type: contains-any\nvalue: '\"unterminated, x'", "an unterminated quoted value"},
      {"type: word-count\nvalue: many", "expected a number or {min, max}"},
      {"type: is-json\nvalue: file://schema.json", "a schema in a file"},
      {"type: is-json\nvalue: '{\"type\": '", "the schema text does not parse: t.yaml:1:"},
      {"type: assert-set\nthreshold: 0.5\nassert:\n  - type: python\n    value: 'True'",
       "a \"python\" assertion inside, which promptfoo scores from 0 to 1"},
      {"type: assert-set\nthreshold: 1.5\nassert:\n  - type: contains\n    value: a",
       "threshold \"1.5\": expected a number from 0 to 1"},
      {"type: assert-set\nassert:\n  - type: ruby\n    value: 'true'",
       "an assertion inside cannot be mapped"},
      {"type: regex\nvalue: '(?=a)b'", "lookaround"},
      // promptfoo names OpenAI's and Anthropic's reasons its own way first.
      {"type: finish-reason\nvalue: end_turn",
       "never names one \"end_turn\": the assertion fails on every reply"},
      {"type: not-finish-reason\nvalue: pause_turn",
       "the assertion passes on every reply with a finish reason"},
  };
  for (const auto& [yaml_text, reason] : table) {
    const std::string& yaml = yaml_text; // clang 14 captures no structured binding
    CAPTURE(yaml);
    const std::string got = mapped(yaml);
    CHECK(got.starts_with("unmapped: "));
    CHECK(got.find(reason) != std::string::npos);
  }
}

TEST_CASE("an __expected cell reads as promptfoo reads it") {
  auto read = [](const std::string& cell) {
    return gate::json::canonical(to_json(assertion_from_string(cell, "t.csv", 3)));
  };
  CHECK(read("Paris") == R"({"type":"equals","value":"Paris"})");
  CHECK(read("contains:Par") == R"({"type":"contains","value":"Par"})");
  CHECK(read("contains:  Par ") == R"({"type":"contains","value":"Par"})"); // trimmed, as promptfoo does
  CHECK(read("is-json: {}") == R"({"type":"is-json","value":" {}"})");      // a schema: as written
  CHECK(read("not-icontains:rain") == R"({"type":"not-icontains","value":"rain"})");
  CHECK(read("is-json") == R"({"type":"is-json"})");
  CHECK(read("levenshtein(5):Yes, we are") ==
        R"({"threshold":5,"type":"levenshtein","value":"Yes, we are"})");
  CHECK(read("grade:Is polite") == R"({"type":"llm-rubric","value":"Is polite"})");
  CHECK(read("llm-rubric:Is polite") == R"({"type":"llm-rubric","value":"Is polite"})");
  CHECK(read("fn:output.length > 3") == R"({"type":"javascript","value":"output.length > 3"})");
  CHECK(read("python:len(output) > 3") == R"({"type":"python","value":"len(output) > 3"})");
  CHECK(read("file://graders/tone.py") == R"({"type":"python","value":"graders/tone.py"})");
  // A javascript file keeps its file:// (promptfoo loads it); with a
  // :function the cell does not end in a JavaScript extension, and promptfoo
  // compares it as the expected answer.
  CHECK(read("file://check.js") == R"({"type":"javascript","value":"file://check.js"})");
  CHECK(read("file://check.MJS") == R"({"type":"javascript","value":"file://check.MJS"})");
  CHECK(read("file://check.js:grade") == R"({"type":"equals","value":"file://check.js:grade"})");
  CHECK(read("javascript:  output.length > 3 ") == R"({"type":"javascript","value":"output.length > 3"})");
  CHECK(read("contains-any:a,b") == R"({"type":"contains-any","value":"a,b"})");
  // Not a type of promptfoo's before the colon: the whole cell is the expected answer.
  CHECK(read("Note: closed") == R"({"type":"equals","value":"Note: closed"})");
  CHECK(read("contains(x):a") == R"({"type":"equals","value":"contains(x):a"})");
  CHECK(assertion_from_string("x", "t.csv", 3).where() == "t.csv:3");
}

TEST_CASE("render_value: {{name}} from the test's vars, an undefined one empty, nunjucks logic refused") {
  std::string why;
  CHECK(render_value("{{city}}!", k_vars, why) == "Paris!");
  CHECK(render_value("{{ missing }}x", k_vars, why) == "x");
  CHECK(render_value("no slots } {", k_vars, why) == "no slots } {");
  CHECK(!render_value("{{ city.name }}", k_vars, why));
  CHECK(!render_value("{# c #}", k_vars, why));
  CHECK(!render_value("\\{{city}}", k_vars, why));
}

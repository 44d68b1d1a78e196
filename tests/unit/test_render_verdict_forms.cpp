#include <doctest.h>

#include <boost/json.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gate/render/annotations.hpp>
#include <gate/render/verdict_json.hpp>
#include <gate/render/verdict_junit.hpp>
#include <gate/render/verdict_markdown.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

using namespace gate;
using compare::MetricRow;
using compare::TaskDiff;
using compare::Verdict;

namespace {

const std::string k_canary = "sk-canary-7f3a9b1c2d4e5f60";
const std::string k_token = "0123456789abcdef0123456789abcdef";

// By hand, not by compare(): one failed metric, one ungated metric, a
// regressed task (hostile id, answer and check), a fixed task.
Verdict sample() {
  Verdict v;
  v.status = gate::compare::Status::failed;
  v.exit = Exit::threshold;
  v.headline = "❌ gate failed: success rate fell 12.5pp (threshold 2.0pp, p=0.012 adjusted)";
  v.reasons = {"success rate fell 12.5pp (threshold 2.0pp, p=0.012 adjusted)"};
  v.warnings = {"routes differ: model: m-1 → m-2"};
  v.route_diff = {"model: m-1 → m-2"};
  v.baseline_suite = {"capitals", "1", "aa"};
  v.current_suite = {"capitals", "2", "bb"};
  v.alpha = 0.05;
  v.max_new_failures = 3;

  MetricRow s;
  s.key = "success_rate";
  s.name = "success rate";
  s.unit = "pp";
  s.value_unit = "%";
  s.baseline = 87.5;
  s.current = 75;
  s.delta = -12.5;
  s.delta_interval = {-20.25, -4.75};
  s.threshold = 2;
  s.p_value = 0.006;
  s.p_adjusted = 0.012;
  s.noise_floor = 6.5;
  s.test = "sign-flip exact over 5 affected tasks";
  s.gated = s.crossed = s.significant = s.failed = true;
  MetricRow t;
  t.key = "tokens_per_task";
  t.name = "tokens per task";
  t.unit = "%";
  t.value_unit = "tokens";
  t.higher_is_better = false;
  t.baseline = 400;
  t.current = 410;
  t.tasks = t.scope_tasks = 8;
  t.delta = t.suite_delta = 2.5;
  t.delta_interval = {0.5, 4.5};
  t.p_value = 0.25;
  t.min_p = 1.0 / 256;
  t.test = "sign-flip exact over 8 paired tasks";
  v.metrics = {s, t};

  TaskDiff bad;
  bad.id = "evil\n::set-output name=x::y ::add-mask:: </testcase>&";
  bad.scenario = "geo<&>";
  bad.c_b = 3;
  bad.n_b = 3;
  bad.c_a = 0;
  bad.n_a = 3;
  bad.flipped = bad.regressed = true;
  bad.p_value = 0.05;
  bad.q_value = 0.1;
  bad.failing_checks = {"mentions Paris: got\n::error::pwned"};
  bad.answer_excerpt = "key " + k_canary + "\r\n::stop-commands::x\n::" + k_token + "::\nbad\xff";
  bad.input = "system: shared prompt\n\nuser: Capital of <France>? key " + k_canary + " ]]> &\x01";
  bad.first_divergence = 2;
  TaskDiff good;
  good.id = "math-2";
  good.c_b = 0;
  good.n_b = 3;
  good.c_a = 3;
  good.n_a = 3;
  good.fixed = true;
  good.p_value = 0.05;
  good.q_value = 0.1;
  v.tasks = {bad, good};
  v.added = {"new-1"};
  v.removed = {"old-1"};
  v.paired = 8;
  v.unchanged_inputs = 3;
  v.affected = 5;
  v.flips = 1;
  v.regressed = 1;
  v.fixed = 1;
  v.scenarios = {{"geo", 1.0, 0.5, 4}};
  return v;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

} // namespace

TEST_CASE("verdict json: every field, stable order, nulls for absent values") {
  register_secret(k_canary);
  std::string text = render::verdict_json(sample());
  CHECK(valid_utf8(text));
  CHECK_FALSE(contains_secret(text));
  auto lines = lines_of(text);
  REQUIRE(lines.size() > 10);
  CHECK(lines[0] == "{");
  CHECK(lines[1] == R"("schema":"gate.verdict/1",)");
  CHECK(lines[2] == R"("status":"failed",)");
  CHECK(lines[3] == R"("passed":false,)");
  CHECK(lines[4] == R"("exit":1,)");
  // The metric rows one per line, keys in declaration order.
  CHECK(
      text.find(
          "\n{\"key\":\"tokens_per_task\",\"name\":\"tokens per "
          "task\",\"unit\":\"%\",\"value_unit\":\"tokens\",\"available\":true,\"unavailable\":\"\","
          "\"baseline\":400,\"current\":410,\"tasks\":8,\"suite_delta\":2.5,\"delta\":2.5,\"scope_tasks\":8,"
          "\"k\":null,\"delta_interval\":{\"low\":0.5,\"high\":4.5},"
          "\"higher_is_better\":false,\"threshold\":null,\"p_value\":0.25,\"p_adjusted\":null,\"noise_"
          "floor\":null,\"min_p\":0.00390625,"
          "\"test\":\"sign-flip exact over 8 paired tasks\",\"gated\":false,\"crossed\":false,"
          "\"significant\":false,\"failed\":false,\"inconclusive\":false}\n") != std::string::npos);

  boost::json::value doc = json::parse_strict(text, "verdict.json");
  const auto& o = doc.as_object();
  std::vector<std::string> keys;
  for (const auto& kv : o)
    keys.emplace_back(kv.key());
  CHECK(keys == std::vector<std::string>{"schema",
                                         "status",
                                         "passed",
                                         "exit",
                                         "headline",
                                         "reasons",
                                         "inconclusive",
                                         "warnings",
                                         "baseline_suite",
                                         "current_suite",
                                         "alpha",
                                         "max_new_failures",
                                         "paired",
                                         "unchanged_inputs",
                                         "affected",
                                         "rerecorded",
                                         "fingerprints_known",
                                         "coverage",
                                         "unmeasured",
                                         "flips",
                                         "regressed",
                                         "fixed",
                                         "became_flaky",
                                         "became_stable",
                                         "metrics",
                                         "tasks",
                                         "added",
                                         "added_runs",
                                         "removed",
                                         "route_diff",
                                         "scenarios",
                                         "confirmation"});
  CHECK(o.at("max_new_failures").as_int64() == 3);
  CHECK(o.at("current_suite").at("version").as_string() == "2");
  CHECK(o.at("metrics").at(0).at("threshold").to_number<double>() == 2.0);
  CHECK(o.at("metrics").at(0).at("delta_interval").at("low").as_double() == -20.25);
  const auto& t0 = o.at("tasks").at(0).as_object();
  CHECK(t0.at("id").as_string() == "evil\n::set-output name=x::y ::add-mask:: </testcase>&");
  CHECK(t0.at("first_divergence").as_int64() == 2);
  CHECK(t0.at("failing_checks").at(0).as_string() == "mentions Paris: got\n::error::pwned");
  std::string answer(o.at("tasks").at(0).at("answer_excerpt").as_string());
  CHECK(answer.find("[REDACTED]") != std::string::npos);
  CHECK(answer.find("\xEF\xBF\xBD") != std::string::npos); // the invalid byte became U+FFFD
  CHECK(o.at("tasks").at(1).at("first_divergence").is_null());
  // The question, not the shared system prompt; redacted; "" when unknown.
  CHECK(t0.at("input_excerpt").as_string() == "user: Capital of <France>? key [REDACTED] ]]> &\x01");
  CHECK(o.at("tasks").at(1).at("input_excerpt").as_string() == "");
  CHECK(o.at("scenarios").at(0).at("current").as_double() == 0.5);

  Verdict passing;
  std::string p = render::verdict_json(passing);
  auto pd = json::parse_strict(p, "passing.json").as_object();
  CHECK(pd.at("max_new_failures").is_null());
  CHECK(pd.at("tasks").as_array().empty());
  CHECK(p.find("\"tasks\":[],") != std::string::npos);
}

TEST_CASE("verdict junit: one case per metric and listed task, well-formed") {
  Verdict v = sample();
  std::string xml = render::verdict_junit(v);
  CHECK(valid_utf8(xml));
  CHECK_FALSE(contains_secret(xml));
  boost::property_tree::ptree tree;
  std::istringstream in(xml);
  REQUIRE_NOTHROW(boost::property_tree::read_xml(in, tree));
  const auto& suite = tree.get_child("testsuites.testsuite");
  CHECK(suite.get<std::string>("<xmlattr>.name") == "gate compare");
  // The decision + 2 metrics + 2 tasks; failures: the verdict, the failed
  // metric and the regressed task.
  CHECK(suite.get<int>("<xmlattr>.tests") == 5);
  CHECK(suite.get<int>("<xmlattr>.failures") == 3);
  std::vector<std::string> names;
  int failures = 0;
  for (const auto& [tag, child] : suite) {
    if (tag != "testcase") continue;
    names.push_back(child.get<std::string>("<xmlattr>.name"));
    failures += child.count("failure") > 0;
  }
  CHECK(failures == 3);
  REQUIRE(names.size() == 5);
  CHECK(names[0] == "decision");
  CHECK(names[1] == "metric: success rate");
  CHECK(names[2] == "metric: tokens per task");
  // The XML parser decodes &#10; back into the newline of the id.
  CHECK(names[3] == "evil\n::set-output name=x::y ::add-mask:: </testcase>&");
  CHECK(names[4] == "math-2");
  CHECK(xml.find("message=\"regressed: 3/3 -&gt; 0/3 runs passed\"") != std::string::npos);
  // The regressed task's body says what it asked, escaped for XML.
  CHECK(xml.find("input: user: Capital of &lt;France&gt;? key [REDACTED] ]]&gt; &amp;\xEF\xBF\xBD\n") !=
        std::string::npos);
  CHECK(xml.find("message=\"success rate -12.5 pp crossed its threshold and is significant\"") !=
        std::string::npos);
}

TEST_CASE("annotations: rel-36, untrusted text cannot start a workflow command") {
  register_secret(k_canary);
  Verdict v = sample();
  std::string out = render::github_annotations(v, k_token);
  CHECK_FALSE(contains_secret(out));
  std::vector<std::string> commands;
  for (const auto& line : lines_of(out))
    if (line.rfind("::", 0) == 0) commands.push_back(line);
  REQUIRE(commands.size() == 4);
  CHECK(commands[0] ==
        "::error title=gate::gate failed: success rate fell 12.5pp (threshold 2.0pp, p=0.012 adjusted)");
  // The id's newline is %0A: the line goes on, and "::set-output" is text.
  CHECK(commands[1] == "::error title=gate::task evil%0A::set-output name=x::y ::add-mask:: </testcase>& "
                       "regressed: 3/3 → 0/3 runs passed (q=0.100)");
  CHECK(commands[2] == "::stop-commands::" + k_token);
  CHECK(commands[3] == "::" + k_token + "::");
  CHECK(out.substr(out.size() - commands[3].size() - 1) == commands[3] + "\n");
  // The free text sits inside the block, one line each, the token defused.
  std::size_t open = out.find(commands[2]);
  std::size_t answer =
      out.find("gate: task evil ::set-output name=x::y ::add-mask:: </testcase>&: answer: key "
               "[REDACTED]  ::stop-commands::x ::[stop token]:: bad\xEF\xBF\xBD\n");
  CHECK(answer != std::string::npos);
  CHECK(answer > open);
  CHECK(out.find("gate: warning: routes differ: model: m-1 → m-2\n") > open);
  CHECK(out.find("failing check: mentions Paris: got ::error::pwned\n") > open);
}

TEST_CASE("annotations: escaping per GitHub's rules") {
  // % first, so the escapes themselves are not escaped again.
  CHECK(render::escape_command_data("50% a\r\nb:c,d") == "50%25 a%0D%0Ab:c,d");
  CHECK(render::escape_command_property("50% a\r\nb:c,d") == "50%25 a%0D%0Ab%3Ac%2Cd");
  CHECK(render::escape_command_data("%0A") == "%250A");
}

TEST_CASE("annotations: the task lines are capped, the rest counted") {
  Verdict v;
  v.status = gate::compare::Status::failed;
  for (int i = 0; i < 60; ++i) {
    TaskDiff t;
    t.id = "t" + std::to_string(i);
    t.regressed = true;
    t.q_value = 0.0004;
    v.tasks.push_back(t);
  }
  std::string out = render::github_annotations(v, k_token);
  std::size_t errors = 0;
  for (const auto& line : lines_of(out))
    errors += line.rfind("::error ", 0) == 0;
  // 50 task lines + one line for the other 60 − 50 = 10.
  CHECK(errors == render::k_max_task_annotations + 1);
  CHECK(out.find("::error title=gate::task t0 regressed: 0/0 → 0/0 runs passed (q<0.001)\n") !=
        std::string::npos);
  CHECK(out.find("::error title=gate::… and 10 more regressed tasks") != std::string::npos);
}

TEST_CASE("annotations: a confirmed regression is an error even when no row or task failed") {
  Verdict v;
  v.status = gate::compare::Status::failed;
  gate::compare::Confirmation c;
  c.state = gate::compare::Confirmation::State::confirmed;
  c.p_value = 0.0025;
  c.level = 0.05 / 3;
  c.tasks = {{"a\n::set-output x", 3, 3, 0, 3, true}, {"b", 2, 3, 2, 3, false}};
  v.confirmation = c;
  // As compare words it (gate/compare/confirm.cpp).
  v.reasons = {
      "confirmed by 2 tasks × 3 fresh runs per side (stratified exact p 0.003 ≤ level 0.017): worse on "
      "a\n::set-output x"};
  const std::string out = render::github_annotations(v, k_token);
  CHECK(out.find("::error title=gate::gate failed: confirmed by 2 tasks × 3 fresh runs per side (stratified "
                 "exact p 0.003 ≤ level 0.017): worse on a%0A::set-output x\n") != std::string::npos);
  // Dismissed: nothing to annotate.
  v.confirmation->state = gate::compare::Confirmation::State::dismissed;
  v.status = gate::compare::Status::passed;
  CHECK(render::github_annotations(v, k_token).find("confirmed") == std::string::npos);
}

TEST_CASE("confirmation tokens: unknown usage is n/a and null, never 0") {
  Verdict v;
  gate::compare::Confirmation c;
  c.state = gate::compare::Confirmation::State::dismissed;
  c.runs = 3;
  c.calls = 12;
  c.tasks = {{"a", 2, 3, 2, 3, false}};
  v.confirmation = c;
  auto json_tokens = [&] {
    return boost::json::parse(render::verdict_json(v)).at("confirmation").at("tokens");
  };
  CHECK(json_tokens().is_null());
  CHECK(render::verdict_markdown(v, {65536, "r.json"}).find("12 of at most 0 calls, n/a tokens") !=
        std::string::npos);
  v.confirmation->tokens = 0; // replayed confirmation runs: no fresh call, truly 0
  CHECK(json_tokens().as_int64() == 0);
  CHECK(render::verdict_markdown(v, {65536, "r.json"}).find("calls, 0 tokens") != std::string::npos);
}

TEST_CASE("confirmation: runs that errored are never 'dismissed' in any form") {
  using State = gate::compare::Confirmation::State;
  Verdict v;
  v.status = gate::compare::Status::inconclusive;
  gate::compare::Confirmation c;
  c.runs = 3;
  c.calls = 12;
  c.errored = 4;
  c.error = "HTTP 500 <b>";
  c.p_value = 1;
  c.level = 0.05 / 3;
  c.tasks = {{"a", 1, 3, 1, 3, false}};
  v.confirmation = c;
  auto junit = [&] {
    boost::property_tree::ptree tree;
    std::istringstream in(render::verdict_junit(v));
    boost::property_tree::read_xml(in, tree);
    return tree;
  };
  struct Row {
    State state;
    gate::compare::Status status;
    std::string markdown, json_state, junit_child;
    int errors, skipped;
  };
  for (const Row& r : {Row{State::incomplete, gate::compare::Status::inconclusive,
                           "**Incomplete: 4 fresh runs errored (HTTP 500 &lt;b&gt;); the doubt stands**",
                           "incomplete", "skipped", 0, 2},
                       Row{State::unmeasured, gate::compare::Status::unmeasured,
                           "**Could not measure: 4 fresh runs errored (HTTP 500 &lt;b&gt;)**",
                           "could not measure", "error", 2, 0}}) {
    CAPTURE(r.json_state);
    v.status = r.status;
    v.confirmation->state = r.state;
    const std::string md = render::verdict_markdown(v, {65536, "r.json"});
    CHECK(md.find(r.markdown) != std::string::npos);
    CHECK(md.find("Dismissed") == std::string::npos);
    const auto json = boost::json::parse(render::verdict_json(v)).at("confirmation");
    CHECK(json.at("state").as_string() == r.json_state);
    CHECK(json.at("errored").as_int64() == 4);
    CHECK(json.at("error").as_string() == "HTTP 500 <b>");
    const auto tree = junit();
    const auto& suite = tree.get_child("testsuites.testsuite");
    CHECK(suite.get<int>("<xmlattr>.errors") == r.errors);
    CHECK(suite.get<int>("<xmlattr>.skipped") == r.skipped);
    bool found = false;
    for (const auto& [tag, tc] : suite)
      if (tag == "testcase" && tc.get<std::string>("<xmlattr>.name") == "confirmation") {
        found = true;
        CHECK(tc.count(r.junit_child) == 1);
        CHECK(tc.count("system-out") == 0);
      }
    CHECK(found);
  }
}

TEST_CASE("annotations: the stop token is random and checked") {
  std::string a = render::random_stop_token(), b = render::random_stop_token();
  CHECK(a.size() == 32);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);
  CHECK_THROWS_AS(render::github_annotations(sample(), ""), std::invalid_argument);
  CHECK_THROWS_AS(render::github_annotations(sample(), "short"), std::invalid_argument);
  CHECK_THROWS_AS(render::github_annotations(sample(), "0123456789abcdef::x"), std::invalid_argument);
}

#include <gate/render/verdict_json.hpp>

#include <optional>
#include <vector>

#include <gate/render/escape.hpp>
#include <gate/report/report.hpp>
#include <gate/util/json_writer.hpp>
#include <gate/util/text.hpp>

namespace gate::render {

namespace {

constexpr std::size_t k_excerpt_bytes = 200; // as answer_excerpt (compare/compare.hpp)

using compare::MetricRow;
using compare::ScenarioRow;
using compare::TaskDiff;
using compare::Verdict;

using json::Layout;
using json::Writer;

void suite(const report::SuiteInfo& s, Writer& o) {
  o.begin_object();
  o.str("name", s.name);
  o.str("version", s.version);
  o.str("sha256", s.sha256);
  o.end_object();
}

void metric(const MetricRow& r, Writer& o) {
  o.begin_object();
  o.str("key", r.key);
  o.str("name", r.name);
  o.str("unit", r.unit);
  o.str("value_unit", r.value_unit);
  o.boolean("available", r.available);
  o.str("unavailable", r.unavailable);
  o.num("baseline", r.baseline);
  o.num("current", r.current);
  o.integer("tasks", r.tasks);
  o.num("suite_delta", r.suite_delta);
  o.num("delta", r.delta);
  o.integer("scope_tasks", r.scope_tasks);
  o.integer("k", r.k);
  o.key("delta_interval").begin_object();
  o.num("low", r.delta_interval.low).num("high", r.delta_interval.high).end_object();
  o.boolean("higher_is_better", r.higher_is_better);
  o.num("threshold", r.threshold);
  o.num("p_value", r.p_value);
  o.num("p_adjusted", r.p_adjusted);
  o.num("noise_floor", r.noise_floor);
  o.num("min_p", r.min_p);
  o.str("test", r.test);
  o.boolean("gated", r.gated);
  o.boolean("crossed", r.crossed);
  o.boolean("significant", r.significant);
  o.boolean("failed", r.failed);
  o.boolean("inconclusive", r.inconclusive);
  o.end_object();
}

void task(const TaskDiff& t, Writer& o) {
  o.begin_object();
  o.str("id", t.id);
  o.str("scenario", t.scenario);
  o.integer("c_b", t.c_b);
  o.integer("n_b", t.n_b);
  o.integer("c_a", t.c_a);
  o.integer("n_a", t.n_a);
  o.boolean("flipped", t.flipped);
  o.boolean("regressed", t.regressed);
  o.boolean("fixed", t.fixed);
  o.boolean("became_flaky", t.became_flaky);
  o.boolean("became_stable", t.became_stable);
  o.boolean("stable_failing", t.stable_failing);
  o.boolean("inputs_unchanged", t.inputs_unchanged);
  o.boolean("rerecorded", t.rerecorded);
  o.boolean("grader_change", t.grader_change);
  o.num("p_value", t.p_value);
  o.num("q_value", t.q_value);
  o.strings("failing_checks", t.failing_checks);
  // What the task asked, beside what came back, cut as the Markdown
  // verdict cuts it.
  o.str("input_excerpt", truncate_utf8(question_excerpt(t.input), k_excerpt_bytes));
  o.str("answer_excerpt", t.answer_excerpt);
  o.integer("first_divergence", t.first_divergence);
  o.end_object();
}

void scenario(const ScenarioRow& s, Writer& o) {
  o.begin_object();
  o.str("scenario", s.scenario);
  o.num("baseline", s.baseline);
  o.num("current", s.current);
  o.integer("tasks", s.tasks);
  o.end_object();
}

// "[\n{…},\n{…}\n]": one element per line.
template <typename T, typename F> void lines(const std::vector<T>& items, F write, Writer& o) {
  o.begin_array(Layout::lines);
  for (const auto& item : items)
    write(item, o);
  o.end_array();
}

void confirmed_task(const compare::ConfirmedTask& t, Writer& o) {
  o.begin_object();
  o.str("id", t.id);
  o.integer("baseline_passed", t.baseline_passed);
  o.integer("baseline_runs", t.baseline_runs);
  o.integer("current_passed", t.current_passed);
  o.integer("current_runs", t.current_runs);
  o.boolean("worse", t.worse);
  o.end_object();
}

void confirmation(const compare::Confirmation& c, Writer& o) {
  o.begin_object();
  o.str("state", compare::to_string(c.state));
  o.integer("runs", c.runs);
  o.integer("max_calls", c.max_calls);
  o.integer("planned_calls", c.planned_calls);
  o.integer("calls", c.calls);
  o.integer("errored", c.errored);
  o.str("error", c.error);
  o.integer("tokens", c.tokens);
  o.num("p_value", c.p_value);
  o.num("level", c.level);
  lines(c.tasks, confirmed_task, o.key("tasks"));
  o.strings("left_out", c.left_out);
  o.strings("missing", c.missing);
  o.str("command", c.command);
  o.end_object();
}

void cost_side(const compare::CostSide& c, Writer& o) {
  o.begin_object();
  o.boolean("priced", c.priced);
  o.num("paid_usd", c.paid);
  o.num("cached_usd", c.cached);
  o.end_object();
}

} // namespace

std::string verdict_json(const Verdict& v) {
  std::string out;
  out.reserve(4096 + v.tasks.size() * 400);
  {
    Writer o(out);
    o.begin_object(Layout::lines);
    o.str("schema", k_verdict_schema);
    o.str("status", compare::to_string(v.status));
    o.boolean("passed", v.passed());
    o.integer("exit", static_cast<int>(v.exit));
    o.str("headline", v.headline);
    o.strings("reasons", v.reasons);
    o.strings("inconclusive", v.inconclusive);
    o.strings("warnings", v.warnings);
    suite(v.baseline_suite, o.key("baseline_suite"));
    suite(v.current_suite, o.key("current_suite"));
    o.num("alpha", v.alpha);
    o.integer("max_new_failures", v.max_new_failures);
    o.integer("paired", v.paired);
    o.integer("unchanged_inputs", v.unchanged_inputs);
    o.integer("affected", v.affected);
    o.integer("rerecorded", v.rerecorded);
    o.boolean("fingerprints_known", v.fingerprints_known);
    o.str("coverage", v.coverage);
    o.strings("unmeasured", v.unmeasured);
    o.integer("flips", v.flips);
    o.integer("regressed", v.regressed);
    o.integer("fixed", v.fixed);
    o.integer("became_flaky", v.became_flaky);
    o.integer("became_stable", v.became_stable);
    lines(v.metrics, metric, o.key("metrics"));
    lines(v.tasks, task, o.key("tasks"));
    o.strings("added", v.added);
    o.key("added_runs");
    o.begin_array();
    for (const auto& r : v.added_runs) {
      o.begin_object();
      o.integer("passed", r.passed);
      o.integer("runs", r.runs);
      o.end_object();
    }
    o.end_array();
    o.strings("removed", v.removed);
    o.strings("route_diff", v.route_diff);
    lines(v.scenarios, scenario, o.key("scenarios"));
    if (v.confirmation)
      confirmation(*v.confirmation, o.key("confirmation"));
    else
      o.key("confirmation").null();
    if (v.cost) {
      // Only with a pricing table on a side: other verdicts keep their bytes.
      o.key("cost").begin_object();
      cost_side(v.cost->baseline, o.key("baseline"));
      cost_side(v.cost->current, o.key("current"));
      o.end_object();
    }
    o.end_object();
  }
  out += '\n';
  return out;
}

} // namespace gate::render

#include <gate/render/verdict_json.hpp>

#include <optional>
#include <vector>

#include <gate/render/escape.hpp>
#include <gate/report/report.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::render {

namespace {

constexpr std::size_t k_excerpt_bytes = 200; // as answer_excerpt (compare/compare.hpp)

using compare::MetricRow;
using compare::ScenarioRow;
using compare::TaskDiff;
using compare::Verdict;

// Writes one JSON object's members in call order; a `multiline` object puts
// each member on its own line.
class Object {
public:
  explicit Object(std::string& out, bool multiline = false) : out_(out), multiline_(multiline) {
    out_ += '{';
  }
  ~Object() { out_ += multiline_ && !first_ ? "\n}" : "}"; }
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  std::string& key(std::string_view k) {
    if (!first_) out_ += ',';
    if (multiline_) out_ += '\n';
    first_ = false;
    json::append_quoted(k, out_);
    out_ += ':';
    return out_;
  }
  void str(std::string_view k, std::string_view v) { append_string(v, key(k)); }
  void num(std::string_view k, double v) { json::append_number(v, key(k)); }
  void integer(std::string_view k, std::int64_t v) { key(k) += std::to_string(v); }
  void boolean(std::string_view k, bool v) { key(k) += v ? "true" : "false"; }
  void opt(std::string_view k, const std::optional<double>& v) {
    if (v)
      num(k, *v);
    else
      key(k) += "null";
  }
  void strings(std::string_view k, const std::vector<std::string>& v) {
    std::string& o = key(k);
    o += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i > 0) o += ',';
      append_string(v[i], o);
    }
    o += ']';
  }

  static void append_string(std::string_view v, std::string& out) {
    json::append_quoted(to_valid_utf8(redact(v)), out);
  }

private:
  std::string& out_;
  bool multiline_;
  bool first_ = true;
};

void suite(const report::SuiteInfo& s, std::string& out) {
  Object o(out);
  o.str("name", s.name);
  o.str("version", s.version);
  o.str("sha256", s.sha256);
}

void metric(const MetricRow& r, std::string& out) {
  Object o(out);
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
  if (r.k)
    o.integer("k", *r.k);
  else
    o.key("k") += "null";
  {
    Object i(o.key("delta_interval"));
    i.num("low", r.delta_interval.low);
    i.num("high", r.delta_interval.high);
  }
  o.boolean("higher_is_better", r.higher_is_better);
  o.opt("threshold", r.threshold);
  o.opt("p_value", r.p_value);
  o.opt("p_adjusted", r.p_adjusted);
  o.opt("noise_floor", r.noise_floor);
  o.opt("min_p", r.min_p);
  o.str("test", r.test);
  o.boolean("gated", r.gated);
  o.boolean("crossed", r.crossed);
  o.boolean("significant", r.significant);
  o.boolean("failed", r.failed);
  o.boolean("inconclusive", r.inconclusive);
}

void task(const TaskDiff& t, std::string& out) {
  Object o(out);
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
  if (t.first_divergence)
    o.integer("first_divergence", *t.first_divergence);
  else
    o.key("first_divergence") += "null";
}

void scenario(const ScenarioRow& s, std::string& out) {
  Object o(out);
  o.str("scenario", s.scenario);
  o.num("baseline", s.baseline);
  o.num("current", s.current);
  o.integer("tasks", s.tasks);
}

// "[\n{…},\n{…}\n]": one element per line.
template <typename T, typename F> void lines(const std::vector<T>& items, F write, std::string& out) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += i == 0 ? "\n" : ",\n";
    write(items[i], out);
  }
  out += items.empty() ? "]" : "\n]";
}

void confirmed_task(const compare::ConfirmedTask& t, std::string& out) {
  Object o(out);
  o.str("id", t.id);
  o.integer("baseline_passed", t.baseline_passed);
  o.integer("baseline_runs", t.baseline_runs);
  o.integer("current_passed", t.current_passed);
  o.integer("current_runs", t.current_runs);
  o.boolean("worse", t.worse);
}

void confirmation(const compare::Confirmation& c, std::string& out) {
  Object o(out);
  o.str("state", compare::to_string(c.state));
  o.integer("runs", c.runs);
  o.integer("max_calls", c.max_calls);
  o.integer("planned_calls", c.planned_calls);
  o.integer("calls", c.calls);
  if (c.tokens)
    o.integer("tokens", *c.tokens);
  else
    o.key("tokens") += "null";
  o.num("p_value", c.p_value);
  o.num("level", c.level);
  lines(c.tasks, confirmed_task, o.key("tasks"));
  o.strings("left_out", c.left_out);
  o.strings("missing", c.missing);
  o.str("command", c.command);
}

} // namespace

std::string verdict_json(const Verdict& v) {
  std::string out;
  out.reserve(4096 + v.tasks.size() * 400);
  {
    Object o(out, true);
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
    if (v.max_new_failures)
      o.integer("max_new_failures", *v.max_new_failures);
    else
      o.key("max_new_failures") += "null";
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
    o.strings("removed", v.removed);
    o.strings("route_diff", v.route_diff);
    lines(v.scenarios, scenario, o.key("scenarios"));
    if (v.confirmation)
      confirmation(*v.confirmation, o.key("confirmation"));
    else
      o.key("confirmation") += "null";
  }
  out += '\n';
  return out;
}

} // namespace gate::render

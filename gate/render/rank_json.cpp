#include <gate/render/rank_output.hpp>

#include <gate/report/report.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::render {

namespace {

// A JSON string literal of untrusted text: secrets redacted, valid UTF-8.
std::string quoted(const std::string& text) {
  std::string out;
  json::append_quoted(to_valid_utf8(redact(text)), out);
  return out;
}

// Keys and values of one JSON object, in the order they are added.
class Object {
public:
  Object& text(const char* key, const std::string& v) { return raw(key, quoted(v)); }
  Object& number(const char* key, double v) {
    open(key);
    json::append_number(v, out_);
    return *this;
  }
  Object& number(const char* key, const std::optional<double>& v) {
    if (!v) return raw(key, "null");
    return number(key, *v);
  }
  Object& integer(const char* key, std::int64_t v) { return raw(key, std::to_string(v)); }
  Object& boolean(const char* key, bool v) { return raw(key, v ? "true" : "false"); }
  Object& raw(const char* key, const std::string& json) {
    open(key);
    out_ += json;
    return *this;
  }
  std::string done() { return out_ + "}"; }

private:
  void open(const char* key) {
    out_ += out_.size() > 1 ? "," : "";
    json::append_quoted(key, out_);
    out_ += ':';
  }
  std::string out_ = "{";
};

std::string texts(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& s : items) {
    if (out.size() > 1) out += ',';
    out += quoted(s);
  }
  return out + "]";
}

std::string interval(const metrics::Interval& i) {
  return Object().number("low", i.low).number("high", i.high).done();
}

std::string moves(const std::vector<rank::TaskMove>& list) {
  std::string out = "[";
  for (const auto& m : list)
    out += (out.size() > 1 ? "," : "") + Object()
                                             .text("id", m.id)
                                             .text("scenario", m.scenario)
                                             .number("delta_elo", m.delta_elo)
                                             .number("anchor_rate", m.anchor_rate)
                                             .number("rate", m.rate)
                                             .done();
  return out + "]";
}

std::string strategy(const rank::StrategyResult& s) {
  std::string scenarios = "[";
  for (const auto& sc : s.scenarios)
    scenarios += (scenarios.size() > 1 ? "," : "") + Object()
                                                         .text("scenario", sc.scenario)
                                                         .integer("tasks", sc.tasks)
                                                         .number("mean_delta_elo", sc.mean_delta_elo)
                                                         .done();
  scenarios += "]";
  return Object()
      .text("name", s.name)
      .text("file", s.file)
      .boolean("anchor", s.anchor)
      .boolean("complete", s.complete)
      .integer("tasks", s.tasks)
      .integer("scored_tasks", s.scored_tasks)
      .number("tokens_per_task", s.tokens_per_task)
      .integer("runs_without_usage", s.runs_without_usage)
      .number("success_rate", s.success_rate)
      .raw("success_interval", interval(s.success_interval))
      .raw("games", Object().integer("won", s.won).integer("drawn", s.drawn).integer("lost", s.lost).done())
      .number("elo", s.elo)
      .raw("elo_interval", interval(s.elo_interval))
      .number("delta_elo", s.delta_elo)
      .number("delta_elo_per_1k_tokens", s.delta_elo_per_1k)
      .number("step_gain", s.step_gain)
      .raw("step_interval", s.step_interval ? interval(*s.step_interval) : "null")
      .number("marginal_delta_elo_per_1k_tokens", s.marginal_per_1k)
      .raw("per_task", Object()
                           .integer("tasks", s.per_task_tasks)
                           .number("mean_elo", s.per_task_mean)
                           .number("sd_elo", s.per_task_sd)
                           .raw("gains", moves(s.gains))
                           .raw("losses", moves(s.losses))
                           .raw("scenarios", scenarios)
                           .done())
      .raw("only_scenario", s.only_scenario ? quoted(*s.only_scenario) : "null")
      .done();
}

} // namespace

std::string rank_json(const rank::Ranking& r) {
  std::string list = "[\n";
  for (std::size_t i = 0; i < r.strategies.size(); ++i)
    list += strategy(r.strategies[i]) + (i + 1 < r.strategies.size() ? ",\n" : "\n");
  list += "]";
  return Object()
             .text("schema", "gate.rank/1")
             .raw("suite", Object()
                               .text("name", r.suite_name)
                               .text("version", r.suite_version)
                               .text("sha256", r.suite_sha256)
                               .done())
             .text("anchor", r.anchor)
             .text("order", r.order == rank::BudgetOrder::tokens ? "tokens" : "given")
             .raw("seed", std::to_string(r.seed))
             .integer("bootstrap", r.bootstrap)
             .integer("tasks", r.tasks)
             .integer("games", r.games)
             .raw("verdict", Object().text("text", r.verdict).text("reason", r.verdict_reason).done())
             .raw("prior", Object()
                               .boolean("cross_task", r.prior)
                               .raw("unbeaten", texts(r.unbeaten))
                               .raw("winless", texts(r.winless))
                               .integer("per_task_fits", r.per_task_prior)
                               .integer("bootstrap_resamples", r.bootstrap_prior)
                               .done())
             .boolean("converged", r.converged)
             .raw("tasks_without_anchor", texts(r.tasks_without_anchor))
             .raw("tasks_without_games", texts(r.tasks_without_games))
             .raw("strategies", list)
             .done() +
         "\n";
}

} // namespace gate::render

#include <gate/render/rank_output.hpp>

#include <gate/report/report.hpp>
#include <gate/util/json_writer.hpp>

namespace gate::render {

namespace {

using json::Layout;
using json::Writer;

void interval(const metrics::Interval& i, Writer& o) {
  o.begin_object().num("low", i.low).num("high", i.high).end_object();
}

void moves(const std::vector<rank::TaskMove>& list, Writer& o) {
  o.begin_array();
  for (const auto& m : list)
    o.begin_object()
        .str("id", m.id)
        .str("scenario", m.scenario)
        .num("delta_elo", m.delta_elo)
        .num("anchor_rate", m.anchor_rate)
        .num("rate", m.rate)
        .end_object();
  o.end_array();
}

void strategy(const rank::StrategyResult& s, Writer& o) {
  o.begin_object()
      .str("name", s.name)
      .str("file", s.file)
      .boolean("anchor", s.anchor)
      .boolean("complete", s.complete)
      .integer("tasks", s.tasks)
      .integer("scored_tasks", s.scored_tasks)
      .num("tokens_per_task", s.tokens_per_task)
      .integer("runs_without_usage", s.runs_without_usage)
      .num("success_rate", s.success_rate);
  interval(s.success_interval, o.key("success_interval"));
  o.key("games").begin_object().integer("won", s.won).integer("drawn", s.drawn).integer("lost", s.lost);
  o.end_object().num("elo", s.elo);
  interval(s.elo_interval, o.key("elo_interval"));
  o.num("delta_elo", s.delta_elo)
      .num("delta_elo_per_1k_tokens", s.delta_elo_per_1k)
      .num("step_gain", s.step_gain);
  if (s.step_interval)
    interval(*s.step_interval, o.key("step_interval"));
  else
    o.key("step_interval").null();
  o.num("marginal_delta_elo_per_1k_tokens", s.marginal_per_1k);
  o.key("per_task")
      .begin_object()
      .integer("tasks", s.per_task_tasks)
      .num("mean_elo", s.per_task_mean)
      .num("sd_elo", s.per_task_sd);
  moves(s.gains, o.key("gains"));
  moves(s.losses, o.key("losses"));
  o.key("scenarios").begin_array();
  for (const auto& sc : s.scenarios)
    o.begin_object()
        .str("scenario", sc.scenario)
        .integer("tasks", sc.tasks)
        .num("mean_delta_elo", sc.mean_delta_elo)
        .end_object();
  o.end_array().end_object();
  if (s.only_scenario)
    o.str("only_scenario", *s.only_scenario);
  else
    o.key("only_scenario").null();
  o.end_object();
}

} // namespace

std::string rank_json(const rank::Ranking& r) {
  std::string out;
  Writer o(out);
  o.begin_object().str("schema", "gate.rank/1");
  o.key("suite")
      .begin_object()
      .str("name", r.suite_name)
      .str("version", r.suite_version)
      .str("sha256", r.suite_sha256)
      .end_object();
  o.str("anchor", r.anchor)
      .str("order", r.order == rank::BudgetOrder::tokens ? "tokens" : "given")
      .key("seed")
      .unsigned_integer(r.seed)
      .integer("bootstrap", r.bootstrap)
      .integer("tasks", r.tasks)
      .integer("games", r.games);
  o.key("verdict").begin_object().str("text", r.verdict).str("reason", r.verdict_reason).end_object();
  o.key("prior")
      .begin_object()
      .boolean("cross_task", r.prior)
      .strings("unbeaten", r.unbeaten)
      .strings("winless", r.winless)
      .integer("per_task_fits", r.per_task_prior)
      .integer("bootstrap_resamples", r.bootstrap_prior)
      .end_object();
  o.boolean("converged", r.converged)
      .strings("tasks_without_anchor", r.tasks_without_anchor)
      .strings("tasks_without_games", r.tasks_without_games);
  o.key("strategies").begin_array(Layout::lines);
  for (const auto& s : r.strategies)
    strategy(s, o);
  o.end_array().end_object();
  out += '\n';
  return out;
}

} // namespace gate::render

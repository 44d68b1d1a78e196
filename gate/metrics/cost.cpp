#include <gate/metrics/cost.hpp>

// METRICS.md "Cost": tokens × price, with absent kept absent.
namespace gate::metrics {

double tokens_cost(const Price& price, std::int64_t prompt_tokens, std::int64_t completion_tokens) {
  return static_cast<double>(prompt_tokens) * price.prompt / 1e6 +
         static_cast<double>(completion_tokens) * price.completion / 1e6;
}

std::optional<double> tokens_cost(const Price& price, std::int64_t prompt_tokens,
                                  std::int64_t completion_tokens, std::optional<std::int64_t> cache_read,
                                  std::optional<std::int64_t> cache_write) {
  if ((price.cached_prompt && !cache_read) || (price.cache_write && !cache_write)) return std::nullopt;
  const std::int64_t read = price.cached_prompt ? *cache_read : 0;
  const std::int64_t written = price.cache_write ? *cache_write : 0;
  double cost = tokens_cost(price, prompt_tokens - read - written, completion_tokens);
  if (price.cached_prompt) cost += static_cast<double>(read) * *price.cached_prompt / 1e6;
  if (price.cache_write) cost += static_cast<double>(written) * *price.cache_write / 1e6;
  return cost;
}

std::optional<double> run_cost(const results::Run& r, const std::string& model, const Pricing& p) {
  if (!r.usage_known) return std::nullopt;
  const auto own = p.models.find(model);
  if (own == p.models.end()) return std::nullopt;
  // The run's counts hold the judge's calls too; those are the grader's
  // tokens, priced at the grader's rates.
  const std::int64_t judge_prompt = r.judge_prompt_tokens, judge_completion = r.judge_completion_tokens;
  const std::optional<double> own_cost =
      tokens_cost(own->second, r.prompt_tokens - judge_prompt, r.completion_tokens - judge_completion,
                  r.cache_read_tokens, r.cache_write_tokens);
  if (!own_cost) return std::nullopt;
  double cost = *own_cost;
  if (judge_prompt + judge_completion > 0) {
    const auto judge = p.models.find(p.judge_model);
    if (judge == p.models.end()) return std::nullopt;
    cost += tokens_cost(judge->second, judge_prompt, judge_completion);
  }
  return cost;
}

std::optional<double> run_cost(const results::Run& r, const results::Route& shared, const Pricing& p) {
  const results::Route& route = r.route.empty() ? shared : r.route;
  const auto model = route.find("model");
  if (model == route.end()) return std::nullopt;
  return run_cost(r, model->second, p);
}

void add_cost(std::optional<double>& sum, const std::optional<double>& cost) {
  if (sum && cost)
    *sum += *cost;
  else
    sum.reset();
}

namespace detail {

void task_cost(const results::Task& t, const Options& o, TaskStats& s) {
  for (const results::Run& r : t.runs) {
    s.recorded_cost = s.recorded_cost || results::recorded_cost(r).has_value();
    s.user_costed = s.user_costed || results::recorded_user_cost(r).has_value();
  }
  s.priced = o.pricing.configured() || s.recorded_cost;
  if (s.n == 0) return;
  if (s.user_costed) {
    s.user_cost_usd = 0.0;
    for (const results::Run& r : t.runs)
      if (!r.errored()) add_cost(s.user_cost_usd, results::recorded_user_cost(r));
  }
  if (!s.priced) return;
  s.cost_usd = 0.0;
  s.cached_cost_usd = 0.0;
  for (const results::Run& r : t.runs) {
    if (r.errored()) continue;
    // A harness's own record of what the run cost wins over gate's estimate.
    add_cost(r.cache_hit ? s.cached_cost_usd : s.cost_usd,
             results::recorded_cost(r) ? results::recorded_cost(r) : run_cost(r, o.routes.shared, o.pricing));
  }
}

void suite_cost(const std::vector<TaskStats>& per_task, const Options& o, SuiteStats& s) {
  for (const TaskStats& ts : per_task) {
    s.recorded_cost = s.recorded_cost || ts.recorded_cost;
    s.user_costed = s.user_costed || ts.user_costed;
  }
  s.priced = o.pricing.configured() || s.recorded_cost;
  bool measured = false;
  s.cost_usd = 0.0;
  s.cached_cost_usd = 0.0;
  s.user_cost_usd = 0.0;
  for (const TaskStats& ts : per_task) {
    if (ts.n == 0) continue; // unmeasured: left out, as from every rate
    measured = true;
    add_cost(s.cost_usd, ts.cost_usd);
    add_cost(s.cached_cost_usd, ts.cached_cost_usd);
    add_cost(s.user_cost_usd, ts.user_cost_usd);
  }
  if (!measured || !s.priced) s.cost_usd.reset(), s.cached_cost_usd.reset();
  if (!measured || !s.user_costed) s.user_cost_usd.reset();
}

} // namespace detail

} // namespace gate::metrics

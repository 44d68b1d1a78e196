#include <gate/run/assemble.hpp>

#include <algorithm>
#include <boost/json/object.hpp>

#include <gate/util/version.hpp>

namespace gate::run {

namespace {

boost::json::value optional_number(const std::optional<double>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}

boost::json::value optional_int(const std::optional<std::int64_t>& v) {
  return v ? boost::json::value(*v) : boost::json::value(nullptr);
}

} // namespace

boost::json::value config_json(const config::Config& c) {
  boost::json::object model{
      {"provider", c.model.provider},
      {"base_url", c.model.base_url},
      {"api_key_env", c.model.api_key_env},
      {"key_alias", c.model.key_alias},
      {"name", c.model.name},
      {"temperature", optional_number(c.model.temperature)},
      {"top_p", optional_number(c.model.top_p)},
      {"seed", optional_int(c.model.seed)},
      {"max_tokens", optional_int(c.model.max_tokens)},
      {"timeout", c.model.timeout_s},
      {"max_retries", c.model.max_retries},
      {"rate_limit_wait_s", c.model.rate_limit_wait_s},
      {"stream", c.model.stream},
      {"requests_per_minute", optional_number(c.model.requests_per_minute)},
      {"tokens_per_minute", optional_number(c.model.tokens_per_minute)},
  };
  boost::json::array ignore;
  for (const auto& p : c.cache.ignore)
    ignore.emplace_back(p);
  const auto& t = c.thresholds;
  boost::json::object thresholds{
      {"max_success_drop_pp", optional_number(t.max_success_drop_pp)},
      {"max_consistency_gap_rise_pp", optional_number(t.max_consistency_gap_rise_pp)},
      {"max_pass_k_drop_pp", optional_number(t.max_pass_k_drop_pp)},
      {"max_token_rise_pct", optional_number(t.max_token_rise_pct)},
      {"max_p95_latency_rise_pct", optional_number(t.max_p95_latency_rise_pct)},
      {"max_error_rate_rise_pp", optional_number(t.max_error_rate_rise_pp)},
      {"max_new_failures", optional_int(t.max_new_failures)},
      {"alpha", t.alpha},
      {"max_errored_runs_pct", t.max_errored_runs_pct},
      {"on_inconclusive", t.on_inconclusive},
  };
  return boost::json::object{
      {"model", std::move(model)},
      {"judge", boost::json::object{{"model", c.judge.model.empty() ? c.model.name : c.judge.model},
                                    {"temperature", optional_number(c.judge.temperature)},
                                    {"max_tokens", c.judge.max_tokens}}},
      {"runs", c.runs},
      {"concurrency", c.concurrency},
      {"token_band_pct", c.token_band_pct},
      {"include_polluted", c.include_polluted},
      {"cache",
       boost::json::object{{"mode", config::to_string(c.cache.mode)}, {"ignore", std::move(ignore)}}},
      {"thresholds", std::move(thresholds)},
  };
}

report::Report assemble(Outcome&& outcome, const suite::Suite& s, const config::Config& c,
                        const std::string& started_at, const std::string& finished_at) {
  report::Report r;
  r.gate_version = k_version;
  r.suite = {s.name, s.version, s.sha256};
  r.config = config_json(c);
  // A partial report says which slice it holds; `gate merge` checks it.
  if (c.shard) r.config.as_object()["shard"] = {{"index", c.shard->index}, {"count", c.shard->count}};
  r.route = configured_route(c);
  r.started_at = started_at;
  r.finished_at = finished_at;
  r.complete = outcome.complete;
  r.incomplete_reason = outcome.incomplete_reason;
  r.tasks = std::move(outcome.tasks);
  std::sort(r.tasks.begin(), r.tasks.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  metrics::Options o;
  o.token_band_pct = c.token_band_pct;
  o.include_polluted = c.include_polluted;
  report::compute(r, o);
  return r;
}

} // namespace gate::run

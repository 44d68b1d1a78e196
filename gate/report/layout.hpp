#pragma once

// The structs a report persists, each described once (described.hpp): the
// writer emits these fields in this order, the reader requires every field
// without a `when`, and docs/report-schema.md lists the same names (a unit
// test keeps them equal).

#include <gate/report/described.hpp>
#include <gate/report/report.hpp>

namespace gate::report::detail {

// Agent fields are optional as a group: the first one read creates it.
inline results::AgentRun& agent_of(results::Run& r) { return r.agent ? *r.agent : r.agent.emplace(); }
inline const results::AgentRun& agent_of(const results::Run& r) { return *r.agent; }
inline results::RecordedCost& recorded_of(results::Run& r) { return results::recorded(r); }
inline const results::RecordedCost& recorded_of(const results::Run& r) { return *r.recorded; }
inline std::string& reason_of(results::CheckResult& c) { return c.reason ? *c.reason : c.reason.emplace(); }
inline const std::string& reason_of(const results::CheckResult& c) { return *c.reason; }
inline std::int64_t& count_of(std::optional<std::int64_t>& n) { return n ? *n : n.emplace(); }
inline const std::int64_t& count_of(const std::optional<std::int64_t>& n) { return *n; }

// A Custom field that its owner writes only sometimes (it decides when).
struct Sometimes {
  template <class S> constexpr bool operator()(const S&) const { return true; }
};

template <> struct Description<SuiteInfo> {
  static constexpr const char* place = ": suite";
  static constexpr auto fields = std::tuple{
      field<Text>("name", &SuiteInfo::name),
      field<Text>("version", &SuiteInfo::version),
      field<Text>("sha256", &SuiteInfo::sha256),
  };
};

template <> struct Description<Resumed> {
  static constexpr const char* place = ": resumed";
  static constexpr auto fields = std::tuple{
      field<Text>("from_started_at", &Resumed::from_started_at),
      field<Count>("runs", &Resumed::runs),
  };
};

template <> struct Description<results::Prompt> {
  static constexpr const char* place = ": prompt ";
  static constexpr auto fields = std::tuple{
      field<Text>("role", &results::Prompt::role),
      field<Text>("name", &results::Prompt::name),
      field<Text>("sha256", &results::Prompt::sha256),
  };
};

template <> struct Description<results::CheckResult> {
  static constexpr const char* place = ": check ";
  static constexpr auto fields = std::tuple{
      field<Text>("label", &results::CheckResult::label),
      field<Flag>("passed", &results::CheckResult::passed),
      field<Text>("detail", &results::CheckResult::detail),
      field_via<Text>(
          "reason", [](auto& c) -> auto& { return reason_of(c); },
          [](const results::CheckResult& c) { return c.reason && !c.reason->empty(); }),
  };
};

template <> struct Description<results::ToolCall> {
  static constexpr const char* place = ": tool call ";
  static constexpr auto fields = std::tuple{
      field<Text>("name", &results::ToolCall::name),
      field<Text>("arguments_sha256", &results::ToolCall::arguments_sha256),
  };
};

template <> struct Description<results::Attempt> {
  static constexpr const char* place = ": attempt ";
  static constexpr auto fields = std::tuple{
      field<Count>("status", &results::Attempt::status),
      field<Text>("bucket", &results::Attempt::bucket),
      field<Millis>("wait_ms", &results::Attempt::wait_ms),
      field<Millis>("latency_ms", &results::Attempt::latency_ms),
      field<Count>("prompt_tokens", &results::Attempt::prompt_tokens),
      field<Count>("completion_tokens", &results::Attempt::completion_tokens),
      field<Flag>("usage_known", &results::Attempt::usage_known),
  };
};

template <> struct Description<results::Run> {
  using R = results::Run;
  static constexpr auto judged = [](const R& r) { return r.judge_calls > 0; };
  static constexpr auto agent = [](const R& r) { return static_cast<bool>(r.agent); };
  // Errors name a run by hand (" run 1"), after its task.
  static constexpr auto fields = std::tuple{
      field<Count>("index", &R::index),
      field<Flag>("passed", &R::passed),
      field<Text>("error", &R::error),
      field<Text>("error_message", &R::error_message),
      field<List>("checks", &R::checks),
      field<Text>("answer", &R::answer),
      field<Flag>("answer_truncated", &R::answer_truncated),
      field<Text>("answer_sha256", &R::answer_sha256),
      field<Count>("prompt_tokens", &R::prompt_tokens),
      field<Count>("completion_tokens", &R::completion_tokens),
      field<Flag>("usage_known", &R::usage_known),
      // Written when the provider reported them: absent is n/a, not 0.
      field_via<Count>(
          "cache_read_tokens", [](auto& r) -> auto& { return count_of(r.cache_read_tokens); },
          [](const R& r) { return r.cache_read_tokens.has_value(); }),
      field_via<Count>(
          "cache_write_tokens", [](auto& r) -> auto& { return count_of(r.cache_write_tokens); },
          [](const R& r) { return r.cache_write_tokens.has_value(); }),
      field<Millis>("latency_ms", &R::latency_ms),
      field<Flag>("cache_hit", &R::cache_hit),
      field<Count>("attempts", &R::attempts),
      field<Text>("fingerprint", &R::fingerprint),
      // Only where it differs from the route most runs used.
      custom<Custom<k_an_object>>("route", Sometimes{}),
      field<List>("tool_calls", &R::tool_calls),
      // What only fresh, streamed or judged runs have; absent otherwise, so
      // a replayed run's line stays short and older files read the same.
      field<Millis>("ttft_ms", &R::ttft_ms, [](const R& r) { return r.ttft_ms > 0; }),
      field<List>("attempt_log", &R::attempt_log, [](const R& r) { return !r.attempt_log.empty(); }),
      field<Count>("judge_calls", &R::judge_calls, judged),
      field<Count>("judge_cache_hits", &R::judge_cache_hits, judged),
      field<Count>("judge_prompt_tokens", &R::judge_prompt_tokens, judged),
      field<Count>("judge_completion_tokens", &R::judge_completion_tokens, judged),
      field_via<Usd>(
          "cost_usd", [](auto& r) -> auto& { return recorded_of(r).agent; },
          [](const R& r) { return results::recorded_cost(r).has_value(); }),
      field_via<Usd>(
          "user_cost_usd", [](auto& r) -> auto& { return recorded_of(r).user; },
          [](const R& r) { return results::recorded_user_cost(r).has_value(); }),
      field_via<ExitCode>(
          "agent_exit_code", [](auto& r) -> auto& { return agent_of(r).exit_code; }, agent),
      field_via<Flag>(
          "agent_timed_out", [](auto& r) -> auto& { return agent_of(r).timed_out; }, agent),
      field_via<Text>(
          "agent_stdout", [](auto& r) -> auto& { return agent_of(r).stdout_excerpt; }, agent),
      field_via<Text>(
          "agent_stderr", [](auto& r) -> auto& { return agent_of(r).stderr_excerpt; }, agent),
      field_via<Text>(
          "final_state_hash", [](auto& r) -> auto& { return agent_of(r).final_state_hash; }, agent),
  };
};

// The stats are written for readers and diffs, never read back (a reader
// recomputes them from the runs): their codecs only write.
template <> struct Description<metrics::Interval> {
  static constexpr auto fields = std::tuple{
      field<Number>("low", &metrics::Interval::low),
      field<Number>("high", &metrics::Interval::high),
  };
};

template <> struct Description<metrics::RateSummary> {
  using S = metrics::RateSummary;
  static constexpr auto fields = std::tuple{
      field<Count>("tasks", &S::tasks),        field<Count>("runs", &S::runs),
      field<Count>("passed", &S::passed),      field<Number>("success_rate", &S::success_rate),
      field<Object>("interval", &S::interval), field<Text>("interval_method", &S::interval_method),
  };
};

template <> struct Description<metrics::Latency> {
  using S = metrics::Latency;
  static constexpr auto fields = std::tuple{
      field<Count>("count", &S::count),
      field<Number>("p50", &S::p50),
      field<Number>("p95", &S::p95),
      field<Number>("max", &S::max),
  };
};

template <> struct Description<metrics::SuiteStats> {
  using S = metrics::SuiteStats;
  static constexpr auto priced = [](const S& s) { return s.priced; };
  static constexpr auto fields = std::tuple{
      field<Object>("overall", &S::overall),
      field<MapOf<Object>>("by_scenario", &S::by_scenario),
      field<MapOf<Object>>("by_difficulty", &S::by_difficulty),
      field<ArrayOf<Number>>("pass_at_k", &S::pass_at_k),
      field<ArrayOf<Number>>("pass_hat_k", &S::pass_hat_k),
      field<Count>("pass_k_tasks", &S::pass_k_tasks),
      field<Count>("pass_k_left_out", &S::pass_k_left_out),
      field<OrNull<Number>>("consistency_gap_pp", &S::consistency_gap_pp),
      field<OrNull<Number>>("mixed_share_pp", &S::mixed_share_pp),
      field<OrNull<Number>>("answer_inconsistency_pp", &S::answer_inconsistency_pp),
      field<OrNull<Number>>("trajectory_inconsistency_pp", &S::trajectory_inconsistency_pp),
      field<OrNull<Number>>("trajectory_similarity", &S::trajectory_similarity),
      field<OrNull<Number>>("group_completion", &S::group_completion),
      field<MapOf<Count>>("first_divergence_histogram", &S::first_divergence_histogram),
      field<OrNull<Count>>("token_band_outliers", &S::token_band_outliers),
      field<OrNull<Count>>("polluted_tasks", &S::polluted_tasks),
      field<MapOf<ArrayOf<Text>>>("route_by_run", &S::route_by_run),
      field<Count>("total_runs", &S::total_runs),
      field<Count>("errored_runs", &S::errored_runs),
      field<Number>("error_rate", &S::error_rate),
      field<MapOf<Count>>("errors_by_bucket", &S::errors_by_bucket),
      field<Count>("prompt_tokens", &S::prompt_tokens),
      field<Count>("completion_tokens", &S::completion_tokens),
      field<Count>("cached_tokens", &S::cached_tokens),
      field<Count>("paid_tokens", &S::paid_tokens),
      field<Number>("tokens_per_task", &S::tokens_per_task),
      field<Count>("runs_without_usage", &S::runs_without_usage),
      field<Count>("cache_hits", &S::cache_hits),
      // Only with a pricing table, so that reports without one keep their bytes.
      field<OrNull<Number>>("cost_usd", &S::cost_usd, priced),
      field<OrNull<Number>>("cached_cost_usd", &S::cached_cost_usd, priced),
      field<OrNull<Number>>("user_cost_usd", &S::user_cost_usd, [](const S& s) { return s.user_costed; }),
      field<Object>("call_latency", &S::call_latency),
      field<Object>("run_latency", &S::run_latency),
  };
};

template <> struct Description<metrics::TaskStats> {
  using S = metrics::TaskStats;
  static constexpr auto priced = [](const S& s) { return s.priced; };
  static constexpr auto fields = std::tuple{
      field<Count>("n", &S::n),
      field<Count>("c", &S::c),
      field<Count>("errored", &S::errored),
      field<Number>("rate", &S::rate),
      field<ArrayOf<Number>>("pass_at_k", &S::pass_at_k),
      field<ArrayOf<Number>>("pass_hat_k", &S::pass_hat_k),
      field<Flag>("mixed", &S::mixed),
      field<Flag>("outcome_consistent", &S::outcome_consistent),
      field<Flag>("answer_consistent", &S::answer_consistent),
      field<Flag>("trajectory_consistent", &S::trajectory_consistent),
      field<OrNull<Number>>("trajectory_similarity", &S::trajectory_similarity),
      field<OrNull<Count>>("first_divergence", &S::first_divergence),
      field<Flag>("route_polluted", &S::route_polluted),
      field<ArrayOf<Text>>("route_diff", &S::route_diff),
      field<ArrayOf<Count>>("token_band_outliers", &S::token_band_outliers),
      field<Count>("prompt_tokens", &S::prompt_tokens),
      field<Count>("completion_tokens", &S::completion_tokens),
      field<Count>("cached_tokens", &S::cached_tokens),
      field<Count>("paid_tokens", &S::paid_tokens),
      field<Flag>("usage_missing", &S::usage_missing),
      field<OrNull<Number>>("cost_usd", &S::cost_usd, priced),
      field<OrNull<Number>>("cached_cost_usd", &S::cached_cost_usd, priced),
      field<OrNull<Number>>("user_cost_usd", &S::user_cost_usd, [](const S& s) { return s.user_costed; }),
  };
};

template <> struct Description<results::Task> {
  using T = results::Task;
  // Written only when known, so that reports without it (imported logs,
  // older files) read and write back the same bytes.
  static constexpr auto has_input = [](const T& t) { return !t.input_sha256.empty(); };
  static constexpr auto fields = std::tuple{
      field<Text>("id", &T::id),
      field<Text>("scenario", &T::scenario),
      field<Text>("difficulty", &T::difficulty),
      field<Text>("group", &T::group),
      field<Text>("input", &T::input, has_input),
      field<Flag>("input_truncated", &T::input_truncated, has_input),
      field<Text>("input_sha256", &T::input_sha256, has_input),
      custom<Custom<k_an_object>>("stats"), // written for readers, recomputed when read
      custom<Custom<k_an_array>>("runs"),
  };
};

template <> struct Description<Report> {
  static constexpr auto fields = std::tuple{
      custom<Custom<k_a_string>>("schema"),
      field<Text>("gate_version", &Report::gate_version),
      field<Object>("suite", &Report::suite),
      field<List>("prompts", &Report::prompts, [](const Report& r) { return !r.prompts.empty(); }),
      custom<Custom<k_object_or_null>>("config"),
      custom<Custom<k_an_object>>("route"),
      // Only when most runs used another route than the configured one
      // (replayed runs carry the route they were recorded through).
      custom<Custom<k_an_object>>("runs_route", Sometimes{}),
      field<Text>("started_at", &Report::started_at),
      field<Text>("finished_at", &Report::finished_at),
      field<Flag>("complete", &Report::complete),
      field<Text>("incomplete_reason", &Report::incomplete_reason),
      field<Count>("not_made", &Report::not_made, [](const Report& r) { return r.not_made > 0; }),
      field<Maybe>("resumed", &Report::resumed, [](const Report& r) { return r.resumed.has_value(); }),
      custom<Custom<k_an_object>>("stats"),
      custom<Custom<k_an_array>>("tasks"),
  };
};

} // namespace gate::report::detail

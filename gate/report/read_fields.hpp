#pragma once

// Private to the report reader: what it expects where. The object contexts
// of a report, the fields of each in the order the writer emits them (and
// which are optional), and the reader's per-object state. The SAX handler
// that walks them is in read_builder.hpp.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gate::report::detail {

enum class Ctx : std::uint8_t {
  top,
  suite,
  resumed,
  route,
  config,
  skip,
  tasks,
  task,
  runs,
  run,
  checks,
  check,
  calls,
  call,
  attempts,
  attempt
};

// The fields of each object context, in the order the writer emits them.
// Every field is required unless listed in `optional`.
struct Fields {
  std::vector<std::string_view> names;
  std::uint32_t optional = 0;
};

inline const Fields& fields_of(Ctx c) {
  // "runs_route" is written only when most runs used another route than
  // the configured one (replayed runs carry the route they were recorded
  // through); "resumed" only by a run that replaced an interrupted one's
  // report.
  static const Fields top{{"schema", "gate_version", "suite", "config", "route", "started_at", "finished_at",
                           "complete", "incomplete_reason", "resumed", "stats", "tasks", "runs_route"},
                          (1u << 9) | (1u << 12)};
  static const Fields suite{{"name", "version", "sha256"}};
  static const Fields resumed{{"from_started_at", "runs"}};
  static const Fields task{{"id", "scenario", "difficulty", "group", "stats", "runs"}};
  // "route" is written only when it differs from the report's route.
  static const Fields run{{"index",
                           "passed",
                           "error",
                           "error_message",
                           "checks",
                           "answer",
                           "answer_truncated",
                           "answer_sha256",
                           "prompt_tokens",
                           "completion_tokens",
                           "usage_known",
                           "latency_ms",
                           "cache_hit",
                           "attempts",
                           "fingerprint",
                           "route",
                           "tool_calls",
                           "ttft_ms",
                           "attempt_log",
                           "judge_calls",
                           "judge_cache_hits",
                           "judge_prompt_tokens",
                           "judge_completion_tokens",
                           "agent_exit_code",
                           "agent_timed_out",
                           "agent_stdout",
                           "agent_stderr",
                           "final_state_hash"},
                          // route, what only fresh, streamed or judged runs have, and agent runs'
                          (1u << 15) | (0x3fu << 17) | (0x1fu << 23)};
  static const Fields check{{"label", "passed", "detail", "reason"}, 1u << 3};
  static const Fields attempt{
      {"status", "bucket", "wait_ms", "latency_ms", "prompt_tokens", "completion_tokens", "usage_known"}};
  static const Fields call{{"name", "arguments_sha256"}};
  static const Fields none{};
  switch (c) {
  case Ctx::top: return top;
  case Ctx::suite: return suite;
  case Ctx::resumed: return resumed;
  case Ctx::task: return task;
  case Ctx::run: return run;
  case Ctx::check: return check;
  case Ctx::call: return call;
  case Ctx::attempt: return attempt;
  default: return none;
  }
}

enum TopField {
  t_schema,
  t_gate_version,
  t_suite,
  t_config,
  t_route,
  t_started,
  t_finished,
  t_complete,
  t_reason,
  t_resumed,
  t_stats,
  t_tasks,
  t_runs_route
};
enum TaskField { k_id, k_scenario, k_difficulty, k_group, k_stats, k_runs };
enum RunField {
  r_index,
  r_passed,
  r_error,
  r_error_message,
  r_checks,
  r_answer,
  r_truncated,
  r_answer_sha,
  r_prompt,
  r_completion,
  r_usage_known,
  r_latency,
  r_cache_hit,
  r_attempts,
  r_fingerprint,
  r_route,
  r_calls,
  r_ttft,
  r_attempt_log,
  r_judge_calls,
  r_judge_hits,
  r_judge_prompt,
  r_judge_completion,
  r_agent_exit,
  r_agent_timed_out,
  r_agent_stdout,
  r_agent_stderr,
  r_final_state
};
enum AttemptField { a_status, a_bucket, a_wait, a_latency, a_prompt, a_completion, a_usage_known };

struct Frame {
  Ctx ctx;
  int field = -1;         // the key just read, in object contexts with a field table
  std::uint32_t seen = 0; // fields read so far
  std::size_t count = 0;  // elements so far, in array contexts
  std::size_t hashes = 0; // where this object's key hashes start (skip, config)
};

// What a scalar event carries.
struct Scalar {
  enum Kind { string, int64, uint64, number, boolean, null } kind;
  std::string_view text{};
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
  bool b = false;
};

} // namespace gate::report::detail

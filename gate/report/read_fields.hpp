#pragma once

// Private to the report reader: what it expects where. The object contexts
// of a report, the fields of each in the order the writer emits them (and
// which are optional), and the reader's per-object state. The SAX handler
// that walks them is in read_builder.hpp.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
  attempt,
  prompts,
  prompt
};
inline constexpr std::size_t k_ctx_count = static_cast<std::size_t>(Ctx::prompt) + 1;

// The fields of each object context, in the order the writer emits them.
// Every field is required unless listed in `optional`.
struct Fields {
  std::vector<std::string_view> names;
  std::uint32_t optional = 0;
};

inline const Fields& fields_of(Ctx c) {
  // One table indexed by Ctx, built once: a lookup (one per object read)
  // then tests a single initialization guard. Contexts without a field
  // table (arrays, free-form objects) keep an empty one.
  static const std::array<Fields, k_ctx_count> by_ctx = [] {
    std::array<Fields, k_ctx_count> t;
    auto at = [&](Ctx x) -> Fields& { return t[static_cast<std::size_t>(x)]; };
    // "runs_route" is written only when most runs used another route than
    // the configured one (replayed runs carry the route they were recorded
    // through); "resumed" only by a run that replaced an interrupted one's
    // report; "prompts" only when gate.yaml has prompt templates.
    at(Ctx::top) = {{"schema", "gate_version", "suite", "config", "route", "started_at", "finished_at",
                     "complete", "incomplete_reason", "resumed", "stats", "tasks", "runs_route", "prompts"},
                    (1u << 9) | (1u << 12) | (1u << 13)};
    at(Ctx::suite) = {{"name", "version", "sha256"}};
    at(Ctx::resumed) = {{"from_started_at", "runs"}};
    // The rendered input is absent from imported logs and older reports.
    at(Ctx::task) = {{"id", "scenario", "difficulty", "group", "input", "input_truncated", "input_sha256",
                      "stats", "runs"},
                     0x7u << 4};
    at(Ctx::prompt) = {{"role", "name", "sha256"}};
    // "route" is written only when it differs from the report's route.
    at(Ctx::run) = {{"index",
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
    at(Ctx::check) = {{"label", "passed", "detail", "reason"}, 1u << 3};
    at(Ctx::attempt) = {
        {"status", "bucket", "wait_ms", "latency_ms", "prompt_tokens", "completion_tokens", "usage_known"}};
    at(Ctx::call) = {{"name", "arguments_sha256"}};
    return t;
  }();
  return by_ctx[static_cast<std::size_t>(c)];
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
  t_runs_route,
  t_prompts
};
enum TaskField {
  k_id,
  k_scenario,
  k_difficulty,
  k_group,
  k_input,
  k_input_truncated,
  k_input_sha,
  k_stats,
  k_runs
};
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
  const Fields* fields;   // fields_of(ctx), looked up once per object rather than per key
  int field = -1;         // the key just read, in object contexts with a field table
  std::uint32_t seen = 0; // fields read so far
  std::size_t count = 0;  // elements so far, in array contexts
  std::size_t hashes = 0; // where this object's key hashes start (skip, config)
  // Bit (hash & 63) of every key hash of this object (skip, config): a key
  // whose bit is clear is new without searching the hashes, which spares
  // most of the search in the per-task "stats" objects every report has.
  std::uint64_t hash_bits = 0;
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

// The hash of a key of a free-form object (duplicates are found by hash).
// Eight bytes per step, then a final mix (murmur3's): a report has about
// twenty such keys per task, and byte-at-a-time hashing was a visible part
// of reading one.
inline std::uint64_t key_hash(std::string_view s) {
  auto mix = [](std::uint64_t h, std::uint64_t w) {
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
  };
  std::uint64_t h = s.size();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = mix(h, w);
  }
  if (i < s.size()) {
    std::uint64_t w = 0; // the tail byte by byte: a memcpy of a variable size is a library call
    for (unsigned shift = 0; i < s.size(); ++i, shift += 8)
      w |= std::uint64_t{static_cast<unsigned char>(s[i])} << shift;
    h = mix(h, w);
  }
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

// Field names are short: compared eight bytes at a time inline, which
// costs less than a call to memcmp (one per key of the file).
inline bool same_text(const char* a, const char* b, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) return false;
  }
  for (; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// The index of `k` in `names`, searched from `from` on, then before it
// (files gate wrote list the fields in table order, leaving out absent
// optional ones); names.size() when absent. Lengths are compared first.
inline std::size_t find_field(const std::vector<std::string_view>& names, std::string_view k,
                              std::size_t from) {
  const std::size_t n = names.size();
  auto is = [&](std::size_t i) {
    return names[i].size() == k.size() && same_text(names[i].data(), k.data(), k.size());
  };
  for (std::size_t i = from; i < n; ++i)
    if (is(i)) return i;
  for (std::size_t i = 0; i < from && i < n; ++i)
    if (is(i)) return i;
  return n;
}

} // namespace gate::report::detail

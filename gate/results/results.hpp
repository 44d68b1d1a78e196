#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gate/util/boxed.hpp>

namespace gate::results {

// What a run was sent through (METRICS.md "Route hygiene"): model, provider,
// base URL host and path, key alias (never the key), sampling, max_tokens,
// tool-schema version, gate version. Values are text so that
// routes from other harnesses (gate analyze) fit the same shape; a field
// that was not set is absent.
using Route = std::map<std::string, std::string>;

// Whether a route field is compared between runs and reports. concurrency
// is recorded (older reports carry it in the route) but changes nothing the
// model sees (METRICS.md "Route hygiene").
inline bool compared_route_key(const std::string& key) { return key != "concurrency"; }

struct CheckResult {
  std::string label;
  bool passed = false;
  std::string detail;
  // llm_judge: the judge's reason (redacted, at most 500 bytes); script:
  // its stdout's first line (redacted, escaped, at most 200 bytes); for a
  // pass too. Absent for other checks, and boxed: a 100,000-task report
  // holds a million checks, nearly all without one (set it with
  // set_reason, which keeps an empty reason absent).
  Boxed<std::string> reason = {};
};

inline void set_reason(CheckResult& c, std::string text) {
  if (text.empty())
    c.reason.reset();
  else
    c.reason = std::move(text);
}
inline CheckResult check_result(std::string label, bool passed, std::string detail, std::string reason) {
  CheckResult c{std::move(label), passed, std::move(detail)};
  set_reason(c, std::move(reason));
  return c;
}

struct ToolCall {
  std::string name;
  std::string arguments_sha256;
};

// One attempt of a fresh call (METRICS.md "Errors and tokens"): every
// attempt is recorded, retried ones included, so their tokens are counted.
struct Attempt {
  int status = 0;        // HTTP status; 0: no answer (timeout, connection, TLS)
  std::string bucket;    // "" for an answer, else a METRICS.md bucket
  double wait_ms = 0;    // waited before it (backoff, retry-after, shared limiter)
  double latency_ms = 0; // request sent to response read
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  bool usage_known = false; // the attempt's response reported usage
};

// What an agent-command run (suite kind "agent") leaves besides its checks;
// absent for a plain model call. Output excerpts are redacted and capped.
struct AgentRun {
  int exit_code = -1;         // -1: killed by a signal or never started
  bool timed_out = false;     // killed at its timeout (the run is error `agent`)
  std::string stdout_excerpt; // at most the capture cap, then a truncation marker
  std::string stderr_excerpt;
  std::string final_state_hash; // sha256 of the work copy after the command (agent/workcopy.hpp)
};

// What another harness recorded a run cost, in USD: the agent's, and a
// simulated user's apart; each absent when the harness did not record it.
struct RecordedCost {
  std::optional<double> agent;
  std::optional<double> user;
};

// One run of one task.
// The small fields come first, together: a 100,000-task report holds
// hundreds of thousands of runs, and padding between them adds up.
struct Run {
  int index = 0;       // replica, 0-based
  int attempts = 1;    // fresh attempts made (1 for a cache hit)
  bool passed = false; // every check held (false when errored)
  bool answer_truncated = false;
  bool usage_known = true; // false: the provider reported no usage (not zero)
  bool cache_hit = false;
  std::string error;         // "" or a METRICS.md bucket: auth, timeout, ...
  std::string error_message; // short, redacted
  std::vector<CheckResult> checks;
  std::string answer;        // truncated at k_answer_limit bytes (UTF-8 safe)
  std::string answer_sha256; // of the full normalized answer
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  // Of the answer's prompt tokens, those the provider's prompt cache served
  // and those written to it; absent when the provider did not say (n/a).
  std::optional<std::int64_t> cache_read_tokens, cache_write_tokens;
  double latency_ms = 0;            // model latency; 0 for a cache hit
  std::string fingerprint;          // request fingerprint (cache key without the replica)
  Route route;                      // empty when read from a report: the report's route (report-schema.md)
  std::vector<ToolCall> tool_calls; // trajectory (agent tasks); empty for plain calls
  // Fresh calls only (empty for a cache hit): every attempt in order, the
  // last one being the run's response. prompt/completion_tokens above are
  // the whole chain: every attempt's, plus the judge's.
  std::vector<Attempt> attempt_log;
  double ttft_ms = 0; // streamed fresh call: time to first token; 0 otherwise
  // llm_judge checks: the judge's calls, also counted apart.
  std::int64_t judge_prompt_tokens = 0;
  std::int64_t judge_completion_tokens = 0;
  int judge_calls = 0;      // judge calls made (fresh or replayed)
  int judge_cache_hits = 0; // of those, answered from the cache
  Boxed<AgentRun> agent;    // agent tasks only (boxed: most runs have none)
  // What the harness that wrote the run says it cost (gate analyze); absent
  // for a run of gate's own, which is priced from its tokens instead
  // (METRICS.md "Cost"). Boxed, as agent: a 100,000-task report of gate's
  // own pays a pointer per run for it, not two optionals.
  Boxed<RecordedCost> recorded;
  bool errored() const { return !error.empty(); }
};

// A run's recorded cost, created on first write.
inline RecordedCost& recorded(Run& r) { return r.recorded ? *r.recorded : r.recorded.emplace(); }
inline std::optional<double> recorded_cost(const Run& r) {
  return r.recorded ? r.recorded->agent : std::nullopt;
}
inline std::optional<double> recorded_user_cost(const Run& r) {
  return r.recorded ? r.recorded->user : std::nullopt;
}

inline constexpr std::size_t k_answer_limit = 2000;

// What to show people as a run's answer: the model's text, or for an agent
// run (whose answer is the state it left, a hash) its exit status and
// stdout.
inline std::string shown_answer(const Run& r) {
  if (!r.agent || !r.answer.empty()) return r.answer;
  std::string out = "exit " + std::to_string(r.agent->exit_code);
  if (r.agent->timed_out) out += " (timed out)";
  if (!r.agent->stdout_excerpt.empty()) out += "; stdout: " + r.agent->stdout_excerpt;
  return out;
}

// The rendered request of a task kept in the report, so that a reviewer
// sees the question beside the answers (docs/report-schema.md "Task").
inline constexpr std::size_t k_input_limit = 4000;

// A prompt template the run used (docs/config.md "Prompts"): which role it
// filled, its name (the file as written in gate.yaml, or the inline key)
// and the sha256 of its text, so two reports say whether they ran the same
// prompt.
struct Prompt {
  std::string role; // system | user
  std::string name;
  std::string sha256;
};

// All runs of one task, in replica order.
struct Task {
  std::string id;
  std::string scenario;
  std::string difficulty;
  std::string group;
  std::vector<Run> runs;
  // The conversation sent ("role: content" blocks, system first), cut at
  // k_input_limit bytes on a UTF-8 boundary; input_sha256 is of the whole
  // text and "" when unknown (reports written before it, imported logs).
  std::string input = {};
  bool input_truncated = false;
  std::string input_sha256 = {};
};

} // namespace gate::results

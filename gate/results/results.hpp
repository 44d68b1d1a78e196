#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gate::results {

// What a run was sent through (METRICS.md "Route hygiene"): model, provider,
// base URL host and path, key alias (never the key), sampling, max_tokens,
// concurrency, tool-schema version, gate version. Values are text so that
// routes from other harnesses (gate analyze) fit the same shape; a field
// that was not set is absent.
using Route = std::map<std::string, std::string>;

struct CheckResult {
  std::string label;
  bool passed = false;
  std::string detail;
};

struct ToolCall {
  std::string name;
  std::string arguments_sha256;
};

// One run of one task.
struct Run {
  int index = 0;                     // replica, 0-based
  bool passed = false;               // every check held (false when errored)
  std::string error;                 // "" or a METRICS.md bucket: auth, timeout, ...
  std::string error_message;         // short, redacted
  std::vector<CheckResult> checks;
  std::string answer;                // truncated at k_answer_limit bytes (UTF-8 safe)
  bool answer_truncated = false;
  std::string answer_sha256;         // of the full normalized answer
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  bool usage_known = true;           // false: the provider reported no usage (not zero)
  double latency_ms = 0;             // model latency; 0 for a cache hit
  bool cache_hit = false;
  int attempts = 1;
  std::string fingerprint;           // request fingerprint (cache key without the replica)
  Route route;
  std::vector<ToolCall> tool_calls;  // trajectory (agent tasks); empty for plain calls
  bool errored() const { return !error.empty(); }
};

inline constexpr std::size_t k_answer_limit = 2000;

// All runs of one task, in replica order.
struct Task {
  std::string id;
  std::string scenario;
  std::string difficulty;
  std::string group;
  std::vector<Run> runs;
};

} // namespace gate::results

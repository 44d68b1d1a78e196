#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gate::check {

// The llm_judge check: a grader model reads the rubric, the conversation
// and the answer, and replies with exactly
//
//   {"verdict": "pass" | "fail", "reason": "<one sentence>"}
//
// The runner makes the call (through the same client and cache as the
// task's own); this file holds what is pure: the prompt and the reading of
// the verdict.

struct JudgePrompt {
  std::string system;
  std::string user;
};

// `conversation`: the case's messages as (role, content), system first.
JudgePrompt judge_prompt(std::string_view rubric,
                         const std::vector<std::pair<std::string, std::string>>& conversation,
                         std::string_view answer);

struct Verdict {
  bool pass = false;
  std::string reason; // redacted, at most k_reason_limit bytes (UTF-8 safe)
};

inline constexpr std::size_t k_reason_limit = 500;

// Reads the judge's reply: the JSON object may be wrapped in prose or a
// ```json fence; "verdict" must be "pass" or "fail" (any case) and
// "reason" a string. nullopt, with `why` set, when the reply is not that.
std::optional<Verdict> parse_verdict(std::string_view reply, std::string& why);

} // namespace gate::check

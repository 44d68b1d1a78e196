#pragma once

#include <boost/json/array.hpp>
#include <cstdint>
#include <string>
#include <string_view>

// Synthetic but realistic benchmark content: short support, extraction,
// arithmetic and classification prompts with 2-3 checks each, and the
// answers a model would give to them, some always right, some always wrong,
// some flaky. Everything is a pure function of the task index (and of a
// "world", the model a report pretends to come from), so the generator and
// the profiler agree without sharing files.
namespace gate::bench {

// splitmix64: a deterministic, well-mixed hash of one 64-bit value.
std::uint64_t mix(std::uint64_t x);

struct TaskText {
  std::string id, scenario, difficulty, group;
  std::string system, input;
  boost::json::array checks;  // as written in cases.jsonl
  std::string good, good_alt; // two right answers in different words
  std::string bad;            // a wrong answer: at least one check fails
};

// Task `i` of a suite; ids are "<scenario>-<i, 6 digits>".
TaskText make_task(std::size_t i);

// One cases.jsonl line (without the newline).
std::string case_line(const TaskText& t);

// Whether run `replica` of task `i` passes in `world` (0 = the baseline
// model, 1 = the current one, which drifts on a few percent of tasks and is
// slightly worse on them). About 80% of tasks always pass, 8% always fail
// and 12% are flaky: at k > 1 a flaky task has replica 0 passing and
// replica 1 failing, the rest at random.
bool replica_passes(std::size_t i, int replica, int world);

// The answer text of that run: a right answer (worded one of two ways) or
// the wrong one.
std::string answer_for(const TaskText& t, std::size_t i, int replica, int world);

// Token counts as a tokenizer of ~4 bytes per token would give them.
std::int64_t prompt_tokens(const TaskText& t);
std::int64_t completion_tokens(std::string_view answer);

// An OpenAI chat.completion response body carrying `content` and usage.
std::string chat_completion(std::string_view response_id, std::string_view model, std::string_view content,
                            std::int64_t prompt, std::int64_t completion);

} // namespace gate::bench

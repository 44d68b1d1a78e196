#pragma once

// Internal to gate_model: OpenAI's Responses API (model.api: responses), the
// request body and the answer. Its stream is StreamAssembler::on_responses.

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <gate/model/api.hpp>

namespace gate::model::detail {

// {"model", "instructions" (the system prompt), "input" (the conversation),
// "max_output_tokens", sampling, "store": false}. No seed: the API has none.
std::string build_responses(const config::ModelConfig& m, const std::string& system,
                            const std::vector<ChatMessage>& messages);

// A 2xx Responses API body: the output_text parts of its message items,
// its function_call items, usage, and status as a Chat-style finish reason.
Reply interpret_responses(const boost::json::value& v);

// status "completed" → "stop" ("tool_calls" with function calls),
// "incomplete" → incomplete_details.reason ("max_output_tokens" → "length").
std::string responses_finish_reason(const boost::json::value& response, bool has_tool_calls);

// A tool call with its arguments canonical and hashed (model::ToolCall).
ToolCall make_tool_call(std::string name, const boost::json::value& args);
// The same from the arguments as JSON text (OpenAI's, a streamed
// Anthropic input): text that is not valid JSON is kept as it came, a
// malformed call being the model's answer like any other.
ToolCall tool_call_of_text(std::string name, std::string_view arguments);

// A finish reason (as Reply::finish_reason holds it, in any dialect) that
// says the model stopped before a normal end: at the token limit (OpenAI
// "length", Anthropic "max_tokens", "model_context_window_exceeded"), at a
// content filter, refusing, or a Responses "incomplete" for another
// reason. Such an answer may hold nothing at all and is still an answer.
bool ended_early(std::string_view finish_reason);

} // namespace gate::model::detail

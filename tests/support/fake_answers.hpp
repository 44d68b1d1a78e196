#pragma once

// Internal to the fake upstream: the answers a model gives that are not
// plain text (Rule::shape), plain and streamed, in each provider's real
// shape, for the tests of "an answer is whatever the model produced"
// (docs/metrics.md "Measured runs").

#include <string>
#include <string_view>

#include <tests/support/fake_stream.hpp>

namespace gate::testing {

// The shapes a rule may ask for; "" is plain text.
//   refusal        the model refuses with `answer` as its words: OpenAI chat
//                  message.refusal (content null; streamed as delta.refusal),
//                  a Responses `refusal` content part (streamed as
//                  response.refusal.delta/.done), Anthropic stop_reason
//                  "refusal" with `answer` as the text streamed before it
//                  (none when "").
//   length         cut at the token limit after `answer` (none when ""):
//                  finish_reason "length", Responses status "incomplete"
//                  with max_output_tokens (an output of one reasoning item
//                  when ""), Anthropic stop_reason "max_tokens" (a thinking
//                  block when "").
//   content_filter stopped by a content filter after `answer`: OpenAI
//                  finish_reason "content_filter" (content null when ""),
//                  Responses "incomplete" with reason content_filter.
//                  Anthropic has no such finish: a rule asks for refusal.
//   bad_arguments  one call of tool "lookup" whose arguments are `answer`,
//                  text that need not be JSON. Anthropic validates a
//                  non-streamed call's input, so only its stream (what
//                  fine-grained tool streaming sends) carries bad JSON; its
//                  plain answer is the form gate records of that stream
//                  (the input as a JSON string).
bool known_shape(std::string_view shape);

// The non-streamed body for `s` (its answer, id, model, usage) in `shape`.
std::string shaped_body(const StreamSpec& s, const std::string& shape);
// The event stream of the same answer.
std::string shaped_stream(const StreamSpec& s, const std::string& shape);

} // namespace gate::testing

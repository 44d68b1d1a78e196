#include <tests/support/fake_answers.hpp>

#include <boost/json.hpp>

namespace gate::testing {

namespace {

namespace bj = boost::json;

constexpr std::string_view k_tool = "lookup";

bj::object chat_usage(const StreamSpec& s) {
  return {{"prompt_tokens", s.prompt},
          {"completion_tokens", s.completion},
          {"total_tokens", s.prompt + s.completion}};
}

// OpenAI chat: finish_reason of the shape.
const char* chat_finish(const std::string& shape) {
  if (shape == "length") return "length";
  if (shape == "content_filter") return "content_filter";
  if (shape == "bad_arguments") return "tool_calls";
  return "stop";
}

bj::value text_or_null(const std::string& text) {
  return text.empty() ? bj::value(nullptr) : bj::value(text);
}

std::string chat_body(const StreamSpec& s, const std::string& shape) {
  bj::object message{{"role", "assistant"}, {"content", text_or_null(s.answer)}, {"refusal", nullptr}};
  if (shape == "refusal") {
    message["content"] = nullptr;
    message["refusal"] = s.answer;
  } else if (shape == "bad_arguments") {
    message["content"] = nullptr;
    message["tool_calls"] = bj::array{bj::object{{"id", "call_fake_0"},
                                                 {"type", "function"},
                                                 {"function", {{"name", k_tool}, {"arguments", s.answer}}}}};
  }
  bj::object choice{{"index", 0}, {"message", std::move(message)}, {"finish_reason", chat_finish(shape)}};
  return bj::serialize(bj::object{{"id", s.id},
                                  {"object", "chat.completion"},
                                  {"model", s.model},
                                  {"choices", bj::array{std::move(choice)}},
                                  {"usage", chat_usage(s)}});
}

std::string chat_stream(const StreamSpec& s, const std::string& shape) {
  auto chunk = [&](bj::object delta, bj::value finish) {
    return chat_chunk(s, std::move(delta), std::move(finish));
  };
  std::string out;
  if (shape == "refusal") {
    out += chunk({{"role", "assistant"}, {"content", nullptr}, {"refusal", ""}}, nullptr);
    for (const auto& p : pieces(s.answer))
      out += chunk({{"refusal", p}}, nullptr);
  } else if (shape == "bad_arguments") {
    bj::object start{{"index", 0},
                     {"id", "call_fake_0"},
                     {"type", "function"},
                     {"function", {{"name", k_tool}, {"arguments", ""}}}};
    out += chunk({{"role", "assistant"}, {"content", nullptr}, {"tool_calls", bj::array{start}}}, nullptr);
    for (const auto& p : pieces(s.answer))
      out += chunk({{"tool_calls", bj::array{bj::object{{"index", 0}, {"function", {{"arguments", p}}}}}}},
                   nullptr);
  } else {
    out += chunk({{"role", "assistant"}, {"content", ""}}, nullptr);
    for (const auto& p : pieces(s.answer))
      out += chunk({{"content", p}}, nullptr);
  }
  out += chunk({}, chat_finish(shape));
  if (s.include_usage)
    out += sse("", bj::object{{"id", s.id},
                              {"object", "chat.completion.chunk"},
                              {"model", s.model},
                              {"choices", bj::array{}},
                              {"usage", chat_usage(s)}});
  return out + "data: [DONE]\n\n";
}

// Responses API: the output items, and the final response object.
bj::array responses_output(const StreamSpec& s, const std::string& shape) {
  if (shape == "bad_arguments")
    return {bj::object{{"type", "function_call"},
                       {"id", "fc_" + s.id},
                       {"call_id", "call_fake_0"},
                       {"name", k_tool},
                       {"arguments", s.answer},
                       {"status", "completed"}}};
  if (shape == "length" && s.answer.empty())
    return {bj::object{{"type", "reasoning"}, {"id", "rs_" + s.id}, {"summary", bj::array{}}}};
  bj::object part{{"type", "output_text"}, {"text", s.answer}, {"annotations", bj::array{}}};
  if (shape == "refusal") part = {{"type", "refusal"}, {"refusal", s.answer}};
  bj::array content;
  if (shape == "refusal" || !s.answer.empty()) content.push_back(std::move(part));
  return {bj::object{{"type", "message"},
                     {"id", "msg_" + s.id},
                     {"status", shape == "length" || shape == "content_filter" ? "incomplete" : "completed"},
                     {"role", "assistant"},
                     {"content", std::move(content)}}};
}

bj::object responses_final(const StreamSpec& s, const std::string& shape) {
  bj::object r{{"id", s.id},
               {"object", "response"},
               {"status", "completed"},
               {"incomplete_details", nullptr},
               {"model", s.model},
               {"output", responses_output(s, shape)},
               {"usage", bj::object{{"input_tokens", s.prompt},
                                    {"output_tokens", s.completion},
                                    {"total_tokens", s.prompt + s.completion}}}};
  if (shape == "length" || shape == "content_filter") {
    r["status"] = "incomplete";
    r["incomplete_details"] =
        bj::object{{"reason", shape == "length" ? "max_output_tokens" : "content_filter"}};
  }
  return r;
}

std::string responses_stream(const StreamSpec& s, const std::string& shape) {
  auto event = [](const std::string& type, bj::object data) {
    data["type"] = type;
    return sse(type, data);
  };
  std::string out = event("response.created", {{"response",
                                                {{"id", s.id},
                                                 {"object", "response"},
                                                 {"status", "in_progress"},
                                                 {"model", s.model},
                                                 {"output", bj::array{}}}}});
  const bj::object final = responses_final(s, shape);
  const bj::object& item = final.at("output").as_array()[0].as_object();
  const std::string item_id(item.at("id").as_string());
  bj::object added = item;
  if (shape == "bad_arguments") added["arguments"] = "";
  if (added.contains("content")) added["content"] = bj::array{};
  added["status"] = "in_progress";
  out += event("response.output_item.added", {{"output_index", 0}, {"item", added}});
  const auto at = [&](bj::object o) {
    o["item_id"] = item_id;
    o["output_index"] = 0;
    return o;
  };
  if (shape == "bad_arguments") {
    for (const auto& p : pieces(s.answer))
      out += event("response.function_call_arguments.delta", at({{"delta", p}}));
    out += event("response.function_call_arguments.done", at({{"arguments", s.answer}}));
  } else if (shape == "refusal") {
    out += event("response.content_part.added",
                 at({{"content_index", 0}, {"part", {{"type", "refusal"}, {"refusal", ""}}}}));
    for (const auto& p : pieces(s.answer))
      out += event("response.refusal.delta", at({{"content_index", 0}, {"delta", p}}));
    out += event("response.refusal.done", at({{"content_index", 0}, {"refusal", s.answer}}));
    out += event("response.content_part.done",
                 at({{"content_index", 0}, {"part", {{"type", "refusal"}, {"refusal", s.answer}}}}));
  } else if (item.at("type").as_string() == "message" && !s.answer.empty()) {
    out += event("response.content_part.added",
                 at({{"content_index", 0}, {"part", {{"type", "output_text"}, {"text", ""}}}}));
    for (const auto& p : pieces(s.answer))
      out += event("response.output_text.delta", at({{"content_index", 0}, {"delta", p}}));
    out += event("response.output_text.done", at({{"content_index", 0}, {"text", s.answer}}));
  }
  out += event("response.output_item.done", {{"output_index", 0}, {"item", item}});
  const bool cut = shape == "length" || shape == "content_filter";
  return out + event(cut ? "response.incomplete" : "response.completed", {{"response", final}});
}

// Anthropic: stop_reason of the shape, and the content blocks.
const char* anthropic_stop(const std::string& shape) {
  if (shape == "length") return "max_tokens";
  if (shape == "refusal") return "refusal";
  if (shape == "bad_arguments") return "tool_use";
  return "end_turn";
}

bj::array anthropic_content(const StreamSpec& s, const std::string& shape) {
  if (shape == "bad_arguments")
    return {bj::object{{"type", "tool_use"}, {"id", "toolu_fake_0"}, {"name", k_tool}, {"input", s.answer}}};
  if (s.answer.empty() && shape == "length")
    return {bj::object{{"type", "thinking"}, {"thinking", "Let me think"}, {"signature", "c2lnbmF0dXJl"}}};
  if (s.answer.empty()) return {};
  return {bj::object{{"type", "text"}, {"text", s.answer}}};
}

std::string anthropic_body(const StreamSpec& s, const std::string& shape) {
  return bj::serialize(bj::object{{"id", s.id},
                                  {"type", "message"},
                                  {"role", "assistant"},
                                  {"model", s.model},
                                  {"content", anthropic_content(s, shape)},
                                  {"stop_reason", anthropic_stop(shape)},
                                  {"stop_sequence", nullptr},
                                  {"usage", {{"input_tokens", s.prompt}, {"output_tokens", s.completion}}}});
}

std::string anthropic_stream(const StreamSpec& s, const std::string& shape) {
  bj::object message{{"id", s.id},
                     {"type", "message"},
                     {"role", "assistant"},
                     {"model", s.model},
                     {"content", bj::array{}},
                     {"stop_reason", nullptr},
                     {"usage", {{"input_tokens", s.prompt}, {"output_tokens", 1}}}};
  std::string out = sse("message_start", bj::object{{"type", "message_start"}, {"message", message}});
  const bj::array content = anthropic_content(s, shape);
  for (std::size_t i = 0; i < content.size(); ++i) {
    const bj::object& block = content[i].as_object();
    const auto index = static_cast<std::int64_t>(i);
    bj::object start = block;
    bj::object delta;
    std::string type(block.at("type").as_string());
    std::string text;
    if (type == "tool_use") {
      start["input"] = bj::object{};
      text = std::string(block.at("input").as_string());
    } else if (type == "thinking") {
      start["thinking"] = "";
      text = std::string(block.at("thinking").as_string());
    } else {
      start["text"] = "";
      text = std::string(block.at("text").as_string());
    }
    out += sse("content_block_start",
               bj::object{{"type", "content_block_start"}, {"index", index}, {"content_block", start}});
    for (const auto& p : pieces(text)) {
      if (type == "tool_use")
        delta = {{"type", "input_json_delta"}, {"partial_json", p}};
      else if (type == "thinking")
        delta = {{"type", "thinking_delta"}, {"thinking", p}};
      else
        delta = {{"type", "text_delta"}, {"text", p}};
      out += sse("content_block_delta",
                 bj::object{{"type", "content_block_delta"}, {"index", index}, {"delta", delta}});
    }
    out += sse("content_block_stop", bj::object{{"type", "content_block_stop"}, {"index", index}});
  }
  out += sse("message_delta", bj::object{{"type", "message_delta"},
                                         {"delta", bj::object{{"stop_reason", anthropic_stop(shape)},
                                                              {"stop_sequence", nullptr}}},
                                         {"usage", bj::object{{"output_tokens", s.completion}}}});
  return out + sse("message_stop", bj::object{{"type", "message_stop"}});
}

} // namespace

bool known_shape(std::string_view shape) {
  return shape == "refusal" || shape == "length" || shape == "content_filter" || shape == "bad_arguments";
}

std::string shaped_body(const StreamSpec& s, const std::string& shape) {
  if (s.anthropic) return anthropic_body(s, shape);
  if (s.responses) return bj::serialize(responses_final(s, shape));
  return chat_body(s, shape);
}

std::string shaped_stream(const StreamSpec& s, const std::string& shape) {
  if (s.anthropic) return anthropic_stream(s, shape);
  if (s.responses) return responses_stream(s, shape);
  return chat_stream(s, shape);
}

} // namespace gate::testing

#include <tests/support/fake_stream.hpp>

#include <boost/json.hpp>
#include <vector>

namespace gate::testing {

std::vector<std::string> pieces(const std::string& answer) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < answer.size()) {
    std::size_t space = answer.find(' ', start);
    std::size_t end = space == std::string::npos ? answer.size() : space + 1;
    out.push_back(answer.substr(start, end - start));
    start = end;
  }
  return out;
}

std::string sse(const std::string& event, const boost::json::value& data) {
  std::string out = event.empty() ? "" : "event: " + event + "\n";
  return out + "data: " + boost::json::serialize(data) + "\n\n";
}

std::string chat_chunk(const StreamSpec& s, boost::json::object delta, boost::json::value finish) {
  namespace bj = boost::json;
  bj::object choice{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish)}};
  bj::object c{{"id", s.id},
               {"object", "chat.completion.chunk"},
               {"model", s.model},
               {"choices", bj::array{std::move(choice)}}};
  if (s.include_usage) c["usage"] = nullptr;
  return sse("", c);
}

namespace {

const char* error_type(int status) {
  return status == 401   ? "authentication_error"
         : status == 403 ? "permission_error"
         : status == 404 ? "not_found_error"
         : status == 429 ? "rate_limit_error"
         : status == 529 ? "overloaded_error"
         : status >= 500 ? "server_error"
                         : "invalid_request_error";
}

} // namespace

std::string stream_body(const StreamSpec& s) {
  namespace bj = boost::json;
  if (s.responses) return responses_stream_body(s);
  std::string out;
  if (s.anthropic) {
    bj::object usage{{"input_tokens", s.prompt}, {"output_tokens", 1}};
    bj::object message{{"id", s.id},       {"type", "message"},      {"role", "assistant"},
                       {"model", s.model}, {"content", bj::array{}}, {"stop_reason", nullptr},
                       {"usage", usage}};
    out += sse("message_start", bj::object{{"type", "message_start"}, {"message", message}});
    out +=
        sse("content_block_start", bj::object{{"type", "content_block_start"},
                                              {"index", 0},
                                              {"content_block", bj::object{{"type", "text"}, {"text", ""}}}});
    out += ": keep-alive comment\n\n";
    out += sse("ping", bj::object{{"type", "ping"}});
    for (const auto& p : pieces(s.answer))
      out +=
          sse("content_block_delta", bj::object{{"type", "content_block_delta"},
                                                {"index", 0},
                                                {"delta", bj::object{{"type", "text_delta"}, {"text", p}}}});
    if (s.ending == "error")
      return out + sse("error", bj::object{{"type", "error"},
                                           {"error", bj::object{{"type", error_type(s.error_status)},
                                                                {"message", "fake upstream stream fault"}}}});
    if (s.ending == "cut") return out;
    out += sse("content_block_stop", bj::object{{"type", "content_block_stop"}, {"index", 0}});
    out += sse("message_delta",
               bj::object{{"type", "message_delta"},
                          {"delta", bj::object{{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}},
                          {"usage", bj::object{{"output_tokens", s.completion}}}});
    return out + sse("message_stop", bj::object{{"type", "message_stop"}});
  }
  auto chunk = [&](bj::object delta, bj::value finish) {
    return chat_chunk(s, std::move(delta), std::move(finish));
  };
  if (s.azure)
    out += sse(
        "",
        bj::object{{"id", ""},
                   {"object", ""},
                   {"model", ""},
                   {"choices", bj::array{}},
                   {"prompt_filter_results",
                    bj::array{bj::object{{"prompt_index", 0}, {"content_filter_results", bj::object{}}}}}});
  out += chunk(bj::object{{"role", "assistant"}, {"content", ""}}, nullptr);
  for (const auto& p : pieces(s.answer))
    out += chunk(bj::object{{"content", p}}, nullptr);
  if (s.ending == "error")
    return out + sse("", bj::object{{"error", bj::object{{"message", "fake upstream stream fault"},
                                                         {"type", error_type(s.error_status)},
                                                         {"code", nullptr}}}});
  if (s.ending == "cut") return out;
  out += chunk(bj::object{}, "stop");
  if (s.include_usage)
    out += sse("", bj::object{{"id", s.id},
                              {"object", "chat.completion.chunk"},
                              {"model", s.model},
                              {"choices", bj::array{}},
                              {"usage", bj::object{{"prompt_tokens", s.prompt},
                                                   {"completion_tokens", s.completion},
                                                   {"total_tokens", s.prompt + s.completion}}}});
  return out + "data: [DONE]\n\n";
}

boost::json::object responses_object(const StreamSpec& s) {
  namespace bj = boost::json;
  bj::object text{{"type", "output_text"}, {"text", s.answer}, {"annotations", bj::array{}}};
  bj::object message{{"type", "message"},
                     {"id", "msg_" + s.id},
                     {"status", "completed"},
                     {"role", "assistant"},
                     {"content", bj::array{std::move(text)}}};
  return {{"id", s.id},
          {"object", "response"},
          {"status", "completed"},
          {"model", s.model},
          {"output", bj::array{std::move(message)}},
          {"usage", bj::object{{"input_tokens", s.prompt},
                               {"output_tokens", s.completion},
                               {"total_tokens", s.prompt + s.completion}}}};
}

std::string responses_stream_body(const StreamSpec& s) {
  namespace bj = boost::json;
  bj::object head{{"id", s.id},
                  {"object", "response"},
                  {"status", "in_progress"},
                  {"model", s.model},
                  {"output", bj::array{}}};
  std::string out = sse("response.created", bj::object{{"type", "response.created"}, {"response", head}});
  bj::object item{
      {"type", "message"}, {"id", "msg_" + s.id}, {"role", "assistant"}, {"content", bj::array{}}};
  out += sse("response.output_item.added",
             bj::object{{"type", "response.output_item.added"}, {"output_index", 0}, {"item", item}});
  out += ": keep-alive comment\n\n";
  for (const auto& p : pieces(s.answer))
    out += sse("response.output_text.delta", bj::object{{"type", "response.output_text.delta"},
                                                        {"output_index", 0},
                                                        {"content_index", 0},
                                                        {"delta", p}});
  if (s.ending == "error")
    return out + sse("error", bj::object{{"type", "error"},
                                         {"code", error_type(s.error_status)},
                                         {"message", "fake upstream stream fault"}});
  if (s.ending == "cut") return out;
  return out + sse("response.completed",
                   bj::object{{"type", "response.completed"}, {"response", responses_object(s)}});
}

} // namespace gate::testing

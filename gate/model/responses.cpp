#include <gate/model/responses.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <gate/model/json_access.hpp>
#include <gate/model/stream.hpp>
#include <gate/util/json.hpp>
#include <gate/util/sha256.hpp>

namespace gate::model {

namespace bj = boost::json;

namespace detail {

namespace {

Reply failed(Bucket b, std::string_view message) {
  Reply r;
  r.bucket = b;
  r.error = short_error(message);
  return r;
}

// A response with status "failed" or an error object: the error's code
// decides the bucket, as a mid-stream error's does.
Reply failed_response(const bj::value* err) {
  const std::string code(text_of(field(err, "code")));
  const std::string message(text_of(field(err, "message")));
  return failed(stream_error_bucket(code, code, message),
                "response failed: " + (code.empty() ? "" : code + ": ") + message);
}

} // namespace

std::string build_responses(const config::ModelConfig& m, const std::string& system,
                            const std::vector<ChatMessage>& messages) {
  bj::object body;
  body["model"] = m.name;
  if (!system.empty()) body["instructions"] = system;
  bj::array input;
  for (const auto& msg : messages)
    input.push_back(bj::object{{"role", msg.role}, {"content", msg.content}});
  body["input"] = std::move(input);
  put_settings(wire_settings(m), body);
  // The API keeps every response for 30 days unless told not to; an eval
  // run has no use for that and its prompts may be private.
  body["store"] = false;
  return json::canonical(body);
}

std::string responses_finish_reason(const bj::value& response, bool has_tool_calls) {
  const std::string_view status = text_of(field(&response, "status"));
  if (status == "completed") return has_tool_calls ? "tool_calls" : "stop";
  if (status == "incomplete") {
    const std::string_view reason = text_of(field(field(&response, "incomplete_details"), "reason"));
    if (reason == "max_output_tokens") return "length";
    return reason.empty() ? "incomplete" : std::string(reason);
  }
  return std::string(status);
}

ToolCall make_tool_call(std::string name, const bj::value& args) {
  std::string text = json::canonical(args);
  std::string sha = sha256_hex(text);
  return {std::move(name), std::move(text), std::move(sha)};
}

ToolCall tool_call_of_text(std::string name, std::string_view arguments) {
  if (auto parsed = try_parse(arguments)) return make_tool_call(std::move(name), *parsed);
  std::string text(arguments);
  std::string sha = sha256_hex(text);
  return {std::move(name), std::move(text), std::move(sha)};
}

bool ended_early(std::string_view finish_reason) {
  return finish_reason == "length" || finish_reason == "max_tokens" ||
         finish_reason == "model_context_window_exceeded" || finish_reason == "content_filter" ||
         finish_reason == "refusal" || finish_reason == "incomplete";
}

Reply interpret_responses(const bj::value& v) {
  const auto* err = field(&v, "error");
  if (text_of(field(&v, "status")) == "failed" || (err != nullptr && err->is_object()))
    return failed_response(err);
  const auto* output = field(&v, "output");
  if (output == nullptr || !output->is_array())
    return failed(Bucket::bad_response, "no output in the response");
  Reply out;
  bool has_text = false;
  for (const auto& item : output->get_array()) {
    const std::string_view type = text_of(field(&item, "type"));
    if (type == "message") {
      const auto* content = field(&item, "content");
      if (content == nullptr || !content->is_array()) continue;
      for (const auto& part : content->get_array()) {
        const std::string_view part_type = text_of(field(&part, "type"));
        // A refusal is the model's answer too: checks see its words.
        const bool refusal = part_type == "refusal";
        const auto* text = field(&part, refusal ? "refusal" : "text");
        if (part_type != "output_text" && !refusal) continue;
        if (text == nullptr || !text->is_string())
          return failed(Bucket::bad_response, std::string(part_type) + " part without text");
        out.text += std::string_view(text->get_string());
        out.refused = out.refused || refusal;
        has_text = true;
      }
    } else if (type == "function_call") {
      std::string name(text_of(field(&item, "name")));
      if (name.empty()) return failed(Bucket::tool_call, "function_call without a name");
      const auto* args = field(&item, "arguments");
      if (args == nullptr || !args->is_string())
        return failed(Bucket::tool_call, "tool call " + name + ": arguments are not a JSON string");
      out.tool_calls.push_back(tool_call_of_text(std::move(name), std::string_view(args->get_string())));
    }
    // reasoning, web_search_call and other items carry no answer.
  }
  out.finish_reason = responses_finish_reason(v, !out.tool_calls.empty());
  const auto* usage = field(&v, "usage");
  auto in = integer_of(field(usage, "input_tokens"));
  auto gen = integer_of(field(usage, "output_tokens"));
  if (in && gen) out.usage = Usage{*in, *gen, openai_cached(usage, "input_tokens_details"), std::nullopt};
  // A response cut at max_output_tokens or by a filter may hold no text at
  // all; that is an answer (finish_reason says why), not a broken response.
  if (!has_text && out.tool_calls.empty() && !ended_early(out.finish_reason))
    return failed(Bucket::bad_response, "response has neither output text nor function calls");
  return out;
}

} // namespace detail

// Events: response.created, response.output_item.added (a function_call
// item, by output_index), response.output_text.delta,
// response.function_call_arguments.delta, response.completed or
// response.incomplete (the final response, whole), response.failed and
// error. The final response is the non-streamed body as it is.
void StreamAssembler::on_responses(std::string_view event, std::string_view data, double now_ms) {
  using namespace detail;
  auto v = try_parse(data);
  if (!v || !v->is_object()) return fail(Bucket::bad_response, "stream event is not a JSON object");
  std::string type(text_of(field(&*v, "type")));
  if (type.empty()) type = event;
  if (type == "error") {
    const std::string code(text_of(field(&*v, "code")));
    const std::string message(text_of(field(&*v, "message")));
    return fail(stream_error_bucket(code, code, message),
                "stream error: " + (code.empty() ? "" : code + ": ") + message);
  }
  const auto* response = field(&*v, "response");
  if (type == "response.failed") {
    Reply r = interpret_responses(response != nullptr ? *response : bj::value());
    return fail(r.bucket == Bucket::none ? Bucket::server : r.bucket, r.error);
  }
  if (type == "response.created") {
    result_.id = text_of(field(response, "id"));
    result_.model = text_of(field(response, "model"));
  } else if (type == "response.output_text.delta") {
    result_.text_block = true;
    const std::string_view delta = text_of(field(&*v, "delta"));
    result_.text += delta;
    if (!delta.empty()) first_token(now_ms);
  } else if (type == "response.output_item.added") {
    const auto* item = field(&*v, "item");
    auto index = integer_of(field(&*v, "output_index"));
    if (text_of(field(item, "type")) == "function_call" && index) {
      Block& b = blocks_[*index];
      b.type = "tool_use";
      b.call.id = text_of(field(item, "call_id"));
      b.call.name = text_of(field(item, "name"));
    }
  } else if (type == "response.function_call_arguments.delta") {
    auto index = integer_of(field(&*v, "output_index"));
    auto found = index ? blocks_.find(*index) : blocks_.end();
    if (found == blocks_.end())
      return fail(Bucket::bad_response, "function call arguments for an item that was never added");
    found->second.call.arguments += text_of(field(&*v, "delta"));
    first_token(now_ms);
  } else if (type.ends_with(".delta")) {
    first_token(now_ms); // reasoning summaries and the like: generated, not answer
  } else if (type == "response.completed" || type == "response.incomplete") {
    if (response == nullptr || !response->is_object())
      return fail(Bucket::bad_response, type + " without its response");
    collect_tool_calls();
    result_.final_body = json::canonical(*response);
    if (result_.id.empty()) result_.id = text_of(field(response, "id"));
    result_.finish_reason = responses_finish_reason(*response, !result_.tool_calls.empty());
    const auto* usage = field(response, "usage");
    auto in = integer_of(field(usage, "input_tokens"));
    auto gen = integer_of(field(usage, "output_tokens"));
    if (in && gen)
      result_.usage = Usage{*in, *gen, openai_cached(usage, "input_tokens_details"), std::nullopt};
    result_.usage_missing = !result_.usage.has_value();
    result_.state = StreamState::complete;
  }
  // in_progress, content_part, *.done and unknown events change nothing.
}

} // namespace gate::model

#include <gate/model/stream.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <utility>

#include <gate/model/json_access.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::model {

namespace {

namespace bj = boost::json;

using detail::anthropic_prompt;
using detail::contains;
using detail::field;
using detail::integer_of;
using detail::openai_cached;
using detail::text_of;
using detail::try_parse;

std::string_view terminal_marker(const std::string& provider) {
  if (provider == "responses") return "response.completed";
  return provider == "anthropic" ? "message_stop" : "[DONE]";
}

} // namespace

Bucket stream_error_bucket(std::string_view type, std::string_view code, std::string_view message) {
  auto is = [&](std::string_view name) { return type == name || code == name; };
  if (is("context_length_exceeded") || contains(message, "maximum context length") ||
      contains(message, "prompt is too long") || contains(message, "context window"))
    return Bucket::context_length;
  if (is("insufficient_quota")) return Bucket::quota;
  if (is("rate_limit_error") || is("rate_limit_exceeded") || is("tokens") || is("requests") || code == "429")
    return Bucket::rate_limit;
  // Anthropic's overloaded_error is its 529: the servers are busy, not this
  // key over its limit. A server failure, retried as a plain 529 is.
  if (is("overloaded_error") || code == "529") return Bucket::server;
  if (is("authentication_error") || is("permission_error") || is("invalid_api_key")) return Bucket::auth;
  if (is("not_found_error") || is("model_not_found")) return Bucket::not_found;
  if (is("timeout_error") || is("timeout")) return Bucket::timeout;
  if (is("invalid_request_error") || is("request_too_large")) return Bucket::bad_response;
  // api_error, server_error and anything unknown: the server broke the
  // stream it had started, which is worth another attempt.
  return Bucket::server;
}

StreamAssembler::StreamAssembler(std::string provider, double start_ms)
    : provider_(std::move(provider)), start_ms_(start_ms) {}

void StreamAssembler::fail(Bucket b, std::string_view message) {
  result_.state = StreamState::failed;
  result_.bucket = b;
  result_.error = short_error(message);
}

void StreamAssembler::first_token(double now_ms) {
  if (!result_.ttft_ms) result_.ttft_ms = now_ms - start_ms_;
}

void StreamAssembler::on_event(std::string_view event, std::string_view data, double now_ms) {
  // Nothing after the end marker or a failure changes the outcome.
  if (result_.state != StreamState::open) return;
  if (provider_ == "anthropic")
    on_anthropic(event, data, now_ms);
  else if (provider_ == "responses")
    on_responses(event, data, now_ms);
  else
    on_openai(event, data, now_ms);
}

namespace {

// An error object from either provider: {"error":{"type","code","message"}}
// or a bare {"error":"text"}. Returns false when `v` carries no error.
// `status` is the HTTP status the error stands for when it names one
// (Anthropic's overloaded_error: 529), else left alone.
bool error_of(const bj::value& v, Bucket& bucket, std::string& message, int& status) {
  const auto* err = field(&v, "error");
  if (err == nullptr || err->is_null()) return false;
  if (err->is_string()) {
    message = std::string(err->get_string());
    bucket = stream_error_bucket("", "", message);
    return true;
  }
  std::string_view type = text_of(field(err, "type"));
  std::string code(text_of(field(err, "code")));
  if (auto n = integer_of(field(err, "code"))) code = std::to_string(*n);
  message = std::string(text_of(field(err, "message")));
  bucket = stream_error_bucket(type, code, message);
  if (type == "overloaded_error" || code == "529") status = 529;
  std::string label = type.empty() ? code : std::string(type);
  if (!label.empty()) message = label + ": " + message;
  return true;
}

} // namespace

void StreamAssembler::on_openai(std::string_view event, std::string_view data, double now_ms) {
  if (data == "[DONE]") {
    collect_tool_calls();
    result_.state = StreamState::complete;
    result_.usage_missing = !result_.usage.has_value();
    return;
  }
  auto v = try_parse(data);
  if (!v || !v->is_object()) return fail(Bucket::bad_response, "stream chunk is not a JSON object");
  Bucket bucket = Bucket::none;
  std::string message;
  if (error_of(*v, bucket, message, result_.error_status)) return fail(bucket, "stream error: " + message);
  // Some compatible servers name the event instead of using an error object.
  if (event == "error") return fail(Bucket::server, "stream error: " + std::string(data));

  if (result_.id.empty()) result_.id = text_of(field(&*v, "id"));
  if (result_.model.empty()) result_.model = text_of(field(&*v, "model"));
  // With include_usage every chunk has "usage": null except the last one.
  const auto* usage = field(&*v, "usage");
  auto p = integer_of(field(usage, "prompt_tokens"));
  auto c = integer_of(field(usage, "completion_tokens"));
  if (p && c) result_.usage = Usage{*p, *c, openai_cached(usage, "prompt_tokens_details"), std::nullopt};

  const auto* choices = field(&*v, "choices");
  if (choices == nullptr || !choices->is_array()) return;
  for (const auto& choice : choices->get_array()) {
    // gate asks for one completion; other choices (n > 1) are not its answer.
    auto index = integer_of(field(&choice, "index"));
    if (index && *index != 0) continue;
    const auto* delta = field(&choice, "delta");
    const auto* content = field(delta, "content");
    if (content != nullptr && content->is_string()) {
      result_.text_block = true;
      result_.text += std::string_view(content->get_string());
      if (!content->get_string().empty()) first_token(now_ms);
    }
    if (const auto* refusal = field(delta, "refusal"); refusal != nullptr && refusal->is_string()) {
      result_.refusal = result_.refusal.value_or("") + std::string(refusal->get_string());
      if (!refusal->get_string().empty()) first_token(now_ms);
    }
    if (!text_of(field(delta, "reasoning_content")).empty()) first_token(now_ms);
    const auto* calls = field(delta, "tool_calls");
    if (calls != nullptr && calls->is_array()) {
      for (const auto& call : calls->get_array()) {
        auto at = integer_of(field(&call, "index"));
        if (!at) return fail(Bucket::bad_response, "streamed tool call without an index");
        Block& b = blocks_[*at];
        b.type = "tool_use";
        if (auto id = text_of(field(&call, "id")); !id.empty()) b.call.id = id;
        const auto* fn = field(&call, "function");
        // The name usually comes whole in the first piece; joining pieces
        // also serves servers that split it.
        b.call.name += text_of(field(fn, "name"));
        b.call.arguments += text_of(field(fn, "arguments"));
        first_token(now_ms);
      }
    }
    if (auto reason = text_of(field(&choice, "finish_reason")); !reason.empty())
      result_.finish_reason = reason;
  }
}

void StreamAssembler::on_anthropic(std::string_view event, std::string_view data, double now_ms) {
  if (event == "ping") return;
  auto v = try_parse(data);
  if (!v || !v->is_object()) return fail(Bucket::bad_response, "stream event is not a JSON object");
  std::string type(text_of(field(&*v, "type")));
  if (type.empty()) type = event;
  Bucket bucket = Bucket::none;
  std::string message;
  if (type == "error" || event == "error") {
    if (!error_of(*v, bucket, message, result_.error_status)) {
      bucket = Bucket::server;
      message = "error event without details";
    }
    return fail(bucket, "stream error: " + message);
  }
  if (type == "message_start") {
    const auto* msg = field(&*v, "message");
    result_.id = text_of(field(msg, "id"));
    result_.model = text_of(field(msg, "model"));
    const auto* usage = field(msg, "usage");
    input_tokens_ = integer_of(field(usage, "input_tokens"));
    cache_write_tokens_ = integer_of(field(usage, "cache_creation_input_tokens"));
    cache_read_tokens_ = integer_of(field(usage, "cache_read_input_tokens"));
    output_tokens_ = integer_of(field(usage, "output_tokens"));
  } else if (type == "content_block_start") {
    auto index = integer_of(field(&*v, "index"));
    const auto* block = field(&*v, "content_block");
    if (!index || block == nullptr || !block->is_object())
      return fail(Bucket::bad_response, "content_block_start without index or content_block");
    Block& b = blocks_[*index];
    b.type = text_of(field(block, "type"));
    if (b.type == "text") {
      result_.text_block = true;
      result_.text += text_of(field(block, "text"));
    } else if (b.type == "tool_use") {
      b.call.id = text_of(field(block, "id"));
      b.call.name = text_of(field(block, "name"));
      if (const auto* input = field(block, "input")) b.initial_input = json::canonical(*input);
    }
  } else if (type == "content_block_delta") {
    auto index = integer_of(field(&*v, "index"));
    auto found = index ? blocks_.find(*index) : blocks_.end();
    if (found == blocks_.end())
      return fail(Bucket::bad_response, "content_block_delta for a block that was never started");
    const auto* delta = field(&*v, "delta");
    std::string_view delta_type = text_of(field(delta, "type"));
    if (delta_type == "text_delta") {
      result_.text += text_of(field(delta, "text"));
    } else if (delta_type == "input_json_delta") {
      found->second.call.arguments += text_of(field(delta, "partial_json"));
    }
    // thinking and signature deltas carry no answer but are generated tokens.
    first_token(now_ms);
  } else if (type == "message_delta") {
    if (auto reason = text_of(field(field(&*v, "delta"), "stop_reason")); !reason.empty())
      result_.finish_reason = reason;
    // message_delta usage is cumulative: the latest value is the total.
    const auto* usage = field(&*v, "usage");
    if (auto out = integer_of(field(usage, "output_tokens"))) output_tokens_ = out;
    if (auto in = integer_of(field(usage, "input_tokens"))) input_tokens_ = in;
    if (auto w = integer_of(field(usage, "cache_creation_input_tokens"))) cache_write_tokens_ = w;
    if (auto r = integer_of(field(usage, "cache_read_input_tokens"))) cache_read_tokens_ = r;
  } else if (type == "message_stop") {
    collect_tool_calls();
    const auto prompt = anthropic_prompt(input_tokens_, cache_write_tokens_, cache_read_tokens_);
    if (prompt && output_tokens_)
      result_.usage = Usage{*prompt, *output_tokens_, cache_read_tokens_, cache_write_tokens_};
    result_.usage_missing = !result_.usage.has_value();
    result_.state = StreamState::complete;
  }
  // content_block_stop and unknown event types change nothing.
}

void StreamAssembler::collect_tool_calls() {
  result_.tool_calls.clear();
  for (auto& [index, b] : blocks_) {
    if (b.type != "tool_use") continue;
    StreamToolCall call = b.call;
    // A tool without parameters streams no input_json_delta at all.
    if (call.arguments.empty()) call.arguments = b.initial_input.empty() ? "{}" : b.initial_input;
    result_.tool_calls.push_back(std::move(call));
  }
}

void StreamAssembler::finish(bool cut) {
  if (result_.state != StreamState::open) return;
  result_.state = StreamState::incomplete;
  result_.bucket = Bucket::connection;
  std::string why = "stream ended without " + std::string(terminal_marker(provider_));
  if (cut) why += " (in the middle of an event)";
  result_.error = short_error(why);
}

namespace {

int status_for(Bucket b) {
  switch (b) {
  case Bucket::auth: return 401;
  case Bucket::not_found: return 404;
  case Bucket::rate_limit: return 429;
  case Bucket::timeout: return 408;
  case Bucket::context_length: return 400;
  case Bucket::bad_response: return 422;
  default: return 500;
  }
}

std::string error_body(const StreamResult& r) {
  bj::object err;
  err["message"] = r.error;
  if (r.bucket == Bucket::context_length) err["code"] = "context_length_exceeded";
  bj::object body;
  body["error"] = std::move(err);
  return json::canonical(body);
}

std::string openai_body(const StreamResult& r) {
  bj::object message;
  message["role"] = "assistant";
  // As the plain answer: content null beside a refusal or tool calls.
  if (r.text_block || (r.tool_calls.empty() && !r.refusal))
    message["content"] = r.text;
  else
    message["content"] = nullptr;
  if (r.refusal) message["refusal"] = *r.refusal;
  if (!r.tool_calls.empty()) {
    bj::array calls;
    for (const auto& c : r.tool_calls) {
      bj::object fn;
      fn["name"] = c.name;
      fn["arguments"] = c.arguments;
      bj::object call;
      call["id"] = c.id;
      call["type"] = "function";
      call["function"] = std::move(fn);
      calls.push_back(std::move(call));
    }
    message["tool_calls"] = std::move(calls);
  }
  bj::object choice;
  choice["index"] = 0;
  choice["message"] = std::move(message);
  choice["finish_reason"] = r.finish_reason;
  bj::object body;
  body["id"] = r.id;
  body["object"] = "chat.completion";
  body["model"] = r.model;
  body["choices"] = bj::array{std::move(choice)};
  if (r.usage) {
    bj::object usage;
    usage["prompt_tokens"] = r.usage->prompt_tokens;
    usage["completion_tokens"] = r.usage->completion_tokens;
    usage["total_tokens"] = r.usage->prompt_tokens + r.usage->completion_tokens;
    if (r.usage->cache_read_tokens)
      usage["prompt_tokens_details"] = bj::object{{"cached_tokens", *r.usage->cache_read_tokens}};
    body["usage"] = std::move(usage);
  }
  return json::canonical(body);
}

std::string anthropic_body(const StreamResult& r) {
  bj::array content;
  if (r.text_block) {
    bj::object text;
    text["type"] = "text";
    text["text"] = r.text;
    content.push_back(std::move(text));
  }
  for (const auto& c : r.tool_calls) {
    bj::object use;
    use["type"] = "tool_use";
    use["id"] = c.id;
    use["name"] = c.name;
    // Input that does not parse stays a string, so parse_response reports
    // the tool_call error the model caused instead of it vanishing here.
    if (auto input = try_parse(c.arguments))
      use["input"] = std::move(*input);
    else
      use["input"] = c.arguments;
    content.push_back(std::move(use));
  }
  bj::object body;
  body["id"] = r.id;
  body["type"] = "message";
  body["role"] = "assistant";
  body["model"] = r.model;
  body["content"] = std::move(content);
  body["stop_reason"] = r.finish_reason;
  body["stop_sequence"] = nullptr;
  if (r.usage) {
    bj::object usage;
    // As the API splits it: input_tokens leaves the cached parts out, and
    // parse_response adds them back.
    usage["input_tokens"] = r.usage->prompt_tokens - r.usage->cache_read_tokens.value_or(0) -
                            r.usage->cache_write_tokens.value_or(0);
    usage["output_tokens"] = r.usage->completion_tokens;
    if (r.usage->cache_read_tokens) usage["cache_read_input_tokens"] = *r.usage->cache_read_tokens;
    if (r.usage->cache_write_tokens) usage["cache_creation_input_tokens"] = *r.usage->cache_write_tokens;
    body["usage"] = std::move(usage);
  }
  return json::canonical(body);
}

} // namespace

ApiResponse to_non_streaming(const std::string& provider, const StreamResult& r, const ApiResponse& head) {
  ApiResponse out;
  out.latency_ms = head.latency_ms;
  for (const auto& [name, value] : head.headers)
    if (name != "content-type" && name != "content-length" && name != "transfer-encoding")
      out.headers.emplace_back(name, redact(value));
  if (r.state == StreamState::complete) {
    out.status = head.status;
    out.headers.emplace_back("content-type", "application/json");
    if (provider == "responses")
      out.body = r.final_body;
    else
      out.body = provider == "anthropic" ? anthropic_body(r) : openai_body(r);
  } else if (r.state == StreamState::failed) {
    out.status = r.error_status != 0 ? r.error_status : status_for(r.bucket);
    out.headers.emplace_back("content-type", "application/json");
    out.body = error_body(r);
  } else {
    // parse_response's convention for a call without a usable HTTP answer.
    out.status = 0;
    out.body = "connection: " + (r.error.empty() ? std::string("stream still open") : r.error);
  }
  // The body is what the client returns and the cache may store: the model
  // may have echoed a key.
  out.body = redact(out.body);
  return out;
}

std::string with_streaming(const std::string& provider, std::string_view body) {
  auto v = json::parse_strict(body, "request body");
  json::as_object(v, "request body"); // throws naming the body when it is not an object
  auto& o = v.as_object();
  o["stream"] = true;
  if (provider == "openai") o["stream_options"] = bj::object{{"include_usage", true}};
  return json::canonical(v);
}

} // namespace gate::model

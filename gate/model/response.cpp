#include <gate/model/api.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <string_view>

#include <gate/model/json_access.hpp>
#include <gate/model/responses.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::model {

namespace {

// Error text ends up in reports and terminal lines: one short line.
constexpr std::size_t k_max_error_bytes = 200;

Reply failed(Bucket b, std::string_view message) {
  Reply r;
  r.bucket = b;
  r.error = short_error(message);
  return r;
}

using detail::anthropic_prompt;
using detail::contains;
using detail::field;
using detail::integer_of;
using detail::openai_cached;
using detail::text_of;
using detail::try_parse;

std::optional<Usage> usage_of(const boost::json::value* usage, std::string_view prompt_key,
                              std::string_view completion_key) {
  auto p = integer_of(field(usage, prompt_key));
  auto c = integer_of(field(usage, completion_key));
  // A half-reported usage is not a count of zero: leave it absent.
  if (!p || !c) return std::nullopt;
  return Usage{*p, *c};
}

std::string header(const ApiResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

// What the error body says, across the shapes in the wild: OpenAI and
// Azure {"error":{"message","type","code"}}, Anthropic {"type":"error",
// "error":{"type","message"}}, Google's OpenAI-compatible endpoint's array
// [{"error":{"code":400,"message","status":"INVALID_ARGUMENT"}}], and
// compatible servers' {"error":"..."} (Ollama), {"message":"..."} or
// {"detail":"..."}.
struct ErrorInfo {
  std::string message;
  std::string code;  // OpenAI code, else the error type
  std::string param; // OpenAI: the request field the error is about
};

// A 400 unsupported_parameter / unsupported_value about a setting gate
// sends: the gate.yaml key to change (the model family table in
// model::wire_settings covers the known ones; a new model may not be in it).
std::string setting_hint(const ErrorInfo& e) {
  if (e.code != "unsupported_parameter" && e.code != "unsupported_value") return "";
  struct Key {
    std::string_view param, key;
  };
  static constexpr Key k_keys[] = {{"temperature", "model.temperature"},
                                   {"top_p", "model.top_p"},
                                   {"seed", "model.seed"},
                                   {"max_tokens", "model.max_tokens"},
                                   {"max_completion_tokens", "model.max_tokens"},
                                   {"max_output_tokens", "model.max_tokens"}};
  // A reasoning model under a name gate's family table does not know (an
  // Azure deployment) refuses the sampling fields and Chat's max_tokens.
  const bool reasoning_field = e.param == "temperature" || e.param == "top_p" || e.param == "max_tokens";
  for (const Key& k : k_keys)
    if (e.param == k.param)
      return "the model does not take " + std::string(k.param) + ": set " + std::string(k.key) +
             ": null in gate.yaml" +
             (reasoning_field ? ", or model.family: reasoning (gpt-5, o-series)" : "") + " — ";
  if (!e.param.empty())
    return "the model does not take " + e.param + ": remove it from model.extra in gate.yaml — ";
  return "";
}

ErrorInfo error_info(std::string_view body) {
  ErrorInfo info;
  auto parsed = try_parse(body);
  if (!parsed) {
    info.message = std::string(body);
    return info;
  }
  const boost::json::value* v = &*parsed;
  if (v->is_array() && !v->get_array().empty()) v = &v->get_array()[0];
  const auto* err = field(v, "error");
  if (err != nullptr && err->is_string()) {
    info.message = std::string(err->get_string());
  } else if (err != nullptr && err->is_object()) {
    info.message = text_of(field(err, "message"));
    info.code = text_of(field(err, "code"));
    info.param = text_of(field(err, "param"));
    if (info.code.empty()) info.code = text_of(field(err, "type"));
    if (info.code.empty()) info.code = text_of(field(err, "status")); // Google's: a number is its code
  }
  if (info.message.empty()) info.message = text_of(field(v, "message"));
  if (info.message.empty()) info.message = text_of(field(v, "detail"));
  if (info.message.empty()) info.message = std::string(body);
  return info;
}

// A spent quota or credit balance: waiting does not bring it back, so it
// is not a rate limit. OpenAI says insufficient_quota (as a 429); Anthropic
// answers a 400 whose message says the credit balance is too low.
bool is_spent_quota(const ErrorInfo& e) {
  return e.code == "insufficient_quota" || contains(e.message, "exceeded your current quota") ||
         contains(e.message, "credit balance is too low");
}

// OpenAI and vLLM ("maximum context length"), Anthropic, llama.cpp's
// server (exceed_context_size_error) and Gemini ("input token count ...
// exceeds the maximum number of tokens").
bool is_context_overflow(const ErrorInfo& e) {
  return e.code == "context_length_exceeded" || e.code == "exceed_context_size_error" ||
         contains(e.message, "maximum context length") || contains(e.message, "prompt is too long") ||
         contains(e.message, "context window") || contains(e.message, "exceeds the available context size") ||
         contains(e.message, "exceeds the maximum number of tokens");
}

Reply interpret_error(const ApiResponse& r) {
  ErrorInfo e = error_info(r.body);
  std::string status = "HTTP " + std::to_string(r.status) + ": ";
  int s = r.status;
  if ((s == 429 || s == 400 || s == 402 || s == 403) && is_spent_quota(e))
    return failed(Bucket::quota, status + e.message);
  // Google's endpoint answers a bad key with a 400 INVALID_ARGUMENT.
  if (s == 401 || s == 403 || (s == 400 && contains(e.message, "API key not valid")))
    return failed(Bucket::auth, status + e.message);
  if (s == 404 || (s == 400 && e.code == "model_not_found"))
    return failed(Bucket::not_found, status + e.message);
  if (s == 429) {
    // The client gives up early when the server asks for a wait above its
    // cap; the value explains why there was no further retry.
    std::string wait = header(r, "retry-after-ms");
    wait = wait.empty() ? header(r, "retry-after") : wait + " ms";
    std::string msg = status + e.message;
    if (!wait.empty()) msg = status + "(retry-after " + wait + ") " + e.message;
    return failed(Bucket::rate_limit, msg);
  }
  if (s == 408) return failed(Bucket::timeout, status + e.message);
  if (s >= 500) return failed(Bucket::server, status + e.message);
  if ((s == 400 || s == 413 || s == 422) && is_context_overflow(e))
    return failed(Bucket::context_length, status + e.message);
  // The hint first: short_error keeps 200 bytes, and the provider's own
  // message is long.
  return failed(Bucket::bad_response, status + setting_hint(e) + e.message);
}

Reply interpret_openai(const boost::json::value& v) {
  const auto* choices = field(&v, "choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) {
    std::string why = "no choices in the response";
    if (const auto* err = field(&v, "error")) why += ": " + error_info(json::canonical(*err)).message;
    return failed(Bucket::bad_response, why);
  }
  const auto& choice = choices->get_array()[0];
  const auto* message = field(&choice, "message");
  if (message == nullptr || !message->is_object())
    return failed(Bucket::bad_response, "choice has no message");

  Reply out;
  out.finish_reason = text_of(field(&choice, "finish_reason"));
  out.usage = usage_of(field(&v, "usage"), "prompt_tokens", "completion_tokens");
  if (out.usage) out.usage->cache_read_tokens = openai_cached(field(&v, "usage"), "prompt_tokens_details");
  const auto* content = field(message, "content");
  bool has_content = content != nullptr && content->is_string();
  if (has_content) out.text = std::string(content->get_string());
  // Structured outputs: a refusal comes in its own field, content null. Its
  // words are the answer the checks see.
  if (const auto* refusal = field(message, "refusal"); refusal != nullptr && refusal->is_string()) {
    out.text += std::string_view(refusal->get_string());
    out.refused = true;
  }

  const auto* calls = field(message, "tool_calls");
  if (calls != nullptr && calls->is_array()) {
    for (const auto& call : calls->get_array()) {
      const auto* fn = field(&call, "function");
      std::string name(text_of(field(fn, "name")));
      if (name.empty()) return failed(Bucket::tool_call, "tool call without a function name");
      const auto* args = field(fn, "arguments");
      if (args == nullptr || !args->is_string())
        return failed(Bucket::tool_call, "tool call " + name + ": arguments are not a JSON string");
      // OpenAI sends arguments as model-written JSON text; the model may
      // well produce something that does not parse, which is its answer.
      out.tool_calls.push_back(detail::tool_call_of_text(name, std::string_view(args->get_string())));
    }
  }
  // A refusal, the token limit or a content filter (Azure's) may stop an
  // answer before its first word: that is the model's behaviour under this
  // route, for the checks to judge, not a broken response.
  if (!has_content && out.tool_calls.empty() && !out.refused && !detail::ended_early(out.finish_reason))
    return failed(Bucket::bad_response, "response has neither content nor tool calls");
  return out;
}

Reply interpret_anthropic(const boost::json::value& v) {
  const auto* content = field(&v, "content");
  if (content == nullptr || !content->is_array()) {
    std::string why = "no content in the response";
    if (const auto* err = field(&v, "error")) why += ": " + error_info(json::canonical(*err)).message;
    return failed(Bucket::bad_response, why);
  }
  Reply out;
  out.finish_reason = text_of(field(&v, "stop_reason"));
  const auto* usage = field(&v, "usage");
  const auto prompt = anthropic_prompt(integer_of(field(usage, "input_tokens")),
                                       integer_of(field(usage, "cache_creation_input_tokens")),
                                       integer_of(field(usage, "cache_read_input_tokens")));
  // A half-reported usage is not a count of zero: leave it absent.
  if (const auto completion = integer_of(field(usage, "output_tokens")); prompt && completion)
    out.usage = Usage{*prompt, *completion, integer_of(field(usage, "cache_read_input_tokens")),
                      integer_of(field(usage, "cache_creation_input_tokens"))};
  bool has_text = false;
  for (const auto& block : content->get_array()) {
    std::string type(text_of(field(&block, "type")));
    if (type == "text") {
      const auto* text = field(&block, "text");
      if (text == nullptr || !text->is_string())
        return failed(Bucket::bad_response, "text block without text");
      out.text += std::string_view(text->get_string());
      has_text = true;
    } else if (type == "tool_use") {
      std::string name(text_of(field(&block, "name")));
      if (name.empty()) return failed(Bucket::tool_call, "tool_use block without a name");
      const auto* input = field(&block, "input");
      // A string is a streamed input that did not parse (fine-grained tool
      // streaming sends it unvalidated), as to_non_streaming keeps it.
      if (input != nullptr && input->is_string())
        out.tool_calls.push_back(detail::tool_call_of_text(name, std::string_view(input->get_string())));
      else if (input != nullptr && input->is_object())
        out.tool_calls.push_back(detail::make_tool_call(name, *input));
      else
        return failed(Bucket::tool_call, "tool call " + name + ": input is not a JSON object");
    }
    // Other block types (thinking, redacted_thinking) carry no answer.
  }
  // Streaming classifiers stop a reply with stop_reason "refusal", after
  // whatever text it had, perhaps none; max_tokens may come before any
  // text (all of it thinking). Both are answers for the checks to judge.
  out.refused = out.finish_reason == "refusal";
  if (!has_text && out.tool_calls.empty() && !detail::ended_early(out.finish_reason))
    return failed(Bucket::bad_response, "response has neither text nor tool calls");
  return out;
}

} // namespace

Reply parse_response(const std::string& provider, const ApiResponse& r) {
  if (r.status == 0) {
    // The client's convention for a call that never got an HTTP answer.
    bool timed_out = std::string_view(r.body).substr(0, 8) == "timeout:";
    return failed(timed_out ? Bucket::timeout : Bucket::connection, r.body);
  }
  if (r.status < 200 || r.status > 299) {
    Reply e = interpret_error(r);
    if (!r.gave_up.empty()) e.error += "; " + r.gave_up;
    return e;
  }
  auto v = try_parse(r.body);
  if (!v)
    return failed(Bucket::bad_response, "HTTP " + std::to_string(r.status) + ": body is not valid JSON");
  if (provider == "anthropic") return interpret_anthropic(*v);
  if (provider == "responses") return detail::interpret_responses(*v);
  return interpret_openai(*v);
}

std::string short_error(std::string_view text) {
  std::string one_line = redact(text);
  for (char& c : one_line)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return std::string(utf8_prefix(one_line, k_max_error_bytes));
}

} // namespace gate::model

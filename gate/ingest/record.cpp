#include <gate/ingest/ingest.hpp>

#include <boost/json.hpp>
#include <cctype>
#include <cmath>

#include <gate/ingest/route.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

namespace gate::ingest {

namespace bj = boost::json;

namespace {

// A record with the names it is read by: every error names the path the user
// wrote (the --map target, or the canonical name).
struct Fields {
  const bj::object& rec;
  const Options& o;
  const std::string& where;

  std::string path(const std::string& name) const {
    auto it = o.map.find(name);
    return it == o.map.end() ? name : it->second;
  }

  // The value at the field's dotted path; nullptr when absent or null. A
  // path part that is all digits indexes into an array.
  const bj::value* get(const std::string& name) const {
    const std::string p = path(name);
    const bj::value* cur = nullptr;
    const bj::object* obj = &rec;
    std::size_t pos = 0;
    while (true) {
      auto dot = p.find('.', pos);
      std::string part = p.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
      if (cur && cur->is_array()) {
        if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos)
          return nullptr;
        const auto& a = cur->get_array();
        std::size_t i = std::stoul(part);
        if (i >= a.size()) return nullptr;
        cur = &a[i];
      } else {
        if (!obj) return nullptr;
        auto it = obj->find(part);
        if (it == obj->end()) return nullptr;
        cur = &it->value();
      }
      if (dot == std::string::npos) break;
      obj = cur->if_object();
      pos = dot + 1;
    }
    return cur->is_null() ? nullptr : cur;
  }

  [[noreturn]] void bad(const std::string& name, const std::string& expected, const bj::value& got) const {
    throw Error(Exit::bad_input, where + ": field \"" + path(name) + "\": expected " + expected + ", got " +
                                     json::kind_name(got));
  }

  // Route values and ids: strings as they are, numbers in shortest form.
  std::optional<std::string> text(const std::string& name) const {
    const bj::value* v = get(name);
    if (!v) return std::nullopt;
    if (v->is_string()) return std::string(v->get_string());
    if (v->is_number()) {
      std::string out;
      json::append_number(v->to_number<double>(), out);
      return out;
    }
    if (v->is_bool()) return std::string(v->get_bool() ? "true" : "false");
    bad(name, "a string or a number", *v);
  }

  std::optional<double> number(const std::string& name, bool non_negative) const {
    const bj::value* v = get(name);
    if (!v) return std::nullopt;
    if (!v->is_number()) bad(name, non_negative ? "a number >= 0" : "a number", *v);
    double d = v->to_number<double>();
    if (non_negative && !(d >= 0)) bad(name, "a number >= 0", *v);
    return d;
  }

  std::optional<std::int64_t> count(const bj::value& v, const std::string& name) const {
    if (!v.is_number()) bad(name, "a whole number >= 0", v);
    double d = v.to_number<double>();
    if (!(d >= 0) || d != std::floor(d) || d > 9e15) bad(name, "a whole number >= 0", v);
    return static_cast<std::int64_t>(d);
  }
};

// Tool-call arguments hash the same whether a harness wrote them as a JSON
// object or as the JSON text OpenAI sends; other text is hashed as it is.
std::string arguments_hash(const bj::value* args) {
  if (!args) return sha256_hex("{}");
  if (args->is_string()) {
    boost::system::error_code ec;
    bj::value parsed = bj::parse(args->get_string(), ec);
    if (ec) return sha256_hex(args->get_string());
    return sha256_hex(json::canonical(parsed));
  }
  return sha256_hex(json::canonical(*args));
}

const bj::value* member(const bj::object& o, const char* key) {
  auto it = o.find(key);
  return it == o.end() || it->value().is_null() ? nullptr : &it->value();
}

// One call: a name, or an object in the OpenAI ({"function": {name,
// arguments}}), Anthropic ({"name", "input"}) or plain ({"name",
// "arguments"}) shape.
results::ToolCall tool_call(const bj::value& v, const Fields& f, const std::string& field) {
  if (v.is_string()) return {redact(v.get_string()), arguments_hash(nullptr)};
  if (!v.is_object()) f.bad(field, "tool calls as names or objects with a name", v);
  const bj::object* o = &v.get_object();
  if (const bj::value* fn = member(*o, "function"); fn && fn->is_object()) o = &fn->get_object();
  const bj::value* name = member(*o, "name");
  if (!name || !name->is_string()) f.bad(field, "a tool call with a string \"name\"", v);
  const bj::value* args = member(*o, "arguments");
  if (!args) args = member(*o, "input");
  if (!args) args = member(*o, "args");
  return {redact(name->get_string()), arguments_hash(args)};
}

std::vector<results::ToolCall> tool_calls(const Fields& f) {
  std::vector<results::ToolCall> out;
  if (const bj::value* v = f.get("tool_calls")) {
    if (!v->is_array()) f.bad("tool_calls", "an array of tool calls", *v);
    for (const auto& c : v->get_array())
      out.push_back(tool_call(c, f, "tool_calls"));
    return out;
  }
  const bj::value* msgs = f.get("messages");
  if (!msgs) return out;
  if (!msgs->is_array()) f.bad("messages", "an array of chat messages", *msgs);
  for (const auto& m : msgs->get_array()) {
    if (!m.is_object()) f.bad("messages", "chat messages as objects", m);
    const auto& o = m.get_object();
    const bj::value* role = member(o, "role");
    if (!role || !role->is_string() || role->get_string() != "assistant") continue;
    if (const bj::value* calls = member(o, "tool_calls")) {
      if (!calls->is_array()) f.bad("messages", "an assistant message whose tool_calls is an array", *calls);
      for (const auto& c : calls->get_array())
        out.push_back(tool_call(c, f, "messages"));
    }
    // Anthropic-style content blocks carry their calls as "tool_use" blocks.
    if (const bj::value* content = member(o, "content"); content && content->is_array())
      for (const auto& b : content->get_array())
        if (const auto* bo = b.if_object())
          if (const bj::value* type = member(*bo, "type");
              type && type->is_string() && type->get_string() == "tool_use")
            out.push_back(tool_call(b, f, "messages"));
  }
  return out;
}

void token_usage(const Fields& f, results::Run& run) {
  const bj::value* v = f.get("token_usage");
  run.usage_known = v != nullptr;
  if (!v) return;
  if (v->is_number()) {
    // A bare total has no split; it is counted as prompt tokens.
    run.prompt_tokens = *f.count(*v, "token_usage");
    return;
  }
  if (!v->is_object()) f.bad("token_usage", "an object with prompt/completion tokens, or a number", *v);
  const auto& o = v->get_object();
  auto pick = [&](const char* a, const char* b) -> std::optional<std::int64_t> {
    const bj::value* x = member(o, a);
    if (!x) x = member(o, b);
    return x ? f.count(*x, "token_usage") : std::nullopt;
  };
  auto prompt = pick("prompt_tokens", "input_tokens");
  auto completion = pick("completion_tokens", "output_tokens");
  if (!prompt && !completion) {
    auto total = pick("total_tokens", "total");
    if (!total)
      f.bad("token_usage", "prompt_tokens/completion_tokens, input_tokens/output_tokens or total_tokens", *v);
    run.prompt_tokens = *total;
    return;
  }
  run.prompt_tokens = prompt.value_or(0);
  run.completion_tokens = completion.value_or(0);
}

// "Rate limited" → "rate_limited": buckets compare as identifiers.
std::string bucket(std::string_view s) {
  std::string out;
  for (char ch : s)
    out.push_back(ch == ' ' || ch == '-' ? '_'
                                         : static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  return out;
}

// Buckets an infrastructure retry clears: a record that reports one of
// these and an outcome is a run that succeeded after retrying.
bool retriable(const std::string& b) {
  return b == "rate_limit" || b == "timeout" || b == "connection" || b == "server";
}

void answer(const Fields& f, results::Run& run) {
  if (auto h = f.text("final_state_hash")) {
    run.answer_sha256 = redact(*h);
    return;
  }
  if (const bj::value* s = f.get("final_state")) {
    run.answer_sha256 = sha256_hex(s->is_string() ? std::string(s->get_string()) : json::canonical(*s));
    return;
  }
  if (auto a = f.text("answer")) {
    run.answer_sha256 = sha256_hex(*a);
    std::string kept = redact(*a);
    run.answer_truncated = kept.size() > results::k_answer_limit;
    run.answer = std::string(utf8_prefix(kept, results::k_answer_limit));
  }
}

} // namespace

Record read_record(const Located& in, const Options& o) {
  if (!in.value.is_object())
    throw Error(Exit::bad_input,
                in.where + ": expected a record (a JSON object), got " + json::kind_name(in.value));
  Fields f{in.value.get_object(), o, in.where};
  Record r;
  r.where = in.where;
  auto task = f.text("task_id");
  if (!task || task->empty())
    throw Error(Exit::bad_input,
                in.where + ": field \"" + f.path("task_id") + "\": expected a task id, none found");
  r.task_id = redact(*task);
  r.run_id = f.text("run_id");
  r.scenario = redact(f.text("scenario").value_or(""));
  r.difficulty = redact(f.text("difficulty").value_or(""));
  r.group = redact(f.text("group").value_or(""));

  results::Run& run = r.run;
  // The harness's own verdict is the run's one check, so that a failing
  // run says why in the report (its reward) like a run of gate's own.
  std::optional<bool> outcome;
  results::CheckResult check;
  if (const bj::value* p = f.get("passed")) {
    if (!p->is_bool()) f.bad("passed", "true or false", *p);
    outcome = p->get_bool();
    check = {"passed", *outcome, *outcome ? "" : "the harness reported passed: false"};
  } else if (auto reward = f.number("reward", false)) {
    outcome = std::fabs(*reward - 1.0) <= 1e-6 || (o.pass_threshold && *reward >= *o.pass_threshold);
    std::string text;
    json::append_number(*reward, text);
    std::string needed = "1";
    if (o.pass_threshold) {
      needed += " or >= ";
      json::append_number(*o.pass_threshold, needed);
    }
    check = {"reward", *outcome, text + (*outcome ? "" : " (needed " + needed + ")")};
  }
  std::string error = bucket(f.text("error_type").value_or(""));
  if (auto n = f.get("retries"))
    r.retries = static_cast<int>(std::min<std::int64_t>(*f.count(*n, "retries"), 1000000));
  if (auto n = f.get("attempts")) {
    auto a = *f.count(*n, "attempts");
    if (a < 1) f.bad("attempts", "a whole number >= 1", *n);
    r.retries = std::max(r.retries, static_cast<int>(std::min<std::int64_t>(a - 1, 1000000)));
  }
  if (!error.empty() && outcome && retriable(error)) {
    error.clear();
    r.retries = std::max(r.retries, 1);
  }
  if (error.empty() && !outcome)
    throw Error(Exit::bad_input, in.where + ": expected \"" + f.path("passed") + "\" (true or false) or \"" +
                                     f.path("reward") + "\" (a number) on a run without error_type");
  run.error = redact(error);
  run.passed = error.empty() && *outcome;
  run.attempts = r.retries + 1;
  if (outcome && !run.errored()) run.checks.push_back(std::move(check));
  token_usage(f, run);
  const std::optional<double> cost = f.number("cost", true), user_cost = f.number("user_cost", true);
  if (cost || user_cost) run.recorded = results::RecordedCost{cost, user_cost};
  if (auto s = f.number("latency", true)) run.latency_ms = *s * 1000.0;
  if (auto ms = f.number("latency_ms", true)) run.latency_ms = *ms;
  run.tool_calls = tool_calls(f);
  answer(f, run);
  run.route = route_of_record(RouteFields{f.text("model"), f.text("user_model"), f.text("base_url"),
                                          f.text("key_alias"), f.text("temperature"), f.text("top_p"),
                                          f.text("seed"), f.text("max_concurrency"), r.retries});
  return r;
}

} // namespace gate::ingest

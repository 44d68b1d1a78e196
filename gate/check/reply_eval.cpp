#include <gate/check/detail.hpp>
#include <gate/check/schema.hpp>
#include <gate/util/format.hpp>
#include <gate/util/json.hpp>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <stdexcept>

namespace gate::check::detail {

namespace {

// Groups: every inner check is evaluated; one that could not be makes the
// group errored, whatever the others say (the group's verdict would rest on
// a check nobody ran).
std::string group_failure(const Check& c, const Reply& reply, std::string_view subject, bool& errored) {
  std::vector<std::string> failed;
  bool any_passed = false;
  for (const auto& child : c.children) {
    const Result r = evaluate(child, reply, subject);
    if (r.errored) {
      errored = true;
      return r.label + ": " + r.detail;
    }
    if (r.passed)
      any_passed = true;
    else
      failed.push_back(r.label + ": " + r.detail);
  }
  std::string list;
  for (const auto& f : failed)
    list += (list.empty() ? "" : "; ") + f;
  if (c.type == Type::any_of) return any_passed ? "" : "expected one of the checks to pass; " + list;
  return failed.empty() ? ""
                        : std::to_string(failed.size()) + " of " + std::to_string(c.children.size()) +
                              " checks failed: " + list;
}

// A weighted group's share of passing weight, and whether it passes, as
// promptfoo scores a test or an assert-set: a plain check scores 1 or 0, a
// weighted group inside its own share.
struct Share {
  double score = 0;
  bool passed = true;
  bool errored = false;
  std::string detail; // why it failed or was errored
};

Share weighted_share(const Check& c, const Reply& reply, std::string_view subject) {
  Share out;
  double sum = 0, total = 0;
  std::string failed;
  for (std::size_t i = 0; i < c.children.size(); ++i) {
    const Check& child = c.children[i];
    double score = 0;
    bool passed = false;
    std::string why;
    if (child.type == Type::weighted) {
      const Share in = weighted_share(child, reply, subject);
      if (in.errored) return Share{0, false, true, child.label + ": " + in.detail};
      score = in.score, passed = in.passed, why = in.detail;
    } else {
      const Result r = evaluate(child, reply, subject);
      if (r.errored) return Share{0, false, true, r.label + ": " + r.detail};
      score = r.passed ? 1 : 0, passed = r.passed, why = r.detail;
    }
    // The sums in promptfoo's order, so that a share on the threshold
    // compares the same in both.
    sum += score * c.weights[i];
    total += c.weights[i];
    if (!passed && c.weights[i] > 0) {
      out.passed = false;
      failed += (failed.empty() ? "" : "; ") + child.label + ": " + why;
    }
  }
  out.score = total > 0 ? sum / total : 0;
  const std::string share = show_rounded(out.score);
  if (c.pass_share) {
    out.passed = out.score >= *c.pass_share;
    if (!out.passed)
      out.detail = "expected a weighted share of at least " + show_number(*c.pass_share) + "; it is " +
                   share + (failed.empty() ? "" : " (failed: " + failed + ")");
  } else if (!out.passed) {
    out.detail = "expected every check of a weight above 0 to pass; " + failed;
  }
  return out;
}

// A tool call's arguments as JSON; `ec` set when they are not JSON.
boost::json::value parse_arguments(const ToolCall& tc, boost::system::error_code& ec) {
  boost::json::parse_options opts;
  opts.max_depth = 64;
  return boost::json::parse(tc.arguments, ec, {}, opts);
}

// The first response's tool calls as the tool_calls check reads them.
std::string tool_calls_json(const Reply& reply) {
  boost::json::array calls;
  for (const auto& tc : reply.tool_calls) {
    boost::system::error_code ec;
    boost::json::value args = parse_arguments(tc, ec);
    if (ec) args = boost::json::string(tc.arguments);
    calls.push_back(boost::json::object{{"name", tc.name}, {"arguments", std::move(args)}});
  }
  return json::canonical(calls);
}

std::string tool_names(const Reply& reply) {
  std::vector<std::string> names;
  for (const auto& tc : reply.tool_calls)
    names.push_back(tc.name);
  return names.empty() ? "no tool calls" : "calls were " + quoted_list(names);
}

std::string tool_args_failure(const Check& c, const Reply& reply) {
  const std::string& name = c.values.front();
  auto it = std::find_if(reply.tool_calls.begin(), reply.tool_calls.end(),
                         [&](const ToolCall& tc) { return tc.name == name; });
  if (it == reply.tool_calls.end())
    return "expected a call to " + snippet(name) + "; the first response's " + tool_names(reply);
  boost::system::error_code ec;
  const boost::json::value args = parse_arguments(*it, ec);
  if (ec)
    return "expected the arguments of " + snippet(name) + " to be JSON; they are " + snippet(it->arguments);
  const std::string f = json_paths_failure(c, args);
  return f.empty() ? "" : "the arguments of " + snippet(name) + ": " + f;
}

std::string json_schema_failure(const Check& c, std::string_view answer, std::string_view subject) {
  auto valid = [&](const boost::json::value& doc) -> std::string {
    const boost::json::value* at = resolve_pointer(doc, c.pointer);
    if (at == nullptr) return "expected " + snippet(c.path) + " to exist; it is missing";
    return schema_failure(*c.schema, *at, c.path);
  };
  if (c.find_anywhere) return anywhere_failure(answer, subject, valid);
  const std::optional<boost::json::value> doc = answer_json(answer);
  if (!doc) return not_json(answer, subject);
  return valid(*doc);
}

// A script's verdict is its exit status; one that did not run to an exit
// of its own (could not start, timed out, killed) is errored: it said
// nothing about the answer.
std::string script_failure(const Check& c, const Reply& reply, std::string_view subject, bool& errored,
                           std::string& reason) {
  if (reply.script == nullptr || !*reply.script) {
    errored = true;
    return "a script check runs in a model case only, not on " + std::string(subject);
  }
  const ScriptRun r = (*reply.script)(c, reply.text);
  const std::string program = "[" + quoted_list(c.argv) + "]";
  if (!r.started) {
    errored = true;
    return printable(r.start_error, k_script_reason_limit);
  }
  if (r.timed_out) {
    errored = true;
    return program + " timed out after " + show_number(c.timeout_s) + " s; its process group was killed";
  }
  std::string_view line = std::string_view(r.out).substr(0, r.out.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (r.exit_code < 0) {
    // A program that ends itself by a signal may have said why first.
    errored = true;
    return program + " was killed by signal " + std::to_string(r.signal) +
           (line.empty() ? "" : ": " + printable(line, k_script_reason_limit));
  }
  reason = printable(line, k_script_reason_limit);
  if (r.exit_code == 0) return "";
  return "expected " + program + " to exit 0; it exited with " + std::to_string(r.exit_code) +
         (reason.empty() ? "" : ": " + reason);
}

} // namespace

std::string extra_failure(const Check& c, const Reply& reply, std::string_view subject, bool& errored,
                          std::string& reason) {
  switch (c.type) {
  case Type::json_schema: return json_schema_failure(c, reply.text, subject);
  case Type::script: return script_failure(c, reply, subject, errored, reason);
  case Type::any_of:
  case Type::all_of: return group_failure(c, reply, subject, errored);
  case Type::weighted: {
    Share s = weighted_share(c, reply, subject);
    errored = s.errored;
    return s.errored || !s.passed ? s.detail : "";
  }
  case Type::negation: {
    const Result r = evaluate(c.children.front(), reply, subject);
    if (r.errored) {
      errored = true;
      return r.label + ": " + r.detail;
    }
    return r.passed ? "expected " + r.label + " to fail; it passed" : "";
  }
  case Type::similar: {
    const double s = similarity(c.method, reply.text, c.values.front());
    // The score is shown rounded; the comparison is on the exact value.
    if (s >= c.number) return "";
    return "expected " + std::string(c.method == Similarity::rouge_l ? "ROUGE-L F1" : "similarity") + " to " +
           snippet(c.values.front()) + " of at least " + show_number(c.number) + "; it is " +
           show_rounded(s) + " (" + what_came(subject, reply.text) + ")";
  }
  case Type::refusal: {
    if (reply.refused)
      return "expected not a refusal; the model refused (" + what_came(subject, reply.text) + ")";
    auto phrase = refusal_phrase(reply.text);
    if (!phrase) return "";
    return "expected not a refusal; " + std::string(subject) + " says " + snippet(*phrase);
  }
  case Type::finish_reason: {
    if (!reply.finish_reason) {
      errored = true;
      return "the reply has no finish reason";
    }
    const bool same = *reply.finish_reason == c.values.front();
    if (same != c.negate) return "";
    return std::string("expected the finish reason ") + (c.negate ? "not to be " : "to be ") +
           snippet(c.values.front()) + "; it is " + snippet(*reply.finish_reason);
  }
  case Type::tool_called: {
    const auto n = std::count_if(reply.tool_calls.begin(), reply.tool_calls.end(),
                                 [&](const ToolCall& tc) { return tc.name == c.values.front(); });
    const bool exact = c.min.has_value();
    if (exact ? static_cast<double>(n) == *c.min : n > 0) return "";
    return "expected " + snippet(c.values.front()) + " to be called " +
           (exact ? show_number(*c.min) + " time(s)" : std::string("at least once")) +
           "; the first response's " + tool_names(reply);
  }
  case Type::tool_args: return tool_args_failure(c, reply);
  case Type::tool_calls_text: {
    const Result r = evaluate(*c.inner, tool_calls_json(reply), "the tool calls' JSON");
    errored = r.errored;
    reason = r.reason;
    return r.passed ? "" : r.detail;
  }
  case Type::no_tool_call:
    return reply.tool_calls.empty() ? "" : "expected no tool call; the first response's " + tool_names(reply);
  case Type::tool_order: {
    std::vector<std::string> got;
    for (const auto& tc : reply.tool_calls)
      got.push_back(tc.name);
    return order_failure(c.mode, c.values, got);
  }
  case Type::latency_ms:
    if (!reply.latency_ms) {
      errored = true;
      return "the run has no latency";
    }
    if (*reply.latency_ms <= *c.max) return "";
    return "expected a latency of at most " + show_number(*c.max) + " ms; it was " +
           show_number(static_cast<double>(static_cast<long long>(*reply.latency_ms + 0.5))) + " ms";
  case Type::cost:
    if (!reply.cost_usd) {
      errored = true;
      return "the run has no cost (its usage is unknown, or gate.yaml's pricing has no row for the model)";
    }
    if (*reply.cost_usd <= *c.max) return "";
    // Ten decimals, no exponent: a fraction of a micro-dollar still shows.
    return "expected a cost of at most " + trimmed_fixed(*c.max, 10) + " USD; it was " +
           trimmed_fixed(*reply.cost_usd, 10) + " USD";
  default: break;
  }
  throw std::logic_error("check type \"" + type_name(c.type) + "\" has no evaluator");
}

} // namespace gate::check::detail

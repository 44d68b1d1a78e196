#pragma once

#include <boost/json/value.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gate::check {

class Regex;   // linear-time matcher, see regex.hpp
struct Schema; // a compiled JSON Schema, see schema.hpp

// The check types. Suites, reports and docs name them by type_name(); the
// enum is for the code's own dispatch. `stdout_text` is "stdout" (the C
// library takes the plain name for a macro).
// clang-format off
enum class Type {
  equals, contains, icontains, not_contains, starts_with, contains_any, contains_all, regex, json, number,
  length, llm_judge, exit_code, stdout_text, file_exists, file_contains, file_json, command, diff_size,
  file_scope, tool_sequence, final_state, any_of, all_of, negation, similar, refusal, finish_reason,
  tool_called, tool_args, no_tool_call, tool_order, latency_ms, cost, json_schema, script, weighted,
  tool_calls_text
};
// clang-format on

// What a type looks at: the answer text (text; also an agent's stdout), the
// model's reply beyond its text (reply: finish reason, tool calls, latency;
// model cases only), or what an agent run left (agent).
enum class Kind { text, reply, agent };

// similar: how two texts are compared (similarity()).
enum class Similarity { levenshtein, rouge_l };

// How a list of tool names is compared with the calls made.
enum class Order { equals, starts_with, contains };

// A parsed check, validated when the suite loads (an unknown type or a bad
// pattern is a suite error before any model call). Fields not used by a
// type stay empty.
struct Check {
  Type type = Type::equals;        // llm_judge: values[0] is the rubric; see judge.hpp
  std::string label;               // how results name it: type, or "type:<name>" when given a name
  std::vector<std::string> values; // the text operands (one for equals/contains/..., the regex pattern)
  bool trim = true, ignore_case = false, collapse_whitespace = false; // equals options
  std::shared_ptr<const Regex> regex;                                 // regex
  // json: each path is a JSON pointer with one condition.
  struct JsonPath {
    enum class Test { exists, equals, one_of, range };
    std::string pointer;             // as written, for messages
    std::vector<std::string> tokens; // decoded reference tokens (~0 ~1 undone)
    Test test = Test::exists;
    std::optional<boost::json::value> equals;
    std::vector<boost::json::value> one_of;
    std::optional<double> min,
        max;            // also: tool_called's exact `count` in min, latency_ms's `max`, cost's `max_usd`
    bool exists = true; // exists: false → the path must be absent
  };
  std::vector<JsonPath> json_paths;
  // json, json_schema: `find: "anywhere"` looks for JSON objects inside the
  // text (promptfoo's contains-json) instead of taking the whole answer.
  bool find_anywhere = false;
  // number: first number in the answer within value ± tolerance.
  double number = 0, tolerance = 0;
  // length: chars (code points) or words within [min, max].
  std::string unit = "chars";
  std::optional<double> min, max;
  // Agent checks (is_agent_type): parsed and validated here with the suite,
  // evaluated by gate/agent on the work copy. exit_code and diff_size use
  // `number`; file_contains `values[0]`; file_scope the allowed globs in
  // `values`; tool_sequence the tool names in `values`; final_state the
  // sha256 in `values[0]`.
  std::string path;              // relative to the work copy, no "..", not absolute; json_schema: the pointer
  std::vector<std::string> argv; // command: run in the work copy, no shell; script: run by the runner
  double timeout_s = 60;         // command, script
  Order mode = Order::equals;    // tool_sequence
  std::shared_ptr<const Check> inner; // stdout, tool_calls: the text check applied to that text
  // Groups (any_of, all_of, weighted) and negation (`{"not": {...}}`, one
  // child): the inner text or reply checks, in order.
  std::vector<Check> children;
  // weighted: one weight (>= 0) per child, and the share of the weights that
  // must pass; without it every child of a weight above 0 must.
  std::vector<double> weights;
  std::optional<double> pass_share;
  Similarity method = Similarity::levenshtein; // similar: against values[0], at least `number`
  bool negate = false;                         // finish_reason: values[0] is what it must not be
  // json_schema: the compiled schema, applied at `path` (tokens here).
  std::shared_ptr<const Schema> schema;
  std::vector<std::string> pointer;
};

// One row of the check type table (types.cpp), which drives the parser's
// field validation and docs/suite-format.md "Check types".
struct TypeInfo {
  struct Field {
    std::string name;
    std::string fallback; // what the parser uses when absent; "required" when it refuses
  };
  Type id;
  std::string type; // the name suites use
  Kind kind = Kind::text;
  std::vector<Field> fields; // besides "type" and "name"
  std::string passes;        // when the check passes, in Markdown
  std::string example;       // one check object, as a suite line holds it
};
const std::vector<TypeInfo>& type_table();
const TypeInfo* find_type(std::string_view type); // nullptr when unknown
const TypeInfo& info(Type type);
const std::string& type_name(Type type);

// True for the types that look at an agent run rather than an answer
// (Kind::agent).
bool is_agent_type(Type type);

// The `json` check's path conditions on an already parsed document: "" when
// all hold, else why not (short, redacted).
std::string json_paths_failure(const Check& c, const boost::json::value& doc);

// tool_sequence and tool_order: "" when the tool names `got` match `want`
// under `mode`, else why not (names redacted).
std::string order_failure(Order mode, const std::vector<std::string>& want,
                          const std::vector<std::string>& got);

// Similarity of two texts in [0, 1], both trimmed first (similar.cpp).
// levenshtein: 1 - edit distance / the longer length, in code points (an
// invalid byte is one), case kept. rouge_l: ROUGE-L F1 over whitespace-
// separated words, ASCII case ignored. Two empty texts are 1. Throws
// std::length_error when the texts are too long to compare in bounded time.
double similarity(Similarity method, std::string_view a, std::string_view b);

// The phrases that make an answer a refusal (refusal.cpp), lowercase with
// ASCII apostrophes; docs/suite-format.md "Refusal phrases" lists them.
const std::vector<std::string>& refusal_phrases();
// The first refusal phrase in `text` (ASCII case ignored, U+2019 read as
// an apostrophe), or nullopt.
std::optional<std::string> refusal_phrase(std::string_view text);

// The check types parse() accepts, in the order error messages list them.
const std::vector<std::string>& known_types();

// Parses one check object from a suite line. `expected` is the case's
// expected answer, used by `equals` when the check gives no value. Throws
// Error(bad_input) with `where` (file:line) and what was expected.
Check parse(const boost::json::value& spec, const std::optional<std::string>& expected,
            const std::string& where);

struct Result {
  std::string label;
  bool passed = false;
  std::string detail;      // why it failed, short and redacted; empty on pass
  bool errored = false;    // the check could not be evaluated (METRICS.md bucket `check`)
  std::string reason = {}; // llm_judge: the judge's reason; script: its stdout's first line; for a pass too
};

// What running a script check's argv gave. check/ starts no process: the
// runner does (gate/run/script.hpp), with the answer on stdin.
struct ScriptRun {
  bool started = false;
  std::string start_error; // why it could not start (not found, ...)
  bool timed_out = false;
  int exit_code = -1; // -1 when it ended by a signal
  int signal = 0;
  std::string out; // stdout, capped
};
// Runs a script check on the answer text; given to evaluate() in a Reply.
using ScriptRunner = std::function<ScriptRun(const Check& c, std::string_view answer)>;

// A script check's reason, its stdout's first line: at most this many bytes.
inline constexpr std::size_t k_script_reason_limit = 200;

// One tool call of a reply, as the checks see it.
struct ToolCall {
  std::string name;
  std::string arguments; // JSON text, as the model sent it or canonical
};

// What the checks see of one model reply. Only `text` is known for an
// agent's stdout; the rest is absent there, and the reply checks refuse it.
struct Reply {
  std::string_view text;
  std::optional<std::string> finish_reason; // absent when the provider gave none
  std::vector<ToolCall> tool_calls;         // the first response's, in order
  std::optional<double> latency_ms;         // the run's (for a replay, as recorded)
  // The model call's cost in USD over its chain (retries; not the judge's
  // calls), at gate.yaml's pricing; for a replay, what its recorded tokens
  // cost. Absent when the usage is unknown or the model has no price.
  std::optional<double> cost_usd;
  // The provider says the model refused (model::Reply::refused): a
  // `refusal` check fails whatever the words, which are `text`.
  bool refused = false;
  bool from_model = true;               // false: only text (an agent's stdout)
  const ScriptRunner* script = nullptr; // runs script checks; absent: they are errored
};

// Evaluates a check on a model's reply. Pure; never throws for any answer
// bytes (invalid UTF-8 and NUL included). An llm_judge check needs a model
// call: here it is errored; the runner evaluates it. `subject` names the
// text in failure details ("expected ...; <subject> is ...").
Result evaluate(const Check& c, const Reply& reply, std::string_view subject = "the answer");
// The same on text alone (an agent's stdout, a test's answer): reply checks
// are errored.
Result evaluate(const Check& c, std::string_view text, std::string_view subject = "the answer");

// The first number in `text`: an optional sign (not after a letter or
// digit; "-", "+" or U+2212), digits with optional thousands commas
// (1,234,567), an optional decimal part; ".5" is 0.5. No exponent: "1e5"
// is 1. nullopt when there is none.
std::optional<double> first_number(std::string_view text);

// Resolves RFC 6901 reference tokens in `doc`; nullptr when absent.
const boost::json::value* resolve_pointer(const boost::json::value& doc,
                                          const std::vector<std::string>& tokens);

// JSON equality where numbers compare by value (1 == 1.0).
bool json_equal(const boost::json::value& a, const boost::json::value& b);

} // namespace gate::check

#include <gate/check/check.hpp>

#include <algorithm>

namespace gate::check {

// The one list of check types: the parser takes the allowed fields from
// here, and docs/suite-format.md "Check types" is kept equal to it by
// tests/unit/test_check_types.cpp. A field's default is what the parser
// uses when it is absent ("required" when it refuses).
const std::vector<TypeInfo>& type_table() {
  static const std::vector<TypeInfo> k_types = {
      {Type::equals,
       "equals",
       Kind::text,
       {{"value", "the case's `expected`"},
        {"trim", "true"},
        {"ignore_case", "false"},
        {"collapse_whitespace", "false"}},
       "the answer equals `value`, both first trimmed of surrounding whitespace (`trim`), with runs of "
       "whitespace made one space (`collapse_whitespace`) and case ignored (`ignore_case`, [Unicode case "
       "folding](#case-and-words)) when asked",
       R"({"type": "equals", "value": "Paris", "ignore_case": true})"},
      {Type::contains,
       "contains",
       Kind::text,
       {{"value", "required"}},
       "the answer contains `value` (bytes, case matters)",
       R"({"type": "contains", "value": "refund"})"},
      {Type::icontains,
       "icontains",
       Kind::text,
       {{"value", "required"}},
       "the answer contains `value`, case ignored ([Unicode case folding](#case-and-words))",
       R"({"type": "icontains", "value": "Refund"})"},
      {Type::not_contains,
       "not_contains",
       Kind::text,
       {{"value", "required"}},
       "the answer does not contain `value`",
       R"({"type": "not_contains", "value": "as an AI"})"},
      {Type::starts_with,
       "starts_with",
       Kind::text,
       {{"value", "required"}},
       "the answer, after leading whitespace, starts with `value`",
       R"({"type": "starts_with", "value": "Yes"})"},
      {Type::contains_any,
       "contains_any",
       Kind::text,
       {{"values", "required"}},
       "the answer contains at least one of `values`",
       R"({"type": "contains_any", "values": ["refund", "money back"]})"},
      {Type::contains_all,
       "contains_all",
       Kind::text,
       {{"values", "required"}},
       "the answer contains every one of `values`",
       R"({"type": "contains_all", "values": ["order", "refund"]})"},
      {Type::regex,
       "regex",
       Kind::text,
       {{"pattern", "required"}, {"ignore_case", "false"}},
       "`pattern` matches somewhere in the answer (RE2, linear time: no backreferences or lookaround; "
       "[Regex dialect](#regex-dialect)); `ignore_case` is a leading `(?i)`",
       R"({"type": "regex", "pattern": "^\\d{3}-\\d{4}$"})"},
      {Type::json,
       "json",
       Kind::text,
       {{"paths", "[]"}, {"find", "\"answer\""}},
       "the answer (trimmed), else the body of its first fenced code block tagged json, else of its first "
       "fenced block, is JSON (with `find: \"anywhere\"`: one of the [JSON objects inside the "
       "text](#json-inside-text) is) and every condition in `paths` holds: each `{\"path\": <JSON pointer>, "
       "...}` "
       "with exactly "
       "one of `equals` (a JSON value; numbers by value), `one_of` (an array), `min`/`max` (a number in "
       "range), `exists` (true, or false: must be absent)",
       R"({"type": "json", "paths": [{"path": "/status", "equals": "ok"}, {"path": "/items/0/qty", "min": 1}]})"},
      {Type::number,
       "number",
       Kind::text,
       {{"value", "required"}, {"tolerance", "0"}},
       "the first number in the answer (`first_number` in check.hpp: `1,234.5`, `-3`, `.5`; no exponent) "
       "is within `value` ± `tolerance`",
       R"({"type": "number", "value": 42, "tolerance": 0.5})"},
      {Type::length,
       "length",
       Kind::text,
       {{"unit", "\"chars\""}, {"min", "none"}, {"max", "none"}},
       "the answer's length in code points (`chars`) or `words` ([split on Unicode "
       "whitespace](#case-and-words)) is within [`min`, "
       "`max`]; at least one bound is required",
       R"({"type": "length", "unit": "words", "max": 50})"},
      {Type::llm_judge,
       "llm_judge",
       Kind::text,
       {{"rubric", "required"}},
       "a grader model (`judge.model` in gate.yaml, else `model.name`) reads the rubric, the conversation "
       "and "
       "the answer and replies pass (`gate/check/judge.hpp`); not in agent cases",
       R"({"type": "llm_judge", "rubric": "The reply apologises and offers a refund."})"},
      {Type::exit_code,
       "exit_code",
       Kind::agent,
       {{"value", "0"}},
       "the agent command exited with `value` (0–255)",
       R"({"type": "exit_code", "value": 0})"},
      {Type::stdout_text,
       "stdout",
       Kind::agent,
       {{"check", "required"}},
       "the text check `check` holds on the command's stdout (a text check directly in an agent case does "
       "the same)",
       R"({"type": "stdout", "check": {"type": "contains", "value": "done"}})"},
      {Type::file_exists,
       "file_exists",
       Kind::agent,
       {{"path", "required"}},
       "a file, symlink or non-empty directory is at `path`",
       R"({"type": "file_exists", "path": "answer.txt"})"},
      {Type::file_contains,
       "file_contains",
       Kind::agent,
       {{"path", "required"}, {"value", "required"}},
       "the file at `path` contains `value`",
       R"({"type": "file_contains", "path": "answer.txt", "value": "Buy milk"})"},
      {Type::file_json,
       "file_json",
       Kind::agent,
       {{"path", "required"}, {"paths", "[]"}},
       "the file at `path` is JSON and every condition in `paths` holds (as in `json`)",
       R"({"type": "file_json", "path": "out.json", "paths": [{"path": "/ok", "equals": true}]})"},
      {Type::command,
       "command",
       Kind::agent,
       {{"argv", "required"}, {"timeout", "60"}},
       "`argv` (no shell), run in the work copy with the agent's environment, exits 0 within `timeout` "
       "seconds; one that cannot start is errored",
       R"({"type": "command", "argv": ["python3", "-m", "pytest", "-q"], "timeout": 120})"},
      {Type::diff_size,
       "diff_size",
       Kind::agent,
       {{"max", "required"}},
       "lines changed against the fixture (removed + added under a longest common subsequence, summed over "
       "files; a symlink change counts 1) are at most `max`",
       R"({"type": "diff_size", "max": 20})"},
      {Type::file_scope,
       "file_scope",
       Kind::agent,
       {{"allow", "required"}},
       "every created, changed or deleted path matches one of the globs in `allow` (`*` also matches `/`)",
       R"({"type": "file_scope", "allow": ["src/*", "tests/*"]})"},
      {Type::tool_sequence,
       "tool_sequence",
       Kind::agent,
       {{"equals", "one of the three"},
        {"starts_with", "one of the three"},
        {"contains", "one of the three"}},
       "the run's tool calls, by name, equal / start with / contain in order (not necessarily adjacent) "
       "the given names",
       R"({"type": "tool_sequence", "contains": ["read_file", "write_answer"]})"},
      {Type::final_state,
       "final_state",
       Kind::agent,
       {{"path", "required"}, {"sha256", "required"}},
       "the sha256 of the file at `path` is `sha256` (64 lowercase hex digits)",
       R"({"type": "final_state", "path": "answer.txt", "sha256": "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"})"},
      {Type::any_of,
       "any_of",
       Kind::text,
       {{"checks", "required"}},
       "at least one of `checks` (text or reply checks, not `llm_judge`) passes; the label lists them; "
       "if one is errored the group is errored",
       R"({"type": "any_of", "checks": [{"type": "contains", "value": "refund"}, {"type": "contains", "value": "money back"}]})"},
      {Type::all_of,
       "all_of",
       Kind::text,
       {{"checks", "required"}},
       "every one of `checks` passes; the detail names each that failed; if one is errored the group is "
       "errored",
       R"({"type": "all_of", "checks": [{"type": "starts_with", "value": "Yes"}, {"type": "length", "max": 200}]})"},
      {Type::negation,
       "not",
       Kind::text,
       {{"not", "required"}},
       "written without `type`: the inner check (text or reply) fails; an errored inner check is errored; "
       "labelled `not(<inner label>)`",
       R"({"not": {"type": "contains", "value": "as an AI"}})"},
      {Type::similar,
       "similar",
       Kind::text,
       {{"value", "the case's `expected`"}, {"method", "\"levenshtein\""}, {"threshold", "0.8"}},
       "the similarity of the answer to `value`, both trimmed, is at least `threshold`: `levenshtein` is 1 "
       "− edit distance / the longer length, in code points, case kept; `rouge_l` is the ROUGE-L F1 of "
       "words ([split and case-folded](#case-and-words)); two empty texts score 1",
       R"({"type": "similar", "value": "Your order ships on Monday.", "method": "rouge_l", "threshold": 0.6})"},
      {Type::refusal,
       "refusal",
       Kind::text,
       {},
       "the answer is not a refusal: the provider did not report one (OpenAI `refusal`, Anthropic "
       "`stop_reason` `refusal`) and it contains none of the [refusal phrases](#refusal-phrases) (case "
       "ignored, ’ read as ')",
       R"({"type": "refusal"})"},
      {Type::finish_reason,
       "finish_reason",
       Kind::reply,
       {{"equals", "one of the two"}, {"not", "one of the two"}},
       "the reply's finish reason (OpenAI `finish_reason`, Anthropic `stop_reason`) is `equals`, or is "
       "not `not`; a reply without one is errored",
       R"({"type": "finish_reason", "not": "length"})"},
      {Type::tool_called,
       "tool_called",
       Kind::reply,
       {{"tool", "required"}, {"count", "none"}},
       "the first response calls the tool `tool` at least once, or exactly `count` times",
       R"({"type": "tool_called", "tool": "get_weather"})"},
      {Type::tool_args,
       "tool_args",
       Kind::reply,
       {{"tool", "required"}, {"paths", "[]"}},
       "the first response calls `tool`, and the arguments of its first such call are JSON for which "
       "every condition in `paths` holds (as in `json`)",
       R"({"type": "tool_args", "tool": "get_weather", "paths": [{"path": "/city", "equals": "Paris"}]})"},
      {Type::no_tool_call,
       "no_tool_call",
       Kind::reply,
       {},
       "the first response calls no tool",
       R"({"type": "no_tool_call"})"},
      {Type::tool_order,
       "tool_order",
       Kind::reply,
       {{"equals", "one of the three"},
        {"starts_with", "one of the three"},
        {"contains", "one of the three"}},
       "the first response's tool calls, by name, equal / start with / contain in order (not necessarily "
       "adjacent) the given names",
       R"({"type": "tool_order", "contains": ["search", "fetch"]})"},
      {Type::latency_ms,
       "latency_ms",
       Kind::reply,
       {{"max", "required"}},
       "the run's model latency in milliseconds is at most `max`; a replayed run has the latency recorded "
       "with its answer",
       R"({"type": "latency_ms", "max": 5000})"},
      {Type::cost,
       "cost",
       Kind::reply,
       {{"max_usd", "required"}},
       "the model call's cost in USD (its tokens, retries included, at gate.yaml's `pricing` for the model; "
       "judge calls not included) is at most `max_usd`; a replayed run is judged on its recorded tokens; "
       "errored when the usage or the model's price is unknown",
       R"({"type": "cost", "max_usd": 0.002})"},
      {Type::json_schema,
       "json_schema",
       Kind::text,
       {{"schema", "required"}, {"path", "\"\""}, {"find", "\"answer\""}},
       "the answer's JSON (found as `json` finds it; with `find: \"anywhere\"`, any one of the JSON "
       "objects inside the text), or the value at the JSON pointer `path` in it, is "
       "valid against `schema`, a [subset of JSON Schema 2020-12](#json-schema-subset) compiled when the "
       "suite loads; the detail names the first failing place and keyword (`/items/0/qty: 0 is less than "
       "minimum 1`)",
       R"({"type": "json_schema", "schema": {"type": "object", "required": ["status"], "properties": {"status": {"enum": ["ok", "failed"]}}}})"},
      {Type::script,
       "script",
       Kind::text,
       {{"argv", "required"}, {"timeout", "10"}},
       "`argv` (no shell), run from the suite directory with the answer on stdin and the case in "
       "`GATE_CASE` ([Script checks](#script-checks)), exits 0 within `timeout` seconds; its stdout's first "
       "line is the reason; one that cannot start, times out or is killed is errored; not in agent cases",
       R"({"type": "script", "argv": ["python3", "grade.py"], "timeout": 10})"},
      {Type::weighted,
       "weighted",
       Kind::text,
       {{"checks", "required"}, {"weights", "1 for each check"}, {"threshold", "none"}},
       "the weighted share of `checks` that pass (each passing check adds its weight; a `weighted` check "
       "inside adds its own share times its weight; no weight at all is a share of 0) is at least "
       "`threshold` (0 to 1); without `threshold`, every check of a weight above 0 passes (promptfoo's "
       "test `threshold` and `assert-set`); if one is errored the group is errored",
       R"({"type": "weighted", "threshold": 0.5, "checks": [{"type": "contains", "value": "refund"}, {"type": "length", "max": 200}], "weights": [2, 1]})"},
      {Type::tool_calls_text,
       "tool_calls",
       Kind::reply,
       {{"check", "required"}},
       "the text check `check` holds on the first response's tool calls as JSON: `[{\"arguments\": ..., "
       "\"name\": ...}]`, canonical (sorted keys, no spaces), the arguments parsed when they are JSON, "
       "else their text; `[]` when it calls none",
       R"({"type": "tool_calls", "check": {"type": "contains", "value": "Paris"}})"},
  };
  return k_types;
}

const TypeInfo* find_type(std::string_view type) {
  const auto& t = type_table();
  auto it = std::find_if(t.begin(), t.end(), [&](const TypeInfo& i) { return i.type == type; });
  return it == t.end() ? nullptr : &*it;
}

const TypeInfo& info(Type type) {
  // The table is in enum order (tests/unit/test_check_types.cpp).
  return type_table().at(static_cast<std::size_t>(type));
}

const std::string& type_name(Type type) { return info(type).type; }

bool is_agent_type(Type type) { return info(type).kind == Kind::agent; }

const std::vector<std::string>& known_types() {
  static const std::vector<std::string> k_names = [] {
    std::vector<std::string> out;
    for (const auto& t : type_table())
      out.push_back(t.type);
    return out;
  }();
  return k_names;
}

} // namespace gate::check

#pragma once

// Internal to gate_importer: the pieces import_promptfoo() puts together.

#include <boost/json/object.hpp>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <gate/importer/importer.hpp>
#include <gate/importer/node.hpp>

namespace gate::importer::detail {

using Vars = std::map<std::string, std::string>;

// What the import report lists. A finding repeated word for word (a
// defaultTest assertion, met once per test) is kept once.
struct Findings {
  std::vector<Finding> unmapped;
  std::vector<Finding> notes;
  void unmapped_at(const Node& n, const std::string& what, const std::string& reason);
  void note_at(const Node& n, const std::string& what, const std::string& reason);
};

// Renders promptfoo's {{var}} in an assertion's value with the test's vars,
// as promptfoo does before it asserts (an undefined var is ""). nullopt with
// `why` set when the text uses nunjucks beyond {{name}}.
std::optional<std::string> render_value(const std::string& text, const Vars& vars, std::string& why);

// Where the config's files are read from. A file outside `base` (by
// ../, an absolute path or a symlink) is refused unless it is inside one of
// `allow_outside`; every file read is named in `files_read`.
struct ReadContext {
  std::filesystem::path base; // the config's directory: promptfoo's paths are relative to it
  Findings* findings = nullptr;
  std::vector<std::filesystem::path> allow_outside;
  std::set<std::string>* files_read = nullptr;
};

struct AssertContext {
  const Vars* vars = nullptr;
  bool anthropic = false;           // the chosen provider's finish reasons are Anthropic's
  std::set<int>* runners = nullptr; // the CodeLanguage of each runner a check runs (written to the suite)
  bool rubric_prompt = false;       // the test's options.rubricPrompt replaces promptfoo's grading prompt
  const boost::json::object* js_vars = nullptr; // the same vars as JavaScript holds them
  const ReadContext* read = nullptr;            // where a grader file is read from
  bool text_prompt = false; // the prompt is one text, so promptfoo's context.prompt is the user message
  // Files the checks run, by their name in suite/ (a javascript grader file).
  std::map<std::string, std::string>* suite_files = nullptr;
  bool weights_count = false; // inside a threshold's share: weights are kept, not noted as dropped
  // The chosen provider is given tools: a reply may be tool calls, which
  // promptfoo's text assertions then read as JSON (OpenAI: the calls, or
  // the whole message with its text; Anthropic: each block's JSON after the
  // text).
  enum class Tools { none, openai, anthropic } tools = Tools::none;
};

// The scripts a python or javascript assertion's check runs (written to suite/).
extern const std::string_view k_python_runner;
inline constexpr const char* k_python_runner_name = "promptfoo_python.py";
extern const std::string_view k_javascript_runner;
inline constexpr const char* k_javascript_runner_name = "promptfoo_javascript.mjs";
// One promptfoo assertion (a mapping with "type") as a gate check, or
// nullopt with the reason in `findings`. The check is validated by gate's
// own parser, so what is returned loads.
std::optional<boost::json::object> map_assert(const Node& a, const AssertContext& ctx, Findings& findings);

// A test's or an assert-set's `threshold` as promptfoo reads it: a number,
// else none (noted: promptfoo ignores it, so every assertion must pass).
const Node* read_threshold(const Node* threshold, Findings& findings);

// Assertions scored together against a threshold (a test's `threshold`, an
// assert-set's) as one `weighted` check with their weights, or nullopt with
// `why`: promptfoo's share is exact only over assertions it scores 1 or 0.
// Without `threshold`, every assertion of a weight above 0 must pass.
std::optional<boost::json::object> weighted_checks(const std::vector<const Node*>& asserts,
                                                   const Node* threshold, const AssertContext& ctx,
                                                   Findings& findings, std::string& why);

// A python (or javascript) assertion as a script check running a generated
// runner (code_asserts.cpp), or nullopt with `why` set. `what` names the
// assertion in notes; `negated` is its not- prefix.
enum class CodeLanguage { python, javascript };
// The runner a language's checks run: its file name in suite/, its text and
// what the import lists it as.
struct CodeRunner {
  std::string name;
  std::string_view text;
  std::string what;
};
const CodeRunner& code_runner(CodeLanguage language);
std::optional<boost::json::object> map_code(CodeLanguage language, const Node& a, const AssertContext& ctx,
                                            Findings& findings, const std::string& what, bool negated,
                                            std::string& why);

// A JavaScript regular expression (promptfoo's `new RegExp(value)`: no
// flags) in gate's regex dialect (js_regex.cpp). `error` is set when
// JavaScript refuses the pattern (promptfoo then fails the assertion,
// negated or not), `unsupported` when it is valid JavaScript that gate's
// linear-time regex cannot express (lookaround, backreferences); else
// `pattern` matches exactly what the JavaScript pattern matches, except that
// gate reads code points where JavaScript reads UTF-16 units (`.` is one
// emoji, not half of one).
struct JsRegex {
  std::string pattern;
  std::string error;
  std::string unsupported;
};
JsRegex js_regex_to_gate(std::string_view js);

// promptfoo compares String(value) of what js-yaml read (js_value.cpp):
// JavaScript's Number::toString of a number (1.50 is "1.5", 1e21 is
// "1e+21"), "true"/"false"; nullopt for text and for a quoted scalar.
std::string js_number_string(double v);
std::optional<std::string> js_scalar_text(const Node& n);
// contains-any's text split as promptfoo splits it: at commas, values
// trimmed, empty ones dropped, a "quoted value" keeping its commas (\" and
// "" inside). nullopt with `why` when promptfoo refuses the text.
std::optional<std::vector<std::string>> js_comma_values(std::string_view s, std::string& why);
// Each finish reason the provider sends that promptfoo reports as `name`
// (its normalizeFinishReason: Anthropic's end_turn and stop_sequence are
// "stop", OpenAI's function_call "tool_calls", ...); none for a name it never
// reports for that provider (end_turn: promptfoo reports it as "stop").
std::vector<std::string> provider_finish_reasons(const std::string& name, bool anthropic);

// A CSV cell of an __expected column as promptfoo reads it: "type:value",
// "type(threshold):value", "not-type:...", "grade:..." or else an equals.
Node assertion_from_string(const std::string& text, const std::string& file, std::size_t line);

// The tests of a config: inline, from files (CSV, JSON Lines, YAML, JSON,
// simple globs), defaultTest merged in, list-valued vars expanded, file://
// vars read. Each test is a mapping node (description, vars, assert, ...);
// what cannot be read is in `findings`.
struct Test {
  Node node;                   // the test after the merge: "vars" holds strings only
  Vars vars;                   // the same vars as strings
  std::string tag;             // "" or why the test cannot be imported (listed already)
  bool rubric_prompt = false;  // options.rubricPrompt, of the test or defaultTest
  boost::json::object js_vars; // `vars` as JavaScript holds them: a YAML number stays a number
};
std::vector<Test> read_tests(const Node& config, const ReadContext& ctx);

// `rel` itself, or the files its file-name glob ("tests/*.csv") matches in
// name order; no match is Error(bad_input) at `from`.
std::vector<std::string> expand_glob(const std::filesystem::path& base, const std::string& rel,
                                     const Node& from);

// Reads `path` (relative to base) as promptfoo would name it in the report.
std::string report_name(const std::filesystem::path& base, const std::filesystem::path& file);
// Error(bad_input) at `from` for a file outside the allowed directories,
// one that is missing or too large, or text that is not UTF-8.
std::string read_text(const ReadContext& ctx, const std::string& rel, const Node& from);

// The chosen provider as gate.yaml's model block, or nullopt (with the
// reason) for one gate does not speak.
struct Model {
  std::string provider; // openai | anthropic | azure
  std::string name;
  std::string base_url;                        // "" = the provider's default
  std::string api_key_env;                     // "" = the provider's default
  std::string api;                             // "" or "responses"
  std::string api_version;                     // azure deployments
  std::map<std::string, std::string> settings; // temperature, top_p, max_tokens, seed: YAML text
  boost::json::object extra;                   // model.extra
  std::string id;                              // the promptfoo id
};
std::optional<Model> map_provider(const Node& p, Findings& findings, std::string& why);

} // namespace gate::importer::detail

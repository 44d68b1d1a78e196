#include <gate/importer/detail.hpp>

#include <algorithm>
#include <boost/json/value.hpp>
#include <cctype>

#include <re2/re2.h>

#include <gate/check/check.hpp>
#include <gate/prompt/template.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::importer::detail {

namespace bj = boost::json;

namespace {

// promptfoo's assertion types that run code, grade with embeddings or
// models, or test what gate has no check for: listed with one reason each.
const std::vector<std::pair<std::vector<std::string>, std::string>>& unmappable() {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> k_rows = {
      {{"ruby", "webhook"},
       "runs code inside promptfoo; gate's script check runs a program of your own with the answer on stdin "
       "(docs/suite-format.md \"Script checks\"), and no generated one would behave the same"},
      {{"levenshtein"},
       "promptfoo's threshold is an edit distance in characters; gate's similar check compares a ratio "
       "(1 - distance / the longer length), a different test"},
      {{"similar"}, "embedding similarity through a provider; gate's similar check is lexical"},
      {{"rouge-n", "bleu", "gleu", "meteor"}, "gate's similar check computes levenshtein and rouge_l only"},
      {{"model-graded-closedqa",
        "model-graded-factuality",
        "factuality",
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "g-eval",
        "select-best",
        "max-score",
        "moderation",
        "classifier",
        "pi",
        "perplexity",
        "perplexity-score",
        "is-valid-openai-tools-call",
        "is-valid-openai-function-call",
        "is-valid-function-call",
        "tool-call-f1",
        "is-xml",
        "contains-xml",
        "is-sql",
        "contains-sql",
        "is-html",
        "contains-html",
        "is-refusal",
        "human",
        "guardrails",
        "conversation-relevance",
        "trace-span-count",
        "trace-span-duration",
        "trace-error-spans",
        "search-rubric",
        "llm-rubric-with-tools"},
       "no gate check does what this assertion does"},
  };
  return k_rows;
}

const std::string* unmappable_reason(const std::string& type) {
  for (const auto& [types, reason] : unmappable())
    if (std::find(types.begin(), types.end(), type) != types.end()) return &reason;
  return nullptr;
}

const std::vector<std::string> k_mapped = {"equals",        "contains",     "icontains",     "regex",
                                           "starts-with",   "contains-any", "contains-all",  "icontains-any",
                                           "icontains-all", "is-json",      "contains-json", "llm-rubric",
                                           "latency",       "cost",         "finish-reason", "assert-set",
                                           "python",        "word-count",   "javascript"};

bool mapped_type(const std::string& t) {
  return std::find(k_mapped.begin(), k_mapped.end(), t) != k_mapped.end();
}

// With tools, promptfoo's text assertions read a reply that has tool calls
// as JSON text (runAssertion's outputString): the calls, or the message with
// its text (OpenAI), or the text then each block's JSON (Anthropic). The
// text checks become any_of(the check on the answer, the check on the
// calls' JSON); is-json and contains-json, which any call then passes on
// OpenAI, any_of(the check, a call was made). false (with `why`) when
// gate's checks cannot read the reply as promptfoo does.
bool tool_call_view(const std::string& type, bj::object& check, const AssertContext& ctx, const Node& a,
                    const std::string& what, Findings& findings, std::string& why) {
  static const std::vector<std::string> k_text = {
      "contains", "icontains", "contains-any", "contains-all", "icontains-any", "icontains-all", "regex"};
  if (std::find(k_text.begin(), k_text.end(), type) != k_text.end()) {
    bj::object view{{"type", "tool_calls"}, {"check", check}};
    check = bj::object{{"type", "any_of"}, {"checks", bj::array{check, std::move(view)}}};
    findings.note_at(
        a, what,
        "the provider has tools: on a reply with tool calls gate checks the answer or the calls' "
        "names and arguments as canonical JSON (the tool_calls check); promptfoo checks its own "
        "JSON of them (ids, and OpenAI's arguments as escaped text)");
    return true;
  }
  if (type == "is-json" || type == "contains-json") {
    if (ctx.tools == AssertContext::Tools::anthropic) {
      why = "the provider has tools: promptfoo reads an Anthropic reply with tool calls as its text and "
            "each block's JSON, one after the other, which no gate check reads";
      return false;
    }
    if (check.contains("schema")) {
      why = "the provider has tools: on a reply with tool calls promptfoo applies the schema to its JSON of "
            "the calls (or of the message), which no gate check reads";
      return false;
    }
    // Any call makes promptfoo's text JSON: the calls, or the message.
    check =
        bj::object{{"type", "any_of"},
                   {"checks", bj::array{check, bj::object{{"not", bj::object{{"type", "no_tool_call"}}}}}}};
    return true;
  }
  if (type == "equals" || type == "starts-with" || type == "word-count")
    findings.note_at(a, what,
                     "the provider has tools: on a reply with tool calls promptfoo checks its JSON of them, "
                     "gate the answer's text");
  return true;
}

// An assertion's `weight` (1 when absent), or nullopt with `why`.
std::optional<double> assertion_weight(const Node& a, std::string& why) {
  const Node* w = a.is_map() ? a.get("weight") : nullptr;
  if (w == nullptr) return 1.0;
  const bj::value v = to_json(*w);
  if (!v.is_number() || v.to_number<double>() < 0) {
    why = "weight " + describe(*w) + ": expected a number of at least 0";
    return std::nullopt;
  }
  return v.to_number<double>();
}

// The members of a group (an assert-set, a test's threshold) as checks with
// their weights, a weight-0 member left out (promptfoo passes it whatever
// the answer), or nullopt with `why`: a group holds every member or is not
// carried over.
struct Members {
  bj::array checks;
  bj::array weights;
};

std::optional<Members> group_members(const std::vector<const Node*>& items, const AssertContext& ctx,
                                     Findings& findings, std::string& why) {
  Members out;
  for (const Node* item : items) {
    const auto w = assertion_weight(*item, why);
    if (!w) return std::nullopt;
    if (*w == 0) continue;
    Findings local;
    auto c = map_assert(*item, ctx, local);
    for (auto& n : local.notes)
      findings.notes.push_back(std::move(n));
    if (!c || c->contains("rubric")) {
      why = c ? "an llm-rubric inside; gate's groups hold no llm_judge"
              : "an assertion inside cannot be mapped (" + local.unmapped.front().reason + ")";
      return std::nullopt;
    }
    out.checks.push_back(std::move(*c));
    out.weights.push_back(*w);
  }
  if (out.checks.empty()) {
    why = "every assertion inside has weight 0, which promptfoo passes whatever the answer";
    return std::nullopt;
  }
  return out;
}

struct Mapper {
  const Node& a;
  const AssertContext& ctx;
  Findings& findings;
  std::string what;
  std::string why; // set when the assertion cannot be mapped

  std::optional<std::string> scalar(const Node* v) {
    if (v == nullptr || !v->is_scalar()) {
      why = "expected a text value, got " + (v == nullptr ? std::string("none") : describe(*v));
      return std::nullopt;
    }
    if (v->text.starts_with("file://")) {
      why = "a file:// value, which promptfoo loads or runs; gate import reads none";
      return std::nullopt;
    }
    // A YAML number or boolean: promptfoo compares String(value) (1.50 is "1.5").
    if (auto js = js_scalar_text(*v)) return js;
    return render_value(v->text, *ctx.vars, why);
  }

  // contains-any/all: a list of texts, or one text split at commas as promptfoo
  // does (a "quoted, value" keeps its comma).
  std::optional<std::vector<std::string>> texts(const Node* v) {
    std::vector<std::string> out;
    if (v != nullptr && v->is_list()) {
      for (const Node& item : v->items) {
        auto s = scalar(&item);
        if (!s) return std::nullopt;
        out.push_back(*s);
      }
    } else {
      auto s = scalar(v);
      if (!s) return std::nullopt;
      auto split = js_comma_values(*s, why);
      if (!split) return std::nullopt;
      out = std::move(*split);
    }
    if (out.empty()) why = "an empty list of values";
    return out.empty() ? std::nullopt : std::optional(out);
  }

  std::optional<double> threshold() {
    const Node* t = a.get("threshold");
    if (t == nullptr || !t->is_scalar()) {
      why = "no threshold; expected a number";
      return std::nullopt;
    }
    const bj::value v = to_json(*t);
    if (!v.is_number()) {
      why = "threshold " + describe(*t) + " is not a number";
      return std::nullopt;
    }
    return v.to_number<double>();
  }

  bj::object text_check(const char* type, const std::string& value) {
    return {{"type", type}, {"value", value}};
  }

  bj::object group(const char* type, const char* inner, const std::vector<std::string>& values) {
    bj::array checks;
    for (const auto& v : values)
      checks.push_back(bj::object{{"type", inner}, {"value", v}});
    return {{"type", type}, {"checks", std::move(checks)}};
  }

  bool negated = false;

  std::optional<bj::object> base(const std::string& type) {
    const Node* value = a.get("value");
    if (type == "equals") {
      if (value != nullptr && !value->is_scalar()) {
        why = "a JSON value to compare with; gate's equals compares text";
        return std::nullopt;
      }
      auto v = scalar(value);
      if (!v) return std::nullopt;
      return bj::object{{"type", "equals"}, {"value", *v}, {"trim", false}};
    }
    if (type == "contains" || type == "icontains") {
      auto v = scalar(value);
      if (!v) return std::nullopt;
      return text_check(type.c_str(), *v);
    }
    if (type == "regex") {
      auto v = scalar(value);
      if (!v) return std::nullopt;
      const JsRegex js = js_regex_to_gate(*v);
      if (!js.error.empty()) {
        why = "JavaScript refuses the pattern (" + js.error +
              "): promptfoo fails this assertion on every run, negated or not";
        return std::nullopt;
      }
      if (!js.unsupported.empty()) {
        why = "valid JavaScript that gate's regex cannot express: " + js.unsupported;
        return std::nullopt;
      }
      return bj::object{{"type", "regex"}, {"pattern", js.pattern}};
    }
    if (type == "starts-with") {
      auto v = scalar(value);
      if (!v) return std::nullopt;
      // promptfoo's startsWith is on the answer as it came; gate's starts_with
      // skips leading whitespace: a regex anchored at the very start is exact.
      return bj::object{{"type", "regex"}, {"pattern", "^" + re2::RE2::QuoteMeta(*v)}};
    }
    if (type == "contains-any" || type == "contains-all") {
      auto v = texts(value);
      if (!v) return std::nullopt;
      bj::array values(v->begin(), v->end());
      return bj::object{{"type", type == "contains-any" ? "contains_any" : "contains_all"},
                        {"values", std::move(values)}};
    }
    if (type == "icontains-any" || type == "icontains-all") {
      auto v = texts(value);
      if (!v) return std::nullopt;
      return group(type == "icontains-any" ? "any_of" : "all_of", "icontains", *v);
    }
    if (type == "is-json" || type == "contains-json") {
      // contains-json: the objects inside the text, found as promptfoo finds them.
      const bool anywhere = type == "contains-json";
      auto found = [&](bj::object c) {
        if (anywhere) c["find"] = "anywhere";
        return c;
      };
      if (anywhere)
        findings.note_at(a, what,
                         "gate parses each object it finds as JSON; promptfoo as YAML, which also reads "
                         "unquoted keys, single quotes and // comments");
      else
        findings.note_at(a, what,
                         "gate also accepts the JSON in the answer's first fenced code block; promptfoo "
                         "takes the whole answer only");
      if (value == nullptr || (value->is_scalar() && value->text.empty())) return found({{"type", "json"}});
      findings.note_at(a, what,
                       "the schema is checked by gate's subset of JSON Schema 2020-12; promptfoo's ajv reads "
                       "draft-07");
      if (!value->is_scalar()) return found({{"type", "json_schema"}, {"schema", to_json(*value)}});
      if (value->text.starts_with("file://")) {
        why = "a schema in a file, which promptfoo loads; gate import takes one written in the config";
        return std::nullopt;
      }
      // A schema as text (a CSV cell, a YAML string): promptfoo reads it as YAML, of which JSON is a part.
      try {
        const std::string_view schema_text = trim_space(value->text);
        return found(
            {{"type", "json_schema"},
             {"schema", schema_text.starts_with('{') ? json::parse_strict(schema_text, a.where())
                                                     : to_json(read_yaml(schema_text, a.where(), false))}});
      } catch (const Error& e) {
        why = std::string("the schema text does not parse: ") + e.what();
        return std::nullopt;
      }
    }
    if (type == "llm-rubric") {
      if (a.get("rubricPrompt") != nullptr || ctx.rubric_prompt) {
        why = "a custom rubricPrompt; gate's judge has one fixed prompt";
        return std::nullopt;
      }
      auto v = scalar(value);
      if (!v) return std::nullopt;
      findings.note_at(a, what,
                       "graded by gate's judge (judge.model in gate.yaml, else model.name) with its own "
                       "prompt and a pass/fail verdict, not promptfoo's grader and score");
      return bj::object{{"type", "llm_judge"}, {"rubric", *v}};
    }
    if (type == "python") return map_code(CodeLanguage::python, a, ctx, findings, what, negated, why);
    if (type == "javascript") return map_code(CodeLanguage::javascript, a, ctx, findings, what, negated, why);
    if (type == "latency") {
      auto t = threshold();
      if (!t) return std::nullopt;
      return bj::object{{"type", "latency_ms"}, {"max", *t}};
    }
    if (type == "cost") {
      auto t = threshold();
      if (!t) return std::nullopt;
      findings.note_at(
          a, what,
          "gate prices tokens with gate.yaml's pricing table, which the import leaves empty: the "
          "check is errored until the model has a row");
      return bj::object{{"type", "cost"}, {"max_usd", *t}};
    }
    if (type == "finish-reason") {
      auto v = scalar(value);
      if (!v) return std::nullopt;
      // promptfoo compares its normalized name, ignoring case; gate the
      // provider's own: each provider value that promptfoo names *v.
      std::string name = *v;
      for (char& c : name)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
      const std::vector<std::string> raw = provider_finish_reasons(name, ctx.anthropic);
      if (raw.empty()) {
        why = "promptfoo compares the finish reason after naming it its own way (" +
              std::string(ctx.anthropic ? "Anthropic's end_turn is \"stop\""
                                        : "OpenAI's are stop, length, ...") +
              "), and never names one " + quote_excerpt(*v) + ": the assertion " +
              (negated ? "passes" : "fails") + " on every reply with a finish reason";
        return std::nullopt;
      }
      if (raw.size() == 1) return bj::object{{"type", "finish_reason"}, {"equals", raw.front()}};
      bj::array any;
      for (const auto& r : raw)
        any.push_back(bj::object{{"type", "finish_reason"}, {"equals", r}});
      return bj::object{{"type", "any_of"}, {"checks", std::move(any)}};
    }
    if (type == "word-count") {
      // promptfoo's countWords: the trimmed output split on JavaScript's \s,
      // which is gate's length in words; a number is the exact count.
      if (value != nullptr && value->is_map()) {
        bj::object c{{"type", "length"}, {"unit", "words"}};
        for (const char* bound : {"min", "max"})
          if (const Node* b = value->get(bound)) {
            const bj::value n = to_json(*b);
            if (!n.is_number()) {
              why = std::string(bound) + " " + describe(*b) + " is not a number";
              return std::nullopt;
            }
            c[bound] = n;
          }
        if (!c.contains("min") && !c.contains("max")) {
          why = "expected a number or {min, max}";
          return std::nullopt;
        }
        return c;
      }
      // A number, or text that reads as one (promptfoo's Number(value)).
      bj::value n = value == nullptr ? bj::value() : to_json(*value);
      if (n.is_string()) {
        Node plain = *value;
        plain.text = std::string(trim_space(value->text));
        plain.quoted = false;
        n = to_json(plain);
      }
      if (!n.is_number()) {
        why = "expected a number or {min, max}";
        return std::nullopt;
      }
      const double count = n.to_number<double>();
      return bj::object{{"type", "length"}, {"unit", "words"}, {"min", count}, {"max", count}};
    }
    // assert-set
    const Node* inner = a.get("assert");
    if (inner == nullptr || !inner->is_list() || inner->items.empty()) {
      why = "expected a non-empty assert list";
      return std::nullopt;
    }
    std::vector<const Node*> items;
    for (const Node& item : inner->items)
      items.push_back(&item);
    // Its share counts where a threshold reads it: its own, or its parent's.
    if (const Node* threshold = read_threshold(a.get("threshold"), findings); threshold || ctx.weights_count)
      return weighted_checks(items, threshold, ctx, findings, why);
    auto members = group_members(items, ctx, findings, why);
    if (!members) return std::nullopt;
    return bj::object{{"type", "all_of"}, {"checks", std::move(members->checks)}};
  }
};

} // namespace

void Findings::unmapped_at(const Node& n, const std::string& what, const std::string& reason) {
  Finding f{n.where(), what, reason};
  if (std::find(unmapped.begin(), unmapped.end(), f) == unmapped.end()) unmapped.push_back(std::move(f));
}

void Findings::note_at(const Node& n, const std::string& what, const std::string& reason) {
  Finding f{n.where(), what, reason};
  if (std::find(notes.begin(), notes.end(), f) == notes.end()) notes.push_back(std::move(f));
}

std::optional<std::string> render_value(const std::string& text, const Vars& vars, std::string& why) {
  if (text.find("{%") != std::string::npos || text.find("{#") != std::string::npos ||
      text.find("\\{{") != std::string::npos) {
    why = "nunjucks tags ({% %}, {# #}) or an escaped \\{{, which gate's {{var}} templates do not have";
    return std::nullopt;
  }
  if (text.find("{{") == std::string::npos) return text;
  try {
    // A value's final line end is text, unlike a template file's.
    const prompt::Template t = prompt::parse(text + "\n", "value");
    std::string out = t.pieces.front();
    for (std::size_t i = 0; i < t.slots.size(); ++i) {
      auto it = vars.find(t.slots[i].name);
      out += it == vars.end() ? "" : it->second;
      out += t.pieces[i + 1];
    }
    return out;
  } catch (const Error&) {
    why = "nunjucks beyond {{name}} (a filter, a field or an expression), which gate's templates do not have";
    return std::nullopt;
  }
}

std::optional<bj::object> map_assert(const Node& a, const AssertContext& ctx, Findings& findings) {
  const Node* type_node = a.is_map() ? a.get("type") : nullptr;
  if (const Node* ref = a.is_map() ? a.get("$ref") : nullptr; ref != nullptr && type_node == nullptr) {
    findings.unmapped_at(a, "assert $ref " + (ref->is_scalar() ? quote_excerpt(ref->text) : describe(*ref)),
                         "not resolved: gate import resolves #/assertionTemplates/NAME of the config");
    return std::nullopt;
  }
  if (type_node == nullptr || !type_node->is_scalar()) {
    findings.unmapped_at(a, "assert", "expected a mapping with a \"type\", got " + describe(a));
    return std::nullopt;
  }
  const std::string type = type_node->text;
  Mapper m{a, ctx, findings, "assert " + quote_excerpt(type, 64), ""};
  auto give_up = [&](const std::string& reason) -> std::optional<bj::object> {
    findings.unmapped_at(a, m.what, reason);
    return std::nullopt;
  };
  const bool negated = type.starts_with("not-") && type != "not-";
  const std::string base_type = negated ? type.substr(4) : type;
  if (const std::string* reason = unmappable_reason(base_type)) return give_up(*reason);
  if (!mapped_type(base_type)) return give_up("not an assertion type gate import knows");
  for (const char* key : {"transform", "contextTransform"})
    if (a.get(key) != nullptr)
      return give_up(std::string(key) + ": gate checks the answer as the model gave it");
  if (a.get("provider") != nullptr)
    return give_up("provider: gate grades with one judge model for the suite (judge.model in gate.yaml)");
  if (negated && (base_type == "llm-rubric" || base_type == "assert-set"))
    return give_up("gate's not holds no llm_judge or group of them");
  m.negated = negated;
  std::optional<bj::object> check = m.base(base_type);
  if (!check) return give_up(m.why);
  bool viewed = false; // a tool call's JSON is checked too
  if (ctx.tools != AssertContext::Tools::none) {
    std::string why;
    if (!tool_call_view(base_type, *check, ctx, a, m.what, findings, why)) return give_up(why);
    viewed = check->contains("checks");
  }
  const bool code = base_type == "python" || base_type == "javascript";
  if (negated && !code) { // the code runners invert as promptfoo does (a crash still fails)
    if (base_type == "contains" && !viewed)
      check = bj::object{{"type", "not_contains"}, {"value", check->at("value")}};
    else
      check = bj::object{{"not", std::move(*check)}};
  }
  if (const Node* w = a.get("weight")) {
    std::string why;
    const auto weight = assertion_weight(a, why);
    if (!weight) return give_up(why);
    // promptfoo passes a weight-0 assertion whatever the answer (runAssertion).
    if (*weight == 0)
      return give_up(
          "weight 0: promptfoo passes this assertion whatever the answer, so there is nothing to check");
    if (*weight != 1 && !ctx.weights_count)
      findings.note_at(a, m.what,
                       "weight " + describe(*w) +
                           " dropped: it weighs promptfoo's score, not whether the test passes (a failed "
                           "assertion fails the test), unless the test has a threshold");
  }
  if (const Node* t = a.get("threshold");
      t != nullptr && base_type != "latency" && base_type != "cost" && base_type != "assert-set" && !code)
    findings.note_at(a, m.what, "threshold " + describe(*t) + " dropped: gate's check passes or fails");
  if (const Node* metric = a.get("metric")) {
    if (!metric->is_scalar() || metric->text.empty()) return give_up("metric must be a non-empty name");
    (*check)["name"] = metric->text;
  }
  try {
    (void)check::parse(bj::value(*check), std::nullopt, a.where());
  } catch (const Error& e) {
    return give_up(std::string("gate refuses the check: ") + e.what());
  }
  return check;
}

namespace {

// promptfoo scores these 1 or 0, as gate's checks pass or fail; the others
// (llm-rubric, python, javascript, ...) may score anything from 0 to 1.
bool scored_pass_or_fail(const Node& a) {
  static const std::vector<std::string> k_binary = {
      "equals",        "contains",     "icontains",     "regex",         "starts-with",
      "contains-any",  "contains-all", "icontains-any", "icontains-all", "is-json",
      "contains-json", "latency",      "cost",          "finish-reason", "word-count"};
  const Node* type = a.is_map() ? a.get("type") : nullptr;
  if (type == nullptr || !type->is_scalar()) return true; // map_assert says what is wrong with it
  std::string t = type->text;
  if (t == "assert-set") return true; // scored by its own weighted check
  if (t.starts_with("not-")) t = t.substr(4);
  return std::find(k_binary.begin(), k_binary.end(), t) != k_binary.end();
}

} // namespace

const Node* read_threshold(const Node* threshold, Findings& findings) {
  if (threshold == nullptr || to_json(*threshold).is_number()) return threshold;
  findings.note_at(
      *threshold, "threshold " + describe(*threshold),
      "ignored, as promptfoo ignores a threshold that is not a number: every assertion must pass");
  return nullptr;
}

std::optional<bj::object> weighted_checks(const std::vector<const Node*>& asserts, const Node* threshold,
                                          const AssertContext& ctx, Findings& findings, std::string& why) {
  std::optional<double> share;
  if (threshold != nullptr) {
    const bj::value v = to_json(*threshold);
    if (!v.is_number() || v.to_number<double>() < 0 || v.to_number<double>() > 1) {
      why = "threshold " + describe(*threshold) + ": expected a number from 0 to 1";
      return std::nullopt;
    }
    share = v.to_number<double>();
  }
  for (const Node* a : asserts)
    if (!scored_pass_or_fail(*a)) {
      why = "a " + quote_excerpt(a->get("type")->text) +
            " assertion inside, which promptfoo scores from 0 to 1 where gate's check passes or fails";
      return std::nullopt;
    }
  AssertContext inner = ctx;
  inner.weights_count = true;
  // A weight-0 assertion also adds nothing to the share.
  auto members = group_members(asserts, inner, findings, why);
  if (!members) return std::nullopt;
  bj::object out{
      {"type", "weighted"}, {"checks", std::move(members->checks)}, {"weights", std::move(members->weights)}};
  if (share) out["threshold"] = *share;
  return out;
}

Node assertion_from_string(const std::string& text, const std::string& file, std::size_t line) {
  auto scalar = [&](std::string s) { return scalar_node(std::move(s), file, line); };
  Node a = map_node(file, line);
  auto set = [&](const char* type, std::string value) {
    a.add("type", scalar(type));
    a.add("value", scalar(std::move(value)));
  };
  for (const auto& [prefix, type] :
       std::vector<std::pair<std::string, std::string>>{{"javascript:", "javascript"},
                                                        {"fn:", "javascript"},
                                                        {"eval:", "javascript"},
                                                        {"python:", "python"},
                                                        {"grade:", "llm-rubric"},
                                                        {"llm-rubric:", "llm-rubric"}}) {
    if (text.starts_with(prefix)) {
      // promptfoo trims code, not a rubric.
      const std::string rest = text.substr(prefix.size());
      set(type.c_str(), type == "llm-rubric" ? rest : std::string(trim_space(rest)));
      return a;
    }
  }
  // A grader file: promptfoo runs it. A javascript one keeps its file://
  // (the assertion loads the file); a python one loses it, as promptfoo's
  // assertionFromString cuts it, and is then read as inline code.
  if (text.starts_with("file://")) {
    static const char* const k_js[] = {".js", ".cjs", ".mjs", ".ts", ".cts", ".mts"};
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    const bool js =
        std::any_of(std::begin(k_js), std::end(k_js), [&](const char* e) { return lower.ends_with(e); });
    const bool py = text.ends_with(".py") || text.find(".py:") != std::string::npos;
    if (js || py) {
      set(js ? "javascript" : "python", std::string(trim_space(js ? text : text.substr(7))));
      return a;
    }
  }
  // "not-type(threshold):value", the type one of promptfoo's (read by hand:
  // a cell may be long, and std::regex recurses per character).
  std::size_t i = text.starts_with("not-") ? 4 : 0;
  const std::size_t type_begin = i;
  auto type_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; };
  while (i < text.size() && type_char(text[i]))
    ++i;
  const std::string type = text.substr(type_begin, i - type_begin);
  std::optional<std::string> threshold;
  if (i < text.size() && text[i] == '(') {
    const std::size_t close = text.find(')', i);
    const std::string t = close == std::string::npos ? "" : text.substr(i + 1, close - i - 1);
    const bool number = !t.empty() && std::isdigit(static_cast<unsigned char>(t.front())) != 0 &&
                        std::isdigit(static_cast<unsigned char>(t.back())) != 0 &&
                        t.find_first_not_of("0123456789.") == std::string::npos &&
                        std::count(t.begin(), t.end(), '.') <= 1;
    if (number) threshold = t, i = close + 1;
  }
  const bool form = i == text.size() || text[i] == ':';
  if (form && !type.empty() && (mapped_type(type) || unmappable_reason(type) != nullptr)) {
    a.add("type", scalar(text.substr(0, type_begin) + type));
    // promptfoo trims the value, except is-json's and contains-json's (a schema).
    std::string value = i < text.size() ? text.substr(i + 1) : "";
    if (type != "is-json" && type != "contains-json") value = std::string(trim_space(value));
    if (i < text.size()) a.add("value", scalar(std::move(value)));
    if (threshold) {
      Node t = scalar(*threshold);
      t.quoted = false;
      a.add("threshold", t);
    }
    return a;
  }
  set("equals", text);
  return a;
}

} // namespace gate::importer::detail

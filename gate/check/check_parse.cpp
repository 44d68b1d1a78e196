#include <gate/check/check.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>

#include <gate/check/regex.hpp>
#include <gate/check/schema.hpp>
#include <gate/util/error.hpp>
#include <gate/util/format.hpp>
#include <gate/util/json.hpp>

namespace gate::check {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

using gate::json::kind_name;

// Typed access to the fields of one check object; every message starts
// with `at`, which names the suite line and the check.
struct Fields {
  const boost::json::object& obj;
  std::string at;

  [[noreturn]] void fail(const std::string& what) const { throw_bad_input(at + ": " + what); }

  const boost::json::value* get(const char* key) const { return obj.if_contains(key); }

  [[noreturn]] void wrong(const char* key, const char* expected, const boost::json::value& v) const {
    fail(std::string("\"") + key + "\" must be " + expected + ", got " + kind_name(v));
  }

  std::optional<std::string> text(const char* key) const {
    const auto* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) wrong(key, "a string", *v);
    return std::string(v->get_string());
  }
  std::string nonempty_text(const char* key) const {
    auto s = text(key);
    if (!s) fail(std::string("missing \"") + key + "\" (a non-empty string)");
    if (s->empty()) fail(std::string("\"") + key + "\" must not be empty");
    return *s;
  }
  std::optional<bool> flag(const char* key) const {
    const auto* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_bool()) wrong(key, "true or false", *v);
    return v->get_bool();
  }
  std::optional<double> number(const char* key) const {
    const auto* v = get(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) wrong(key, "a number", *v);
    return json::to_double(*v);
  }
  std::vector<std::string> texts(const char* key) const {
    const auto* v = get(key);
    if (v == nullptr) fail(std::string("missing \"") + key + "\" (a non-empty array of strings)");
    if (!v->is_array() || v->get_array().empty()) wrong(key, "a non-empty array of strings", *v);
    std::vector<std::string> out;
    for (const auto& e : v->get_array()) {
      if (!e.is_string() || e.get_string().empty())
        fail(std::string("\"") + key + "[" + std::to_string(out.size()) + "]\" must be a non-empty string");
      out.emplace_back(e.get_string());
    }
    return out;
  }
  void only(const std::vector<std::string>& allowed) const {
    for (const auto& kv : obj) {
      std::string_view k(kv.key());
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        fail("unknown field \"" + std::string(k) + "\" (expected: " + join(allowed) + ")");
    }
  }
};

void check_bounds(const Fields& f, std::optional<double> min, std::optional<double> max) {
  if (min && max && *min > *max) f.fail("\"min\" is greater than \"max\"");
}

// RFC 6901: "" is the whole document; otherwise "/"-separated tokens in
// which "~1" stands for "/" and "~0" for "~".
std::vector<std::string> pointer_tokens(const std::string& ptr, const Fields& f) {
  std::vector<std::string> tokens;
  if (ptr.empty()) return tokens;
  if (ptr.front() != '/')
    f.fail("\"path\" must be a JSON pointer starting with '/' (or \"\"), got \"" + ptr + "\"");
  for (std::size_t i = 0; i < ptr.size(); ++i) {
    char c = ptr[i];
    if (c == '/') {
      tokens.emplace_back();
    } else if (c == '~') {
      char e = i + 1 < ptr.size() ? ptr[i + 1] : '\0';
      if (e != '0' && e != '1') f.fail("\"path\" has '~' not followed by 0 or 1 in \"" + ptr + "\"");
      tokens.back().push_back(e == '0' ? '~' : '/');
      ++i;
    } else {
      tokens.back().push_back(c);
    }
  }
  return tokens;
}

Check::JsonPath parse_path(const boost::json::value& v, const Fields& parent, std::size_t index) {
  std::string at = parent.at + ": paths[" + std::to_string(index) + "]";
  if (!v.is_object())
    throw_bad_input(at + ": expected an object like {\"path\": \"/a/0\", \"equals\": 1}, got " +
                    kind_name(v));
  Fields f{v.get_object(), at};
  f.only({"path", "equals", "one_of", "min", "max", "exists"});
  Check::JsonPath p;
  auto ptr = f.text("path");
  if (!ptr) f.fail("missing \"path\" (a JSON pointer such as \"/answer/0\")");
  p.pointer = *ptr;
  p.tokens = pointer_tokens(*ptr, f);
  int tests = 0;
  if (const auto* e = f.get("equals")) {
    p.test = Check::JsonPath::Test::equals;
    p.equals = *e;
    ++tests;
  }
  if (const auto* o = f.get("one_of")) {
    if (!o->is_array() || o->get_array().empty()) f.wrong("one_of", "a non-empty array", *o);
    p.test = Check::JsonPath::Test::one_of;
    p.one_of.assign(o->get_array().begin(), o->get_array().end());
    ++tests;
  }
  p.min = f.number("min");
  p.max = f.number("max");
  if (p.min || p.max) {
    check_bounds(f, p.min, p.max);
    p.test = Check::JsonPath::Test::range;
    ++tests;
  }
  if (auto e = f.flag("exists")) {
    p.test = Check::JsonPath::Test::exists;
    p.exists = *e;
    ++tests;
  }
  if (tests != 1)
    f.fail("expected exactly one condition: \"equals\", \"one_of\", \"min\"/\"max\" or \"exists\"");
  return p;
}

// A path inside the agent's work copy: relative, and no component that
// could climb out ("..") or hide the target (".", empty).
std::string work_path(const Fields& f, const char* key) {
  std::string p = f.nonempty_text(key);
  if (p.front() == '/' || p.find('\\') != std::string::npos || p.find('\0') != std::string::npos)
    f.fail(std::string("\"") + key + "\" must be a relative path inside the work copy, got \"" + p + "\"");
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    std::string_view part(p.data() + start, end - start);
    if (part.empty() || part == "." || part == "..")
      f.fail(std::string("\"") + key +
             "\" must be a relative path inside the work copy (no \"..\", \".\" "
             "or empty parts), got \"" +
             p + "\"");
    start = end + 1;
  }
  return p;
}

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// json and json_schema's `find`: where the JSON is looked for.
bool parse_find(const Fields& f) {
  const std::string find = f.text("find").value_or("answer");
  if (find != "answer" && find != "anywhere")
    f.fail("\"find\" must be \"answer\" (the whole answer or its first fenced block) or \"anywhere\" (JSON "
           "objects inside the text), got \"" +
           find + "\"");
  return find == "anywhere";
}

void parse_json_paths(const Fields& f, Check& c) {
  if (const auto* paths = f.get("paths")) {
    if (!paths->is_array()) f.wrong("paths", "an array of {\"path\": ..., <condition>} objects", *paths);
    for (const auto& p : paths->get_array())
      c.json_paths.push_back(parse_path(p, f, c.json_paths.size()));
  }
}

// command, script: a program and its arguments, no shell.
std::vector<std::string> argv_of(const Fields& f) {
  if (f.get("argv") == nullptr) f.fail("missing \"argv\" (a non-empty array of strings; no shell)");
  return f.texts("argv");
}

// tool_sequence, tool_order: exactly one of equals / contains / starts_with,
// an array of tool names.
void parse_order(const Fields& f, Check& c) {
  bool seen = false;
  for (auto [m, order] : {std::pair{"equals", Order::equals}, std::pair{"contains", Order::contains},
                          std::pair{"starts_with", Order::starts_with}}) {
    const auto* v = f.get(m);
    if (v == nullptr) continue;
    if (seen) f.fail("expected exactly one of \"equals\", \"contains\", \"starts_with\"");
    seen = true;
    c.mode = order;
    if (!v->is_array()) f.wrong(m, "an array of tool names", *v);
    for (const auto& e : v->get_array()) {
      if (!e.is_string() || e.get_string().empty())
        f.fail(std::string("\"") + m + "\" must hold non-empty tool names");
      c.values.emplace_back(e.get_string());
    }
  }
  if (!seen) f.fail("expected one of \"equals\", \"contains\", \"starts_with\" (an array of tool names)");
}

// An inner check of a group or negation: a text or reply check, not the
// judge (its call is the runner's, one per check).
Check parse_inner(const boost::json::value& v, const std::optional<std::string>& expected, const Fields& f,
                  const std::string& where) {
  Check in = parse(v, expected, where);
  if (is_agent_type(in.type) || in.type == Type::llm_judge)
    f.fail("inner checks must be text or reply checks, got \"" + type_name(in.type) + "\"");
  return in;
}

// stdout and tool_calls: the text check applied to another text.
void parse_text_inner(const Fields& f, Check& c) {
  const auto* inner = f.get("check");
  if (inner == nullptr)
    f.fail("missing \"check\" (a text check such as {\"type\": \"contains\", \"value\": \"ok\"})");
  Check in = parse(*inner, std::nullopt, f.at);
  if (info(in.type).kind != Kind::text || in.type == Type::llm_judge)
    f.fail("\"check\" must be a text check (equals, contains, regex, json, ...), got \"" +
           type_name(in.type) + "\"");
  c.inner = std::make_shared<const Check>(std::move(in));
}

void parse_extra(const Fields& f, Check& c, const std::optional<std::string>& expected) {
  switch (c.type) {
  case Type::tool_calls_text: parse_text_inner(f, c); break;
  case Type::any_of:
  case Type::all_of:
  case Type::weighted: {
    const auto* v = f.get("checks");
    if (v == nullptr || !v->is_array() || v->get_array().empty())
      f.fail("expected \"checks\", a non-empty array of checks");
    std::string labels;
    for (const auto& e : v->get_array()) {
      c.children.push_back(
          parse_inner(e, expected, f, f.at + ": checks[" + std::to_string(c.children.size()) + "]"));
      labels += (labels.empty() ? "" : ", ") + c.children.back().label;
    }
    if (c.label == type_name(c.type)) c.label += "(" + labels + ")";
    if (c.type != Type::weighted) break;
    c.weights.assign(c.children.size(), 1.0);
    if (const auto* w = f.get("weights")) {
      if (!w->is_array() || w->get_array().size() != c.children.size())
        f.fail("\"weights\" must be an array of " + std::to_string(c.children.size()) +
               " numbers, one per check");
      for (std::size_t i = 0; i < c.children.size(); ++i) {
        const auto& e = w->get_array()[i];
        if (!e.is_number() || !(json::to_double(e) >= 0) || !std::isfinite(json::to_double(e)))
          f.fail("\"weights[" + std::to_string(i) + "]\" must be a number >= 0");
        c.weights[i] = json::to_double(e);
      }
    }
    c.pass_share = f.number("threshold");
    if (c.pass_share && !(*c.pass_share >= 0 && *c.pass_share <= 1))
      f.fail("\"threshold\" must be from 0 to 1");
    break;
  }
  case Type::similar: {
    auto v = f.text("value");
    if (!v && !expected) f.fail("no \"value\" and the case has no \"expected\" to compare with");
    c.values.push_back(v ? *v : *expected);
    const std::string m = f.text("method").value_or("levenshtein");
    if (m != "levenshtein" && m != "rouge_l")
      f.fail("\"method\" must be \"levenshtein\" or \"rouge_l\", got \"" + m + "\"");
    c.method = m == "rouge_l" ? Similarity::rouge_l : Similarity::levenshtein;
    c.number = f.number("threshold").value_or(0.8);
    if (!(c.number >= 0 && c.number <= 1)) f.fail("\"threshold\" must be from 0 to 1");
    break;
  }
  case Type::finish_reason: {
    auto eq = f.text("equals"), ne = f.text("not");
    if (eq.has_value() == ne.has_value()) f.fail("expected exactly one of \"equals\" and \"not\" (a string)");
    c.negate = ne.has_value();
    c.values.push_back(eq ? *eq : *ne);
    if (c.values.front().empty()) f.fail("the finish reason must not be empty");
    break;
  }
  case Type::tool_called:
    c.values.push_back(f.nonempty_text("tool"));
    c.min = f.number("count");
    if (c.min && (*c.min < 0 || *c.min != static_cast<double>(static_cast<long long>(*c.min))))
      f.fail("\"count\" must be a whole number >= 0");
    break;
  case Type::tool_args:
    c.values.push_back(f.nonempty_text("tool"));
    parse_json_paths(f, c);
    break;
  case Type::tool_order: parse_order(f, c); break;
  case Type::latency_ms:
    c.max = f.number("max");
    if (!c.max || *c.max < 0) f.fail("expected \"max\", a number of milliseconds >= 0");
    break;
  case Type::cost:
    c.max = f.number("max_usd");
    if (!c.max || *c.max < 0) f.fail("expected \"max_usd\", a number of US dollars >= 0");
    break;
  case Type::json_schema: {
    const auto* schema = f.get("schema");
    if (schema == nullptr) f.fail("missing \"schema\" (a JSON Schema: an object or a boolean)");
    c.path = f.text("path").value_or("");
    c.pointer = pointer_tokens(c.path, f);
    c.schema = compile_schema(*schema, f.at);
    c.find_anywhere = parse_find(f);
    break;
  }
  case Type::script:
    c.argv = argv_of(f);
    c.timeout_s = f.number("timeout").value_or(10);
    if (!(c.timeout_s > 0 && c.timeout_s <= 86400))
      f.fail("\"timeout\" must be a number of seconds > 0 (at most 86400)");
    break;
  default: break; // refusal, no_tool_call: no operands
  }
}

void parse_agent(const Fields& f, Check& c) {
  switch (c.type) {
  case Type::exit_code: {
    double v = f.number("value").value_or(0);
    if (v != static_cast<double>(static_cast<int>(v)) || v < 0 || v > 255)
      f.fail("\"value\" must be an exit status from 0 to 255");
    c.number = v;
    break;
  }
  case Type::stdout_text: parse_text_inner(f, c); break;
  case Type::file_exists: c.path = work_path(f, "path"); break;
  case Type::file_contains:
    c.path = work_path(f, "path");
    c.values.push_back(f.nonempty_text("value"));
    break;
  case Type::file_json:
    c.path = work_path(f, "path");
    parse_json_paths(f, c);
    break;
  case Type::command: {
    c.argv = argv_of(f);
    c.timeout_s = f.number("timeout").value_or(60);
    if (!(c.timeout_s > 0)) f.fail("\"timeout\" must be a number of seconds > 0");
    break;
  }
  case Type::diff_size: {
    auto v = f.number("max");
    if (!v || *v < 0 || *v != static_cast<double>(static_cast<long long>(*v)))
      f.fail("\"max\" must be a whole number of changed lines >= 0");
    c.number = *v;
    break;
  }
  case Type::file_scope: c.values = f.texts("allow"); break;
  case Type::tool_sequence: parse_order(f, c); break;
  case Type::final_state: {
    c.path = work_path(f, "path");
    std::string sha = f.nonempty_text("sha256");
    if (!is_hex64(sha)) f.fail("\"sha256\" must be 64 lowercase hex digits");
    c.values.push_back(sha);
    break;
  }
  default: break;
  }
}

// {"not": {check}}, with an optional "name": passes when the inner check
// fails.
Check parse_negation(const boost::json::object& obj, const std::optional<std::string>& expected,
                     const std::string& where) {
  Fields f{obj, where + ": check \"not\""};
  f.only({"not", "name"});
  Check c;
  c.type = Type::negation;
  c.children.push_back(parse_inner(obj.at("not"), expected, f, f.at));
  c.label = "not(" + c.children.front().label + ")";
  if (auto name = f.text("name")) {
    if (name->empty()) f.fail("\"name\" must not be empty");
    c.label = "not:" + *name;
  }
  return c;
}

} // namespace

Check parse(const boost::json::value& spec, const std::optional<std::string>& expected,
            const std::string& where) {
  // Text checks first, then the agent ones, which only agent cases take.
  static const std::string known = [] {
    std::string text, agent;
    for (const auto& t : type_table()) {
      if (t.id == Type::negation) continue; // {"not": ...} has no "type"
      std::string& list = t.kind == Kind::agent ? agent : text;
      list += (list.empty() ? "" : ", ") + t.type;
    }
    return text + "; agent cases also: " + agent;
  }();
  if (!spec.is_object())
    throw_bad_input(where +
                    ": a check must be an object like {\"type\": \"contains\", \"value\": \"...\"}, got " +
                    kind_name(spec));
  const auto& obj = spec.get_object();
  if (obj.contains("not") && !obj.contains("type")) return parse_negation(obj, expected, where);
  const auto* type_v = obj.if_contains("type");
  if (type_v == nullptr || !type_v->is_string())
    throw_bad_input(where + ": a check needs \"type\", a string, one of: " + known);
  const std::string name(type_v->get_string());
  const TypeInfo* row = find_type(name);
  if (row == nullptr) {
    std::vector<std::string> names;
    for (const TypeInfo& t : type_table())
      names.emplace_back(t.type);
    const std::string near = nearest_name(name, names);
    throw_bad_input(where + ": unknown check type \"" + name +
                    "\" (known: " + known.substr(0, known.find(';')) + ")" + known.substr(known.find(';')) +
                    (near.empty() ? "" : "; did you mean \"" + near + "\"?"));
  }
  if (row->id == Type::negation)
    throw_bad_input(where + ": \"not\" is written {\"not\": {<check>}}, not as a \"type\"");
  Check c;
  c.type = row->id;

  Fields f{obj, where + ": check \"" + name + "\""};
  c.label = name;
  if (auto name = f.text("name")) {
    if (name->empty()) f.fail("\"name\" must not be empty");
    c.label += ":" + *name;
    f.at = where + ": check \"" + c.label + "\"";
  }
  std::vector<std::string> allowed{"type", "name"};
  for (const auto& field : row->fields)
    allowed.push_back(field.name);
  f.only(allowed);

  if (row->kind == Kind::agent) {
    parse_agent(f, c);
    return c;
  }
  if (c.type > Type::final_state) {
    parse_extra(f, c, expected);
    return c;
  }
  switch (c.type) {
  case Type::equals: {
    auto v = f.text("value");
    if (!v && !expected) f.fail("no \"value\" and the case has no \"expected\" to compare with");
    c.values.push_back(v ? *v : *expected);
    c.trim = f.flag("trim").value_or(true);
    c.ignore_case = f.flag("ignore_case").value_or(false);
    c.collapse_whitespace = f.flag("collapse_whitespace").value_or(false);
    break;
  }
  case Type::contains:
  case Type::icontains:
  case Type::not_contains:
  case Type::starts_with: c.values.push_back(f.nonempty_text("value")); break;
  case Type::contains_any:
  case Type::contains_all: c.values = f.texts("values"); break;
  case Type::llm_judge: c.values.push_back(f.nonempty_text("rubric")); break;
  case Type::regex:
    c.values.push_back(f.nonempty_text("pattern"));
    c.ignore_case = f.flag("ignore_case").value_or(false);
    c.regex = std::make_shared<const Regex>(c.values.front(), f.at, c.ignore_case);
    break;
  case Type::json:
    parse_json_paths(f, c);
    c.find_anywhere = parse_find(f);
    break;
  case Type::number: {
    auto v = f.number("value");
    if (!v) f.fail("missing \"value\" (a number)");
    c.number = *v;
    c.tolerance = f.number("tolerance").value_or(0);
    if (c.tolerance < 0) f.fail("\"tolerance\" must not be negative");
    break;
  }
  case Type::length:
    c.unit = f.text("unit").value_or("chars");
    if (c.unit != "chars" && c.unit != "words")
      f.fail("\"unit\" must be \"chars\" or \"words\", got \"" + c.unit + "\"");
    c.min = f.number("min");
    c.max = f.number("max");
    if (!c.min && !c.max) f.fail("expected \"min\", \"max\" or both");
    if ((c.min && *c.min < 0) || (c.max && *c.max < 0)) f.fail("\"min\" and \"max\" must not be negative");
    check_bounds(f, c.min, c.max);
    break;
  default: break;
  }
  return c;
}

} // namespace gate::check

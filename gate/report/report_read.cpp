#include <gate/report/report.hpp>

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <climits>
#include <initializer_list>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::report {

namespace {

namespace bj = boost::json;

// Boost.JSON 1.81 converts decimal text to double imprecisely (about one
// value in five is off by an ulp), which would break the promise that
// reading and rewriting a report gives the same bytes. This handler only
// collects the exact value of every non-integer number, in document order,
// from its text; the parsed tree is then patched with them.
struct ExactDoubles {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  std::vector<double> values;
  std::string text;

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) { return true; }
  bool on_object_end(std::size_t, boost::system::error_code&) { return true; }
  bool on_array_begin(boost::system::error_code&) { return true; }
  bool on_array_end(std::size_t, boost::system::error_code&) { return true; }
  bool on_key_part(bj::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_key(bj::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_string_part(bj::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_string(bj::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_number_part(bj::string_view s, boost::system::error_code&) {
    text.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t, bj::string_view, boost::system::error_code&) {
    text.clear();
    return true;
  }
  bool on_uint64(std::uint64_t, bj::string_view, boost::system::error_code&) {
    text.clear();
    return true;
  }
  bool on_double(double d, bj::string_view s, boost::system::error_code&) {
    text.append(s.data(), s.size());
    double exact = d;
    auto res = std::from_chars(text.data(), text.data() + text.size(), exact);
    values.push_back(res.ec == std::errc() ? exact : d);
    text.clear();
    return true;
  }
  bool on_bool(bool, boost::system::error_code&) { return true; }
  bool on_null(boost::system::error_code&) { return true; }
  bool on_comment_part(bj::string_view, boost::system::error_code&) { return true; }
  bool on_comment(bj::string_view, boost::system::error_code&) { return true; }
};

void patch(bj::value& v, const std::vector<double>& exact, std::size_t& next) {
  switch (v.kind()) {
  case bj::kind::double_:
    if (next < exact.size()) v.get_double() = exact[next++];
    break;
  case bj::kind::array:
    for (auto& e : v.get_array())
      patch(e, exact, next);
    break;
  case bj::kind::object:
    for (auto& kv : v.get_object())
      patch(kv.value(), exact, next);
    break;
  default: break;
  }
}

bj::value parse_exact(std::string_view text, const std::string& where) {
  json::ParseLimits limits;
  limits.max_depth = 64;
  bj::value v = json::parse_strict(text, where, 1, limits);
  bj::parse_options opts;
  opts.max_depth = limits.max_depth;
  bj::basic_parser<ExactDoubles> p(opts);
  boost::system::error_code ec;
  p.write_some(false, text.data(), text.size(), ec);
  // parse_strict accepted the same text, so ec is clear; the check keeps a
  // mismatch from silently patching the wrong numbers.
  if (!ec) {
    std::size_t next = 0;
    patch(v, p.handler().values, next);
  }
  return v;
}

// Untrusted text inside an error message: quoted (no control characters
// reach the terminal), redacted and short.
std::string shown(std::string_view s) {
  std::string out;
  json::append_quoted(to_valid_utf8(utf8_prefix(s, 80)), out);
  if (s.size() > 80) out.insert(out.size() - 1, "...");
  return redact(out);
}

// Every known field is also required, so an object no larger than the known
// set holds either only known fields or misses one, which the reader
// reports; only a larger object needs the scan.
void only_known(const bj::object& o, std::initializer_list<std::string_view> known,
                const std::string& where) {
  if (o.size() <= known.size()) return;
  for (const auto& kv : o) {
    std::string_view key(kv.key().data(), kv.key().size());
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw_bad_input(where + ": unknown field " + shown(key));
  }
}

const bj::object& get_object(const bj::object& o, std::string_view key, const std::string& where) {
  const auto* p = o.if_contains(bj::string_view(key.data(), key.size()));
  if (p == nullptr) throw_bad_input(where + ": missing field \"" + std::string(key) + "\"");
  if (!p->is_object()) throw_bad_input(where + ": field \"" + std::string(key) + "\" must be an object");
  return p->get_object();
}

const bj::array& get_array(const bj::object& o, std::string_view key, const std::string& where) {
  const auto* p = o.if_contains(bj::string_view(key.data(), key.size()));
  if (p == nullptr) throw_bad_input(where + ": missing field \"" + std::string(key) + "\"");
  if (!p->is_array()) throw_bad_input(where + ": field \"" + std::string(key) + "\" must be an array");
  return p->get_array();
}

std::int64_t get_count(const bj::object& o, std::string_view key, const std::string& where) {
  std::int64_t v = json::get_int(o, key, where);
  if (v < 0) throw_bad_input(where + ": field \"" + std::string(key) + "\" must be >= 0");
  return v;
}

int get_small(const bj::object& o, std::string_view key, const std::string& where) {
  std::int64_t v = get_count(o, key, where);
  if (v > INT_MAX) throw_bad_input(where + ": field \"" + std::string(key) + "\" is too large");
  return static_cast<int>(v);
}

results::Route read_route(const bj::object& o, std::string_view key, const std::string& where) {
  results::Route route;
  for (const auto& kv : get_object(o, key, where)) {
    if (!kv.value().is_string())
      throw_bad_input(where + ": route field " + shown(std::string_view(kv.key())) + " must be a string");
    route.emplace(std::string(kv.key()), std::string(kv.value().get_string()));
  }
  return route;
}

results::Run read_run(const bj::value& v, const std::string& where) {
  const auto& o = json::as_object(v, where);
  only_known(o,
             {"index", "passed", "error", "error_message", "checks", "answer", "answer_truncated",
              "answer_sha256", "prompt_tokens", "completion_tokens", "usage_known", "latency_ms", "cache_hit",
              "attempts", "fingerprint", "route", "tool_calls"},
             where);
  results::Run r;
  r.index = get_small(o, "index", where);
  r.passed = json::get_bool(o, "passed", where);
  r.error = json::get_string(o, "error", where);
  r.error_message = json::get_string(o, "error_message", where);
  const auto& checks = get_array(o, "checks", where);
  r.checks.reserve(checks.size());
  for (std::size_t i = 0; i < checks.size(); ++i) {
    std::string cw = where + ": check " + std::to_string(i);
    const auto& c = json::as_object(checks[i], cw);
    only_known(c, {"label", "passed", "detail"}, cw);
    r.checks.push_back({json::get_string(c, "label", cw), json::get_bool(c, "passed", cw),
                        json::get_string(c, "detail", cw)});
  }
  r.answer = json::get_string(o, "answer", where);
  r.answer_truncated = json::get_bool(o, "answer_truncated", where);
  r.answer_sha256 = json::get_string(o, "answer_sha256", where);
  r.prompt_tokens = get_count(o, "prompt_tokens", where);
  r.completion_tokens = get_count(o, "completion_tokens", where);
  r.usage_known = json::get_bool(o, "usage_known", where);
  r.latency_ms = json::get_number(o, "latency_ms", where);
  if (r.latency_ms < 0) throw_bad_input(where + ": field \"latency_ms\" must be >= 0");
  r.cache_hit = json::get_bool(o, "cache_hit", where);
  r.attempts = get_small(o, "attempts", where);
  r.fingerprint = json::get_string(o, "fingerprint", where);
  r.route = read_route(o, "route", where);
  const auto& calls = get_array(o, "tool_calls", where);
  r.tool_calls.reserve(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::string tw = where + ": tool call " + std::to_string(i);
    const auto& c = json::as_object(calls[i], tw);
    only_known(c, {"name", "arguments_sha256"}, tw);
    r.tool_calls.push_back({json::get_string(c, "name", tw), json::get_string(c, "arguments_sha256", tw)});
  }
  // METRICS.md: a run passes when every check holds, and an errored run
  // never passes. A file that says otherwise was edited or is corrupt.
  if (r.passed && r.errored())
    throw_bad_input(where + ": \"passed\" is true but the run errored (" + shown(r.error) + ")");
  if (r.passed)
    for (const auto& c : r.checks)
      if (!c.passed) throw_bad_input(where + ": \"passed\" is true but check " + shown(c.label) + " failed");
  return r;
}

results::Task read_task(const bj::value& v, std::size_t i, const std::string& where) {
  std::string tw = where + ": task " + std::to_string(i);
  const auto& o = json::as_object(v, tw);
  results::Task t;
  t.id = json::get_string(o, "id", tw);
  if (t.id.empty()) throw_bad_input(tw + ": field \"id\" must not be empty");
  // From here on errors name the task by its id, which is what a reader
  // can search for.
  tw = where + ": task " + shown(t.id);
  only_known(o, {"id", "scenario", "difficulty", "group", "stats", "runs"}, tw);
  t.scenario = json::get_string(o, "scenario", tw);
  t.difficulty = json::get_string(o, "difficulty", tw);
  t.group = json::get_string(o, "group", tw);
  // "stats" is derived data: it is recomputed from the runs, but a task
  // without it was not written by gate.
  get_object(o, "stats", tw);
  const auto& runs = get_array(o, "runs", tw);
  t.runs.reserve(runs.size());
  for (std::size_t j = 0; j < runs.size(); ++j)
    t.runs.push_back(read_run(runs[j], tw + " run " + std::to_string(j)));
  return t;
}

} // namespace

Report from_json(std::string_view text, const std::string& where) {
  bj::value doc = parse_exact(text, where);
  const auto& top = json::as_object(doc, where);
  const auto* schema = top.if_contains("schema");
  if (schema == nullptr || !schema->is_string())
    throw_bad_input(where + ": missing field \"schema\"; this gate reads " + k_schema);
  if (schema->get_string() != k_schema)
    throw_bad_input(where + ": unknown schema " + shown(std::string_view(schema->get_string())) +
                    "; this gate reads " + k_schema);
  only_known(top,
             {"schema", "gate_version", "suite", "config", "route", "started_at", "finished_at", "complete",
              "incomplete_reason", "stats", "tasks"},
             where);

  Report r;
  r.gate_version = json::get_string(top, "gate_version", where);
  const auto& suite = get_object(top, "suite", where);
  std::string sw = where + ": suite";
  only_known(suite, {"name", "version", "sha256"}, sw);
  r.suite.name = json::get_string(suite, "name", sw);
  r.suite.version = json::get_string(suite, "version", sw);
  r.suite.sha256 = json::get_string(suite, "sha256", sw);
  const auto* config = top.if_contains("config");
  if (config == nullptr) throw_bad_input(where + ": missing field \"config\"");
  if (!config->is_object() && !config->is_null())
    throw_bad_input(where + ": field \"config\" must be an object or null");
  r.config = *config;
  r.route = read_route(top, "route", where);
  r.started_at = json::get_string(top, "started_at", where);
  r.finished_at = json::get_string(top, "finished_at", where);
  r.complete = json::get_bool(top, "complete", where);
  r.incomplete_reason = json::get_string(top, "incomplete_reason", where);
  get_object(top, "stats", where);

  const auto& tasks = get_array(top, "tasks", where);
  r.tasks.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i)
    r.tasks.push_back(read_task(tasks[i], i, where));
  std::sort(r.tasks.begin(), r.tasks.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < r.tasks.size(); ++i)
    if (r.tasks[i].id == r.tasks[i - 1].id)
      throw_bad_input(where + ": duplicate task id " + shown(r.tasks[i].id));

  // The runs are the source of truth; the stored numbers are for readers.
  compute(r, options_from_config(r.config, where));
  return r;
}

} // namespace gate::report

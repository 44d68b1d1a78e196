// Which harness wrote a file (--format, or its shape with auto), and the
// helpers the harnesses' readers share (harness.hpp).
#include <gate/ingest/harness.hpp>

#include <cmath>

namespace gate::ingest {

namespace detail {

const bj::value* member(const bj::value* v, std::initializer_list<const char*> path) {
  for (const char* key : path) {
    const bj::object* o = v ? v->if_object() : nullptr;
    if (!o) return nullptr;
    auto it = o->find(key);
    if (it == o->end() || it->value().is_null()) return nullptr;
    v = &it->value();
  }
  return v;
}

void bad(const std::string& where, const std::string& field, const std::string& expected,
         const bj::value* got) {
  throw Error(Exit::bad_input, where + ": field \"" + field + "\": expected " + expected + ", " +
                                   (got ? std::string("got ") + json::kind_name(*got) : "none found"));
}

void not_the_format(const std::string& file, const std::string& what, const bj::value& got) {
  throw Error(Exit::bad_input,
              file + ": expected " + what + ", got " +
                  (got.is_object() ? std::string("an object without them") : json::kind_name(got)));
}

double required_number(const bj::value* v, const std::string& where, const std::string& field,
                       const std::string& expected) {
  if (!v || !v->is_number()) bad(where, field, expected, v);
  return v->to_number<double>();
}

std::int64_t whole(const bj::value* v, const std::string& where, const std::string& field) {
  double d = v && v->is_number() ? v->to_number<double>() : -1;
  if (!(d >= 0) || d != std::floor(d) || d > 9e15) bad(where, field, "a whole number >= 0", v);
  return static_cast<std::int64_t>(d);
}

std::string number_text(double d) {
  std::string s;
  json::append_number(d, s);
  return s;
}

void add(std::string& note, const std::string& part) { note += (note.empty() ? "" : "; ") + part; }

} // namespace detail

namespace {

using namespace detail;

const char* const k_expected_any =
    "a τ²-bench results file (an object with \"info\" and \"simulations\"), an Inspect AI JSON eval log "
    "(an object with \"version\", \"status\" and \"eval\"), a promptfoo results file (an object whose "
    "\"results\" holds \"results\" and \"stats\"), a τ-bench results list (trials with \"task_id\", "
    "\"trial\", \"reward\", \"traj\"), a JSON array of records or JSONL";

std::string_view without_bom(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  return text;
}

// Python's json module, and pydantic with ser_json_inf_nan="constants" as
// Inspect's log models have it, write a non-finite float as a bare NaN,
// Infinity or -Infinity, which is not JSON: Inspect does so for an unscored
// sample and for a metric over one epoch (its stderr). A harness's results
// file is read with each as null, a value not known, which is what null is
// to every reader here. Infinity keeps its width (padded); NaN → null moves
// the columns after it on its line by one. Text in strings is left alone.
std::string python_constants_as_null(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out.push_back(ch);
      if (ch == '\\' && i + 1 < text.size())
        out.push_back(text[++i]);
      else if (ch == '"')
        in_string = false;
      continue;
    }
    if (ch == '"') in_string = true;
    const bool boundary =
        i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.');
    if (boundary) {
      bool matched = false;
      for (std::string_view word :
           {std::string_view("NaN"), std::string_view("Infinity"), std::string_view("-Infinity")}) {
        const std::size_t end = i + word.size();
        if (text.substr(i, word.size()) == word &&
            (end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end])))) {
          out += "null";
          out.append(word.size() > 4 ? word.size() - 4 : 0, ' ');
          i = end - 1;
          matched = true;
          break;
        }
      }
      if (matched) continue;
    }
    out.push_back(ch);
  }
  return out;
}

// One harness results file as one JSON text (strict, naming line:col),
// Python's constants read as null.
bj::value parse_harness(std::string_view text, const std::string& file) {
  if (text.find("NaN") == std::string_view::npos && text.find("Infinity") == std::string_view::npos)
    return json::parse_strict(text, file);
  return json::parse_strict(python_constants_as_null(text), file);
}

// Inspect's default log format, .eval, is a zip archive: say how to get
// the JSON one instead of "malformed JSON at 1:1".
void refuse_zip(const Input& in) {
  if (in.text.substr(0, 4) == std::string_view("PK\x03\x04", 4))
    throw Error(Exit::bad_input, in.file +
                                     ": a zip archive (an Inspect AI .eval log?); expected JSON: run inspect "
                                     "eval with --log-format json, or convert the log with `inspect log "
                                     "convert --to json`");
}

// One JSON object read whole: which harness's it is.
FileRecords object_records(const bj::value& v, const Input& in, const Options& o) {
  if (is_tau2(v)) return {tau2_records(v, in), Format::tau2};
  if (is_inspect(v)) return {inspect_records(v, in.file, o), Format::inspect};
  if (is_promptfoo(v)) return {promptfoo_records(v, in.file), Format::promptfoo};
  throw Error(Exit::bad_input, in.file +
                                   ": one JSON object that no harness's results file matches; expected " +
                                   k_expected_any);
}

bool harness_object(const bj::value& v) { return is_tau2(v) || is_inspect(v) || is_promptfoo(v); }

// A file whose first character opens an object is one JSON text (a
// harness's results, usually over many lines) or JSONL; its first line
// tells which.
FileRecords automatic(const Input& in, const Options& o) {
  std::string_view text = without_bom(in.text);
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || (text[first] != '{' && text[first] != '['))
    return {split_records(in.text, in.file), Format::jsonl};
  if (text[first] == '[') {
    bj::value v = parse_harness(text, in.file);
    if (is_tau_bench(v)) return {tau_bench_records(v, in.file), Format::tau_bench};
    return {split_records(in.text, in.file), Format::jsonl};
  }
  auto eol = text.find('\n', first);
  boost::system::error_code ec;
  bj::value line =
      bj::parse(text.substr(first, eol == std::string_view::npos ? std::string_view::npos : eol - first), ec);
  // A results file written without indentation is one line: still the harness's.
  if (!ec && !harness_object(line)) return {split_records(in.text, in.file), Format::jsonl};
  bj::value v = parse_harness(text, in.file); // one text: a malformed one names its line:col
  return object_records(v, in, o);
}

} // namespace

Format parse_format(std::string_view name) {
  for (Format f : {Format::automatic, Format::jsonl, Format::tau_bench, Format::tau2, Format::inspect,
                   Format::promptfoo})
    if (name == format_name(f)) return f;
  throw Error(Exit::bad_input, "--format \"" + std::string(name) +
                                   "\": expected auto, jsonl, tau-bench, tau2, inspect or promptfoo");
}

const char* format_name(Format f) {
  switch (f) {
  case Format::automatic: return "auto";
  case Format::jsonl: return "jsonl";
  case Format::tau_bench: return "tau-bench";
  case Format::tau2: return "tau2";
  case Format::inspect: return "inspect";
  case Format::promptfoo: return "promptfoo";
  }
  return "auto";
}

FileRecords records_of(const Input& in, const Options& o) {
  refuse_zip(in);
  // --map names fields of the generic records: with it, a file is read so.
  if (o.format == Format::jsonl || (o.format == Format::automatic && !o.map.empty()))
    return {split_records(in.text, in.file), Format::jsonl};
  if (!o.map.empty())
    throw Error(Exit::bad_input, std::string("--map: names fields of --format jsonl records; --format ") +
                                     format_name(o.format) + " reads its own fields");
  if (o.format == Format::automatic) return automatic(in, o);
  bj::value v = parse_harness(without_bom(in.text), in.file);
  switch (o.format) {
  case Format::tau_bench: return {tau_bench_records(v, in.file), Format::tau_bench};
  case Format::inspect: return {inspect_records(v, in.file, o), Format::inspect};
  case Format::promptfoo: return {promptfoo_records(v, in.file), Format::promptfoo};
  default: return {tau2_records(v, in), Format::tau2};
  }
}

} // namespace gate::ingest

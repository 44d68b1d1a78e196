#include <gate/importer/detail.hpp>

#include <algorithm>
#include <boost/json/value.hpp>
#include <cmath>
#include <cstdlib>

#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::importer::detail {

namespace fs = std::filesystem;
namespace bj = boost::json;

namespace {

// promptfoo's files are small; this bounds what one may cost.
constexpr std::size_t k_max_file_bytes = std::size_t{16} << 20;
constexpr std::size_t k_max_expanded = 10000;

Node& entry(Node& map, const std::string& key) {
  for (auto& [k, v] : map.entries)
    if (k == key) return v;
  map.add(key, Node{});
  return map.entries.back().second;
}

// A "__metadata:name[]" cell as promptfoo splits it: at commas not after a
// backslash, each item trimmed, and its first "\\," made a comma (JavaScript's
// replace with a text pattern replaces the first match only).
Node metadata_list(const std::string& cell, const std::string& file, std::size_t line) {
  Node list;
  list.kind = Node::Kind::list;
  list.file = file;
  list.line = line;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= cell.size(); ++i) {
    if (i < cell.size() && (cell[i] != ',' || (i > 0 && cell[i - 1] == '\\'))) continue;
    std::string item(trim_space(std::string_view(cell).substr(begin, i - begin)));
    if (const std::size_t esc = item.find("\\,"); esc != std::string::npos) item.erase(esc, 1);
    Node n = scalar_node(std::move(item), file, line);
    list.items.push_back(std::move(n));
    begin = i + 1;
  }
  return list;
}

std::string extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

class Reader {
public:
  explicit Reader(const ReadContext& ctx) : ctx_(ctx) {}

  std::vector<Node> tests(const Node& spec) {
    std::vector<Node> out;
    if (spec.is_scalar()) {
      from_file(spec, out);
    } else if (spec.is_list()) {
      for (const Node& item : spec.items) {
        if (item.is_map())
          out.push_back(item);
        else if (item.is_scalar())
          from_file(item, out);
        else
          ctx_.findings->unmapped_at(item, "test",
                                     "expected a mapping or a file name, got " + describe(item));
      }
    } else if (!spec.is_null()) {
      ctx_.findings->unmapped_at(spec, "tests",
                                 "a test generator (a mapping); gate import reads a list of tests or files");
    }
    return out;
  }

  Node yaml_file(const Node& from, const std::string& rel, bool list_root) {
    return read_yaml(read_text(ctx_, rel, from), report_name(ctx_.base, ctx_.base / rel), list_root);
  }

private:
  void from_file(const Node& spec, std::vector<Node>& out) {
    std::string rel = spec.text;
    if (rel.starts_with("file://")) rel = rel.substr(7);
    if (rel.starts_with("http://") || rel.starts_with("https://")) {
      ctx_.findings->unmapped_at(
          spec, "tests " + quote_excerpt(spec.text),
          "tests from a URL (a Google Sheet, say); save them as CSV and point at the file");
      return;
    }
    for (const auto& m : expand_glob(ctx_.base, rel, spec))
      one_file(spec, m, out);
  }

  void one_file(const Node& spec, const std::string& rel, std::vector<Node>& out) {
    const std::string ext = extension(rel);
    const std::string file = report_name(ctx_.base, ctx_.base / rel);
    if (ext == ".csv") {
      csv(read_text(ctx_, rel, spec), file, out);
    } else if (ext == ".jsonl") {
      const std::string text = read_text(ctx_, rel, spec);
      std::size_t line = 1;
      for (std::size_t at = 0; at < text.size(); ++line) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string_view l = trim_space(std::string_view(text).substr(at, end - at));
        if (!l.empty()) push_map(from_json(json::parse_strict(l, file, line), file, line), out);
        at = end + 1;
      }
    } else if (ext == ".yaml" || ext == ".yml") {
      const Node root = yaml_file(spec, rel, true);
      if (root.is_list())
        for (const Node& item : root.items)
          push_map(item, out);
      else if (!root.is_null())
        push_map(root, out);
    } else if (ext == ".json") {
      const Node root = from_json(json::parse_strict(read_text(ctx_, rel, spec), file), file, 0);
      if (root.is_list())
        for (const Node& item : root.items)
          push_map(item, out);
      else
        push_map(root, out);
    } else {
      ctx_.findings->unmapped_at(spec, "tests " + quote_excerpt(spec.text),
                                 "tests from a " +
                                     (ext.empty() ? std::string("file without extension") : ext) +
                                     " file, which promptfoo runs or reads with a loader of its own");
    }
  }

  void push_map(const Node& n, std::vector<Node>& out) {
    if (n.is_map())
      out.push_back(n);
    else
      throw_bad_input(n.where() + ": expected a test (a mapping with vars and assert), got " + describe(n));
  }

  // promptfoo's CSV: a column a var, except the special "__" columns.
  void csv(const std::string& text, const std::string& file, std::vector<Node>& out) {
    const std::vector<CsvRow> rows = read_csv(text, file);
    if (rows.empty()) return;
    const CsvRow& header = rows.front();
    const Node header_node = scalar_node("", file, header.line);
    for (std::size_t r = 1; r < rows.size(); ++r) {
      const CsvRow& row = rows[r];
      Node t = map_node(file, row.line);
      Node vars = map_node(file, row.line);
      Node asserts;
      asserts.kind = Node::Kind::list;
      asserts.file = file;
      asserts.line = row.line;
      std::string metric;
      for (std::size_t c = 0; c < header.cells.size() && c < row.cells.size(); ++c) {
        const std::string col(trim_space(header.cells[c])); // promptfoo trims a column's name
        const std::string& cell = row.cells[c];
        if (col.starts_with("__expected")) {
          // promptfoo parses the cell trimmed: "contains: x" checks for "x".
          if (!trim_space(cell).empty())
            asserts.items.push_back(assertion_from_string(std::string(trim_space(cell)), file, row.line));
        } else if (col == "__description") {
          entry(t, "description") = scalar_node(cell, file, row.line);
        } else if (col == "__metric") {
          metric = cell;
        } else if (col == "__threshold") {
          // promptfoo keeps parseFloat(cell) only when it is truthy: an
          // empty cell, "0" or text set no threshold.
          const double v = std::strtod(cell.c_str(), nullptr);
          if (v != 0 && !std::isnan(v)) {
            entry(t, "threshold") = scalar_node(js_number_string(v), file, row.line);
            entry(t, "threshold").quoted = false;
          }
        } else if (col == "__providerOutput") {
          // The test's assertions then check this text, not the model's answer.
          if (!cell.empty()) entry(t, "providerOutput") = scalar_node(cell, file, row.line);
        } else if (col == "__prefix" || col == "__suffix") {
          if (cell.empty()) continue;
          Node& options = entry(t, "options");
          if (!options.is_map()) options = map_node(file, row.line);
          entry(options, col.substr(2)) = scalar_node(cell, file, row.line);
        } else if (col.starts_with("__metadata:")) {
          if (trim_space(cell).empty()) continue; // promptfoo sets no key for an empty cell
          Node& m = entry(t, "metadata");
          if (!m.is_map()) m = map_node(file, row.line);
          std::string key = col.substr(11);
          if (key.ends_with("[]")) {
            key.resize(key.size() - 2);
            entry(m, key) = metadata_list(cell, file, row.line);
          } else {
            entry(m, key) = scalar_node(cell, file, row.line);
          }
        } else if (col.starts_with("__")) {
          ctx_.findings->unmapped_at(header_node, "column " + quote_excerpt(col),
                                     "a promptfoo column gate import does not read");
        } else {
          entry(vars, col) = scalar_node(cell, file, row.line);
        }
      }
      if (row.cells.size() != header.cells.size())
        throw Error(Exit::bad_input, located(file, row.line, 0,
                                             std::to_string(row.cells.size()) + " fields; expected " +
                                                 std::to_string(header.cells.size()) + " as in the header"));
      if (!metric.empty())
        for (Node& a : asserts.items)
          entry(a, "metric") = scalar_node(metric, file, row.line);
      entry(t, "vars") = std::move(vars);
      if (!asserts.items.empty()) entry(t, "assert") = std::move(asserts);
      out.push_back(std::move(t));
    }
  }

  const ReadContext& ctx_;
};

// promptfoo's test keys gate import carries over; the rest are listed.
const std::vector<std::string> k_test_keys = {"description", "vars",    "assert",
                                              "metadata",    "options", "threshold"};

// A var's value as the prompt's text and as JavaScript holds it (for the
// javascript assertions' context.vars: a YAML number stays a number), or
// nullopt (listed) when promptfoo would give the prompt something else (an
// object, a file it parses or runs).
struct Var {
  std::string text;
  bj::value js;
};

std::optional<Var> var_value(const Node& v, const ReadContext& ctx, const std::string& name) {
  if (v.is_null()) return Var{"", nullptr};
  if (!v.is_scalar()) {
    ctx.findings->unmapped_at(v, "var " + quote_excerpt(name),
                              "an object value; gate's vars are text and its templates have no fields");
    return std::nullopt;
  }
  if (v.text.starts_with("file://")) {
    const std::string rel = v.text.substr(7);
    const std::string ext = extension(rel);
    if (rel.find_first_of("*?[") != std::string::npos) {
      ctx.findings->unmapped_at(
          v, "var " + quote_excerpt(name),
          "a glob, which promptfoo expands into one test per file; gate import does not");
      return std::nullopt;
    }
    if (ext == ".txt" || ext == ".md" || ext == ".html" || ext == ".xml" || ext.empty()) {
      std::string text = read_text(ctx, rel, v);
      return Var{text, bj::value(text)};
    }
    ctx.findings->unmapped_at(v, "var " + quote_excerpt(name),
                              "a " + ext +
                                  " file, which promptfoo parses or runs; gate import reads text files only");
    return std::nullopt;
  }
  if (!v.quoted) {
    bj::value j = to_json(v);
    if (j.is_number() || j.is_bool()) return Var{json::canonical(j), j}; // as promptfoo's YAML reads it
    if (j.is_null()) return Var{"", nullptr};
  }
  return Var{v.text, bj::value(v.text)};
}

// promptfoo dereferences $ref in its config: an assertion
// {$ref: "#/assertionTemplates/NAME"} is that template. Another $ref is
// kept, and map_assert lists it.
Node resolve_ref(const Node& item, const Node& config) {
  const Node* ref = item.get("$ref");
  const std::string prefix = "#/assertionTemplates/";
  if (ref == nullptr || !ref->is_scalar() || !ref->text.starts_with(prefix)) return item;
  const Node* templates = config.get("assertionTemplates");
  const Node* t = templates == nullptr ? nullptr : templates->get(ref->text.substr(prefix.size()));
  return t != nullptr && t->is_map() ? *t : item;
}

} // namespace

std::vector<std::string> expand_glob(const fs::path& base, const std::string& rel, const Node& from) {
  const fs::path p(rel);
  const std::string name = p.filename().string();
  if (name.find_first_of("*?[") == std::string::npos) return {rel};
  if (p.parent_path().string().find_first_of("*?[") != std::string::npos)
    throw_bad_input(from.where() + ": " + quote_excerpt(rel) +
                    ": a glob over directories; gate import expands one in the file name only");
  std::vector<std::string> matches;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(base / p.parent_path(), ec))
    if (e.is_regular_file() && glob_match(name, e.path().filename().string()))
      matches.push_back((p.parent_path() / e.path().filename()).string());
  std::sort(matches.begin(), matches.end());
  if (matches.empty()) throw_bad_input(from.where() + ": no file matches " + quote_excerpt(rel));
  return matches;
}

std::string report_name(const fs::path& base, const fs::path& file) {
  const fs::path rel = file.lexically_normal().lexically_relative(base.lexically_normal());
  return rel.empty() ? file.generic_string() : rel.generic_string();
}

namespace {

// `path` (symlinks resolved) lies inside `dir`.
bool inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  const fs::path d = fs::weakly_canonical(dir, ec);
  if (ec) return false;
  const fs::path r = path.lexically_relative(d);
  return !r.empty() && *r.begin() != "..";
}

} // namespace

std::string read_text(const ReadContext& ctx, const std::string& rel, const Node& from) {
  const fs::path file = ctx.base / rel;
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(file, ec);
  // promptfoo reads whatever path a config names; an imported suite copies
  // what it reads, so a config from elsewhere must not pull in ~/.ssh.
  // A path that does not resolve is read_file's to name (missing, no access).
  if (!ec && !inside(real, ctx.base) &&
      std::none_of(ctx.allow_outside.begin(), ctx.allow_outside.end(),
                   [&](const fs::path& d) { return inside(real, d); }))
    throw_bad_input(
        from.where() + ": " + quote_excerpt(rel) + " is outside the config's directory (it is " +
        quote_excerpt(real.string()) +
        "); gate import reads only files below it: pass --allow-outside DIR to read from DIR too");
  std::string text;
  try {
    text = gate::read_file(file, k_max_file_bytes);
  } catch (const Error& e) {
    throw Error(Exit::bad_input, from.where() + ": " + e.what());
  }
  if (ctx.files_read != nullptr) ctx.files_read->insert(report_name(ctx.base, file));
  if (!valid_utf8(text)) throw_bad_input(from.where() + ": " + quote_excerpt(rel) + " is not UTF-8 text");
  return text;
}

std::vector<Test> read_tests(const Node& config, const ReadContext& ctx) {
  Reader reader(ctx);
  Node defaults = map_node("", 0);
  if (const Node* d = config.get("defaultTest")) {
    if (d->is_scalar() && d->text.starts_with("file://"))
      defaults = reader.yaml_file(*d, d->text.substr(7), false);
    else if (d->is_map())
      defaults = *d;
    else if (!d->is_null())
      throw_bad_input(d->where() + ": defaultTest: expected a mapping or a file:// name, got " +
                      describe(*d));
  }
  std::vector<Node> raw;
  if (const Node* spec = config.get("tests")) raw = reader.tests(*spec);

  std::vector<Test> out;
  for (const Node& t : raw) {
    Node merged = map_node(t.file, t.line);
    Node vars = map_node(t.file, t.line);
    Node asserts;
    asserts.kind = Node::Kind::list;
    Node metadata = map_node(t.file, t.line);
    bool left_out = false;
    bool rubric_prompt = false;
    for (const Node* source : {static_cast<const Node*>(&defaults), &t}) {
      for (const auto& [key, value] : source->entries) {
        if (std::find(k_test_keys.begin(), k_test_keys.end(), key) == k_test_keys.end()) {
          // provider, prompts, providerOutput, assertScoringFunction, ...: the
          // test runs or passes otherwise than a gate case would.
          ctx.findings->unmapped_at(value, "key " + quote_excerpt(key) + " of a test",
                                    "the test is left out: gate runs every case with gate.yaml's model "
                                    "and prompt and passes it when every check passes");
          left_out = true;
        } else if (key == "vars" || key == "metadata") {
          if (!value.is_map()) {
            if (!value.is_null())
              throw_bad_input(value.where() + ": " + key + ": expected a mapping, got " + describe(value));
            continue;
          }
          for (const auto& [k, v] : value.entries)
            entry(key == "vars" ? vars : metadata, k) = v;
        } else if (key == "assert") {
          if (value.is_list())
            for (const Node& item : value.items)
              asserts.items.push_back(resolve_ref(item, config));
          else if (!value.is_null())
            throw_bad_input(value.where() + ": assert: expected a list of assertions, got " +
                            describe(value));
        } else if (key == "options") {
          for (const auto& [k, v] : value.entries) {
            if (k == "rubricPrompt") rubric_prompt = true;
            if (k == "provider" || k == "rubricPrompt") {
              ctx.findings->unmapped_at(
                  v, "options." + k,
                  "not carried over: gate grades llm_judge with judge.model and its own "
                  "prompt");
            } else {
              // transform, prefix, suffix, ...: the request or the answer the
              // assertions see would differ, so no check of the test is faithful.
              ctx.findings->unmapped_at(v, "options." + k,
                                        "the test is left out: it changes the prompt or the answer its "
                                        "assertions see");
              left_out = true;
            }
          }
        } else {
          // threshold too: the import scores the test's checks against it.
          entry(merged, key) = value;
        }
      }
    }
    entry(merged, "assert") = std::move(asserts);
    if (!metadata.entries.empty()) entry(merged, "metadata") = std::move(metadata);

    // Vars as text; a list of texts makes one test per value, as in promptfoo.
    std::vector<std::pair<std::string, std::vector<Var>>> choices;
    bool usable = true;
    for (const auto& [name, v] : vars.entries) {
      std::vector<Var> values;
      for (const Node& item : v.is_list() ? v.items : std::vector<Node>{v}) {
        auto value = var_value(item, ctx, name);
        if (!value) {
          usable = false;
          break;
        }
        values.push_back(std::move(*value));
      }
      if (v.is_list() && v.items.empty()) values.push_back(Var{"", bj::value("")});
      choices.emplace_back(name, std::move(values));
    }
    std::size_t combos = 1;
    for (const auto& c : choices)
      combos = std::min(combos * std::max<std::size_t>(c.second.size(), 1), k_max_expanded + 1);
    if (combos > k_max_expanded) {
      ctx.findings->unmapped_at(t, "test", "its list-valued vars expand to more than 10000 tests");
      usable = false;
    }
    if (left_out) {
      out.push_back({merged, {}, "options or keys gate cannot run", rubric_prompt, {}});
      continue;
    }
    if (!usable) {
      out.push_back({merged, {}, "a var gate import cannot read", rubric_prompt, {}});
      continue;
    }
    for (std::size_t k = 0; k < combos; ++k) {
      Vars values;
      bj::object typed;
      std::size_t rest = k;
      for (auto it = choices.rbegin(); it != choices.rend(); ++it) {
        const Var& value = it->second[rest % it->second.size()];
        values[it->first] = value.text;
        typed[it->first] = value.js;
        rest /= it->second.size();
      }
      out.push_back({merged, std::move(values), "", rubric_prompt, std::move(typed)});
    }
  }
  return out;
}

} // namespace gate::importer::detail

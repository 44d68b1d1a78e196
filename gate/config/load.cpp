#include <gate/config/config.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <gate/config/keys.hpp>
#include <gate/util/error.hpp>
#include <gate/util/format.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::config {
namespace {

namespace fs = std::filesystem;
using detail::Kind;
using detail::Row;
using detail::Value;

// The names allowed directly in `section` ("" = top level), in table order.
std::vector<std::string> names_in(const std::string& section) {
  std::vector<std::string> out;
  const std::string prefix = section.empty() ? "" : section + ".";
  for (const Row& r : detail::rows()) {
    if (!r.info.key.starts_with(prefix)) continue;
    std::string rest = r.info.key.substr(prefix.size());
    std::string name = rest.substr(0, rest.find('.'));
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

bool is_section(const std::string& name) {
  return std::any_of(detail::rows().begin(), detail::rows().end(),
                     [&](const Row& r) { return r.info.key.starts_with(name + "."); });
}

std::string unknown_key_message(const std::string& name, const std::string& section) {
  const std::vector<std::string> names = names_in(section);
  std::string msg = "unknown key " + quote_excerpt(name, 64) +
                    (section.empty() ? " at top level" : " in " + section) + "; expected one of: ";
  for (std::size_t i = 0; i < names.size(); ++i)
    msg += (i ? ", " : "") + names[i];
  std::string best = nearest_name(name, names);
  if (best.empty()) {
    // The right name in the wrong place: "runs" under model, "name" at top level.
    for (const Row& r : detail::rows()) {
      const std::string& k = r.info.key;
      if (k == name || k.ends_with("." + name)) {
        best = k;
        break;
      }
    }
  }
  if (best.empty()) return msg;
  if (best == name) return msg + "; \"" + name + "\" belongs at top level";
  return msg + "; did you mean \"" + best + "\"?";
}

bool parse_integer(const std::string& s, std::int64_t& out) {
  std::string_view v = s;
  if (v.starts_with('+')) v.remove_prefix(1);
  if (v.empty() || v.starts_with('+')) return false;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && ptr == v.data() + v.size();
}

// Decimal numbers only: no .inf/.nan, hex or octal.
bool parse_number(const std::string& s, double& out) {
  std::string_view v = s;
  if (v.starts_with('+')) v.remove_prefix(1);
  std::size_t i = v.starts_with('-') ? 1 : 0, digits = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])))
    ++i, ++digits;
  if (i < v.size() && v[i] == '.') {
    ++i;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])))
      ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])))
      ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  if (i != v.size()) return false;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc() && ptr == v.data() + v.size();
}

std::string node_kind(const YAML::Node& n) {
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  if (n.IsNull()) return "null";
  return quote_excerpt(n.Scalar()) + (n.Tag() == "!" ? " (quoted, so a string)" : "");
}

// A YAML value as JSON, for model.extra: a plain scalar is null, a boolean
// or a number when it reads as one (as the keys above read them), else a
// string; a quoted one is always a string. yaml-cpp shares an aliased node
// rather than copying it, so here an alias bomb would expand: `visited`
// counts every node against k_max_yaml_nodes (a YAML::Exception, which
// run() locates).
boost::json::value yaml_to_json(const YAML::Node& n, std::size_t& visited) {
  if (++visited > detail::k_max_yaml_nodes)
    throw YAML::Exception(n.Mark(),
                          "alias expansion exceeds " + std::to_string(detail::k_max_yaml_nodes) +
                              " nodes; expected a config without nested aliases that repeat each other");
  if (n.IsMap()) {
    boost::json::object o;
    for (const auto& pair : n)
      o[pair.first.Scalar()] = yaml_to_json(pair.second, visited);
    return o;
  }
  if (n.IsSequence()) {
    boost::json::array a;
    for (const YAML::Node& item : n)
      a.push_back(yaml_to_json(item, visited));
    return a;
  }
  if (n.IsNull()) return nullptr;
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return boost::json::string(s);
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::int64_t i = 0;
  if (parse_integer(s, i)) return i;
  double d = 0;
  if (parse_number(s, d)) return d;
  return boost::json::string(s);
}

class Loader {
public:
  explicit Loader(const fs::path& file) : where_(file.string()), base_(file.parent_path()) {
    cfg_.file = file;
  }

  Config run(std::string_view text) {
    detail::prescan(text, where_);
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(std::string(text));
    } catch (const YAML::DeepRecursion& e) {
      fail(e.mark, "nested deeper than " + std::to_string(e.depth()) + " levels; expected a shallow config");
    } catch (const YAML::Exception& e) {
      fail(e.mark, "YAML syntax error: " + e.msg);
    }
    if (std::all_of(docs.begin(), docs.end(), [](const YAML::Node& d) { return d.IsNull(); })) {
      throw Error(Exit::bad_input,
                  located(where_, 0, 0, "empty config; expected at least suite.path and model.name"));
    }
    if (docs.size() > 1) fail(docs[1].Mark(), "a second YAML document; expected one");
    const YAML::Node& root = docs[0];
    if (!root.IsMap()) fail(root.Mark(), "expected a mapping of keys at top level, got " + node_kind(root));
    try {
      walk(root, "");
    } catch (const YAML::Exception& e) {
      fail(e.mark, e.msg);
    }
    finish(root);
    return std::move(cfg_);
  }

private:
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& msg) const {
    const std::size_t line = m.is_null() ? 0 : static_cast<std::size_t>(m.line) + 1;
    const std::size_t col = m.is_null() ? 0 : static_cast<std::size_t>(m.column) + 1;
    throw Error(Exit::bad_input, redact(located(where_, line, col, msg)));
  }

  // yaml-cpp keeps every pair of a map, duplicates included, and lookups
  // return the first: iterating and tracking names is what finds them.
  void walk(const YAML::Node& map, const std::string& section) {
    std::map<std::string, int> seen; // name -> 1-based line
    const std::string where_in = section.empty() ? " at top level" : " in " + section;
    for (const auto& pair : map) {
      const YAML::Node& key = pair.first;
      const YAML::Node& value = pair.second;
      if (!key.IsScalar()) fail(key.Mark(), "expected a key name" + where_in + ", got " + node_kind(key));
      const std::string name = key.Scalar();
      const auto [first, inserted] = seen.emplace(name, key.Mark().line + 1);
      if (!inserted) {
        fail(key.Mark(), "duplicate key " + quote_excerpt(name, 64) + where_in + " (first at line " +
                             std::to_string(first->second) + ")");
      }
      const std::string dotted = section.empty() ? name : section + "." + name;
      if (const Row* row = detail::find_row(dotted)) {
        set(*row, key, value);
      } else if (section.empty() && is_section(name)) {
        if (value.IsNull()) continue; // "model:" with nothing under it
        if (!value.IsMap()) {
          std::string names;
          for (const std::string& n : names_in(name))
            names += (names.empty() ? "" : ", ") + n;
          fail(value.Mark(), name + ": expected a mapping of keys (" + names + "), got " + node_kind(value));
        }
        walk(value, name);
      } else {
        fail(key.Mark(), unknown_key_message(name, section));
      }
    }
  }

  void set(const Row& row, const YAML::Node& key, const YAML::Node& node) {
    const std::string& dotted = row.info.key;
    // An implicit null ("key:" and nothing) has its mark on the next line.
    const YAML::Mark at = node.IsNull() ? key.Mark() : node.Mark();
    const std::string& tag = node.Tag();
    if (!tag.empty() && tag != "?" && tag != "!")
      fail(at, dotted + ": YAML tags such as " + tag + " are not supported");
    const std::string expected = dotted + ": expected " + detail::describe(row) + ", got ";
    Value v;
    if (node.IsNull()) {
      v = std::monostate{};
    } else if (row.kind == Kind::string_list) {
      if (!node.IsSequence()) fail(at, expected + node_kind(node));
      std::vector<std::string> items;
      for (const YAML::Node& item : node) {
        if (!item.IsScalar()) fail(item.Mark(), expected + "an item that is " + node_kind(item));
        items.push_back(item.Scalar());
      }
      v = std::move(items);
    } else if (row.kind == Kind::object) {
      if (!node.IsMap()) fail(at, expected + node_kind(node));
      for (const auto& pair : node)
        if (!pair.first.IsScalar())
          fail(pair.first.Mark(), expected + "a mapping whose key is " + node_kind(pair.first));
      if (!row.table_fields.empty()) check_table(row, node);
      v = node.size() == 0 ? std::string() : json::canonical(yaml_to_json(node, visited_));
    } else if (!node.IsScalar()) {
      fail(at, expected + node_kind(node));
    } else {
      const std::string& s = node.Scalar();
      const bool plain = node.Tag() != "!";
      std::int64_t i = 0;
      double d = 0;
      switch (row.kind) {
      case Kind::integer:
        if (!plain || !parse_integer(s, i)) fail(at, expected + node_kind(node));
        v = i;
        break;
      case Kind::number:
        if (!plain || !parse_number(s, d)) fail(at, expected + node_kind(node));
        v = d;
        break;
      case Kind::boolean:
        if (plain && (s == "true" || s == "True" || s == "TRUE")) {
          v = true;
        } else if (plain && (s == "false" || s == "False" || s == "FALSE")) {
          v = false;
        } else {
          fail(at, expected + node_kind(node));
        }
        break;
      default: v = s; break;
      }
    }
    if (const std::string problem = detail::check(row, v); !problem.empty())
      fail(at, dotted + ": " + problem);
    if (row.kind == Kind::path) {
      if (const auto* p = std::get_if<std::string>(&v); p && !p->empty()) v = resolve(*p);
    }
    row.set(cfg_, v);
    cfg_.origin[dotted] = where_ + ":" + std::to_string(key.Mark().line + 1);
  }

  // A table such as pricing: each name's mapping holds the row's fields
  // (those marked '?' optional), each a plain number in its range; errors
  // point at the value.
  void check_table(const Row& row, const YAML::Node& table) const {
    std::map<std::string, int> names;
    std::string fields;
    std::vector<std::string> known, required;
    std::string optional;
    for (const std::string& f : row.table_fields) {
      known.push_back(f.ends_with('?') ? f.substr(0, f.size() - 1) : f);
      if (f.ends_with('?'))
        optional += (optional.empty() ? "" : ", ") + known.back();
      else
        fields += (fields.empty() ? "" : ", ") + f;
      if (!f.ends_with('?')) required.push_back(f);
    }
    if (!optional.empty()) fields += " (optional: " + optional + ")";
    for (const auto& entry : table) {
      const std::string name = entry.first.Scalar();
      const std::string at = row.info.key + "." + name;
      if (const auto [first, fresh] = names.emplace(name, entry.first.Mark().line + 1); !fresh)
        fail(entry.first.Mark(), "duplicate key " + quote_excerpt(name, 64) + " in " + row.info.key +
                                     " (first at line " + std::to_string(first->second) + ")");
      const YAML::Node& cells = entry.second;
      if (!cells.IsMap())
        fail(cells.IsNull() ? entry.first.Mark() : cells.Mark(),
             at + ": expected a mapping of " + fields + ", got " + node_kind(cells));
      std::map<std::string, int> seen;
      for (const auto& cell : cells) {
        const std::string field = cell.first.IsScalar() ? cell.first.Scalar() : "";
        if (std::find(known.begin(), known.end(), field) == known.end())
          fail(cell.first.Mark(),
               at + ": unknown field " +
                   (cell.first.IsScalar() ? quote_excerpt(field, 64) : node_kind(cell.first)) +
                   "; expected " + fields);
        if (const auto [first, fresh] = seen.emplace(field, cell.first.Mark().line + 1); !fresh)
          fail(cell.first.Mark(), "duplicate key " + quote_excerpt(field, 64) + " in " + at +
                                      " (first at line " + std::to_string(first->second) + ")");
        const YAML::Node& value = cell.second;
        double d = 0;
        if (!value.IsScalar() || value.Tag() == "!" || !parse_number(value.Scalar(), d) ||
            !detail::in_range(row.range, d))
          fail(value.IsNull() ? cell.first.Mark() : value.Mark(), at + "." + field + ": expected a number" +
                                                                      detail::range_text(row.range) +
                                                                      ", got " + node_kind(value));
      }
      for (const std::string& f : required)
        if (!seen.contains(f))
          fail(entry.first.Mark(), at + ": missing field " + f + " (expected " + fields + ")");
    }
  }

  void finish(const YAML::Node& root) {
    for (const Row& row : detail::rows()) {
      if (!row.required || cfg_.origin.contains(row.info.key)) continue;
      // Point at the section that lacks the key when there is one.
      const std::string section = row.info.key.substr(0, row.info.key.find('.'));
      YAML::Mark at = YAML::Mark::null_mark();
      for (const auto& pair : root) {
        if (section != row.info.key && pair.first.Scalar() == section) at = pair.first.Mark();
      }
      fail(at, "missing required key " + row.info.key + " (" + row.info.help + ")");
    }
    if (cfg_.model.provider == "anthropic" && cfg_.model.api != "chat") {
      fail(mark_of(root, "model", "api"),
           "model.api: provider anthropic speaks only its Messages API; expected "
           "chat, or provider openai for the Responses API");
    }
    // Google's OpenAI-compatible endpoint has no Responses API.
    if (cfg_.model.provider == "gemini" && cfg_.model.api != "chat") {
      fail(mark_of(root, "model", "api"),
           "model.api: provider gemini speaks only Chat Completions; expected chat");
    }
    check_azure(root);
    // Provider-dependent defaults, unless the file chose a value.
    // openai's are the struct's own defaults, shown as plain "default".
    if (const Provider* p = find_provider(cfg_.model.provider); p != nullptr && p->name != "openai") {
      const std::string origin = "default (provider " + p->name + ")";
      if (!cfg_.origin.contains("model.base_url")) {
        cfg_.model.base_url = p->base_url;
        cfg_.origin["model.base_url"] = origin;
      }
      if (!cfg_.origin.contains("model.api_key_env")) {
        cfg_.model.api_key_env = p->api_key_env;
        cfg_.origin["model.api_key_env"] = origin;
      }
    }
    for (const Row& row : detail::rows()) {
      if (cfg_.origin.contains(row.info.key)) continue;
      // Default paths are relative to the file too, like the ones it sets.
      if (row.kind == Kind::path) {
        const Value current = row.get(cfg_);
        if (const auto* p = std::get_if<std::string>(&current); p && !p->empty()) row.set(cfg_, resolve(*p));
      }
      cfg_.origin[row.info.key] = "default";
    }
  }

  // Azure's endpoint is the user's own resource; its api-version means
  // deployment URLs, where model.name is a path segment.
  void check_azure(const YAML::Node& root) {
    const ModelConfig& m = cfg_.model;
    if (m.provider != "azure") {
      if (!m.api_version.empty())
        fail(mark_of(root, "model", "api_version"),
             "model.api_version: only provider azure takes an api-version; remove it, or set "
             "model.provider: azure");
      return;
    }
    if (!cfg_.origin.contains("model.base_url"))
      fail(mark_of(root, "model", "provider"),
           "model.base_url: provider azure needs your resource's endpoint, e.g. "
           "https://NAME.openai.azure.com/openai/v1 (the v1 API), or https://NAME.openai.azure.com/openai "
           "with model.api_version for deployment URLs");
    if (m.api_version.empty()) return;
    const bool segment = std::all_of(m.name.begin(), m.name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
    });
    if (!segment)
      fail(mark_of(root, "model", "name"),
           "model.name: with model.api_version, the name is the Azure deployment in the URL path; "
           "expected letters, digits, - . _, got " +
               quote_excerpt(m.name));
  }

  // Where `section.name` is set in the file, for errors about a combination.
  static YAML::Mark mark_of(const YAML::Node& root, const std::string& section, const std::string& name) {
    for (const auto& s : root)
      if (s.first.Scalar() == section && s.second.IsMap())
        for (const auto& k : s.second)
          if (k.first.Scalar() == name) return k.first.Mark();
    return YAML::Mark::null_mark();
  }

  Value resolve(const std::string& p) const {
    return fs::path(p).is_absolute() ? p : (base_ / p).lexically_normal().string();
  }

  std::string where_;
  fs::path base_;
  Config cfg_;
  std::size_t visited_ = 0; // nodes yaml_to_json has converted, aliases expanded
};

} // namespace

Config load(const fs::path& file) {
  const std::string text = read_file(file, detail::k_max_config_bytes);
  return Loader(file).run(text);
}

} // namespace gate::config

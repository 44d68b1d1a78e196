#include <gate/importer/node.hpp>

#include <charconv>
#include <map>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <gate/config/keys.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::importer {

namespace {

[[noreturn]] void fail_at(const std::string& file, const YAML::Mark& m, const std::string& msg) {
  const std::size_t line = m.is_null() ? 0 : static_cast<std::size_t>(m.line) + 1;
  const std::size_t col = m.is_null() ? 0 : static_cast<std::size_t>(m.column) + 1;
  throw Error(Exit::bad_input, located(file, line, col, msg));
}

// Converts one document, counting every node visited against
// k_max_yaml_nodes: yaml-cpp shares an aliased node rather than copying it,
// so only here does an alias bomb expand.
struct Converter {
  const std::string& file;
  std::size_t visited = 0;

  Node convert(const YAML::Node& y) {
    if (++visited > config::detail::k_max_yaml_nodes)
      fail_at(file, y.Mark(),
              "alias expansion exceeds " + std::to_string(config::detail::k_max_yaml_nodes) +
                  " nodes; expected a config without nested aliases that repeat each other");
    Node n;
    n.file = file;
    n.line = y.Mark().is_null() ? 0 : static_cast<std::size_t>(y.Mark().line) + 1;
    const std::string& tag = y.Tag();
    if (!tag.empty() && tag != "?" && tag != "!")
      fail_at(file, y.Mark(), "YAML tag " + quote_excerpt(tag) + "; expected plain values");
    if (y.IsMap()) {
      n.kind = Node::Kind::map;
      std::map<std::string, std::size_t> seen;
      std::vector<YAML::Node> merge_values;
      for (const auto& pair : y) {
        if (!pair.first.IsScalar()) fail_at(file, pair.first.Mark(), "expected a key name, got a collection");
        const std::string key = pair.first.Scalar();
        const std::size_t line = static_cast<std::size_t>(pair.first.Mark().line) + 1;
        if (auto [it, fresh] = seen.emplace(key, line); !fresh)
          fail_at(file, pair.first.Mark(),
                  "duplicate key " + quote_excerpt(key) + " (first at line " + std::to_string(it->second) +
                      ")");
        if (key == "<<" && pair.first.Tag() != "!") {
          merge_values.push_back(pair.second);
          continue;
        }
        n.add(key, convert(pair.second));
        // An implicit null ("key:" and nothing) is marked where the next node begins.
        if (pair.second.IsNull()) n.entries.back().second.line = line;
      }
      for (const YAML::Node& m : merge_values)
        merge(n, m);
    } else if (y.IsSequence()) {
      n.kind = Node::Kind::list;
      for (const YAML::Node& item : y)
        n.items.push_back(convert(item));
    } else if (y.IsScalar()) {
      n.kind = Node::Kind::scalar;
      n.text = y.Scalar();
      n.quoted = tag == "!";
    }
    return n;
  }

  // YAML 1.1's merge key (yaml.org/type/merge.html), which yaml-cpp does
  // not implement: "<<: *m" adds m's keys, "<<: [*a, *b]" adds a's then
  // b's; a key already in the mapping (written there, or from an earlier
  // source) wins.
  void merge(Node& into, const YAML::Node& from) {
    if (from.IsSequence()) {
      for (const YAML::Node& item : from) {
        if (!item.IsMap()) fail_at(file, item.Mark(), "expected a mapping to merge (\"<<: [*a, *b]\")");
        merge(into, item);
      }
      return;
    }
    if (!from.IsMap()) fail_at(file, from.Mark(), "expected a mapping or a list of mappings after \"<<:\"");
    Node source = convert(from);
    for (auto& [k, v] : source.entries)
      if (into.get(k) == nullptr) into.add(k, std::move(v));
  }
};

bool plain_integer(std::string_view s, std::int64_t& out) {
  if (s.starts_with('+')) s.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

bool plain_number(std::string_view s, double& out) {
  if (s.starts_with('+')) s.remove_prefix(1);
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) != 0 || s[0] == '-' || s[0] == '.'))
    return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

} // namespace

const Node* Node::get(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

Node scalar_node(std::string text, const std::string& file, std::size_t line) {
  Node n;
  n.kind = Node::Kind::scalar;
  n.text = std::move(text);
  n.quoted = true;
  n.file = file;
  n.line = line;
  return n;
}

Node map_node(const std::string& file, std::size_t line) {
  Node n;
  n.kind = Node::Kind::map;
  n.file = file;
  n.line = line;
  return n;
}

void Node::add(std::string key, Node value) { entries.push_back(Entry{std::move(key), std::move(value)}); }

std::string Node::where() const { return file + ":" + std::to_string(line); }

Node read_yaml(std::string_view text, const std::string& file, bool list_root) {
  config::detail::prescan(text, file);
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    fail_at(file, e.mark, "nested deeper than " + std::to_string(e.depth()) + " levels");
  } catch (const YAML::Exception& e) {
    fail_at(file, e.mark, "YAML syntax error: " + e.msg);
  }
  if (docs.empty()) return Node{Node::Kind::null, "", false, {}, {}, file, 0};
  if (docs.size() > 1) fail_at(file, docs[1].Mark(), "a second YAML document; expected one");
  const YAML::Node& root = docs[0];
  if (!root.IsNull() && !root.IsMap() && !(list_root && root.IsSequence()))
    fail_at(file, root.Mark(),
            std::string("expected a mapping of keys at top level (key: value lines)") +
                (root.IsSequence() ? ", got a list" : ""));
  try {
    return Converter{file}.convert(root);
  } catch (const YAML::Exception& e) {
    fail_at(file, e.mark, e.msg);
  }
}

Node from_json(const boost::json::value& v, const std::string& file, std::size_t line) {
  Node n;
  n.file = file;
  n.line = line;
  if (v.is_object()) {
    n.kind = Node::Kind::map;
    for (const auto& kv : v.as_object())
      n.add(std::string(kv.key()), from_json(kv.value(), file, line));
  } else if (v.is_array()) {
    n.kind = Node::Kind::list;
    for (const auto& item : v.as_array())
      n.items.push_back(from_json(item, file, line));
  } else if (v.is_string()) {
    n.kind = Node::Kind::scalar;
    n.text = std::string(v.as_string());
    n.quoted = true;
  } else if (!v.is_null()) {
    n.kind = Node::Kind::scalar;
    n.text = json::canonical(v);
  }
  return n;
}

boost::json::value to_json(const Node& n) {
  switch (n.kind) {
  case Node::Kind::null: return nullptr;
  case Node::Kind::map: {
    boost::json::object o;
    for (const auto& [k, v] : n.entries)
      o[k] = to_json(v);
    return o;
  }
  case Node::Kind::list: {
    boost::json::array a;
    for (const auto& item : n.items)
      a.push_back(to_json(item));
    return a;
  }
  case Node::Kind::scalar: break;
  }
  const std::string& s = n.text;
  if (n.quoted) return boost::json::string(s);
  if (s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::int64_t i = 0;
  if (plain_integer(s, i)) return i;
  double d = 0;
  if (plain_number(s, d)) return d;
  return boost::json::string(s);
}

std::string describe(const Node& n) {
  switch (n.kind) {
  case Node::Kind::null: return "null";
  case Node::Kind::map: return "a mapping";
  case Node::Kind::list: return "a list";
  case Node::Kind::scalar: break;
  }
  return quote_excerpt(n.text);
}

std::vector<CsvRow> read_csv(std::string_view text, const std::string& file) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  if (!valid_utf8(text)) throw Error(Exit::bad_input, file + ": invalid UTF-8; expected a UTF-8 CSV file");
  std::vector<CsvRow> rows;
  std::size_t line = 1, col = 1;
  std::size_t i = 0;
  auto fail = [&](const std::string& msg) { throw Error(Exit::bad_input, located(file, line, col, msg)); };
  while (i < text.size()) {
    CsvRow row{line, {}};
    bool end_of_record = false;
    while (!end_of_record) {
      std::string cell;
      if (i < text.size() && text[i] == '"') {
        const std::size_t open_line = line, open_col = col;
        ++i, ++col;
        for (;;) {
          if (i >= text.size())
            throw Error(Exit::bad_input, located(file, open_line, open_col,
                                                 "quoted field never closed; expected a closing \""));
          const char c = text[i];
          if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
            cell += '"';
            i += 2, col += 2;
          } else if (c == '"') {
            ++i, ++col;
            break;
          } else {
            if (c == '\n') ++line, col = 0;
            cell += c;
            ++i, ++col;
          }
        }
        if (i < text.size() && text[i] != ',' && text[i] != '\n' && text.substr(i, 2) != "\r\n")
          fail("text after a closing quote; expected , or the end of the line");
      } else {
        while (i < text.size() && text[i] != ',' && text[i] != '\n' && text.substr(i, 2) != "\r\n") {
          if (text[i] == '"') fail("a quote inside an unquoted field; quote the whole field and write \"\"");
          cell += text[i];
          ++i, ++col;
        }
      }
      row.cells.push_back(std::move(cell));
      if (i < text.size() && text[i] == ',') {
        ++i, ++col;
      } else {
        i += i < text.size() && text[i] == '\r' ? 2 : 1;
        ++line, col = 1;
        end_of_record = true;
      }
    }
    // A blank line is no record (a final line end adds none either).
    if (!(row.cells.size() == 1 && row.cells[0].empty())) rows.push_back(std::move(row));
  }
  return rows;
}

} // namespace gate::importer

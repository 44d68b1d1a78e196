#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The promptfoo files gate import reads (YAML, JSON, JSON Lines, CSV), as
// one tree whose every node knows its file and line, so that each finding
// of the import report names where it came from.
namespace gate::importer {

struct Node {
  enum class Kind { null, scalar, list, map };
  struct Entry; // a key and its value (not std::pair: Node is incomplete here)
  Kind kind = Kind::null;
  std::string text;    // a scalar as written (a JSON number or boolean as its JSON text)
  bool quoted = false; // a quoted YAML scalar or a JSON string: a string, never a number
  std::vector<Node> items;
  std::vector<Entry> entries; // in file order, keys unique
  std::string file;           // as the import report names it
  std::size_t line = 0;       // 1-based; 0 = the whole file

  bool is_scalar() const { return kind == Kind::scalar; }
  bool is_list() const { return kind == Kind::list; }
  bool is_map() const { return kind == Kind::map; }
  bool is_null() const { return kind == Kind::null; }
  const Node* get(std::string_view key) const; // nullptr when absent (or not a map)
  std::string where() const;                   // "file:line"
  void add(std::string key, Node value);
};

struct Node::Entry {
  std::string first;
  Node second;
};

// A string scalar and an empty mapping at file:line, for the tests and
// assertions read from CSV cells.
Node scalar_node(std::string text, const std::string& file, std::size_t line);
Node map_node(const std::string& file, std::size_t line);

// Parses YAML after config's prescan (which bounds yaml-cpp, as it loops on
// some inputs). Merge keys follow YAML 1.1; an alias bomb is an error (at
// most k_max_yaml_nodes visited). The root is a mapping, or also a list with
// `list_root`. Duplicate keys, tags and YAML errors are Error(bad_input)
// "file:line:col: ..."; an empty document is a null node.
Node read_yaml(std::string_view text, const std::string& file, bool list_root);

// A JSON value as a node of `file` at `line` (JSON Lines: the record's line).
Node from_json(const boost::json::value& v, const std::string& file, std::size_t line);

// A node as JSON: a quoted scalar is a string; a plain one is null, a
// boolean or a number when it reads as one (YAML's core schema), else a
// string.
boost::json::value to_json(const Node& n);

// "a mapping", "a list", "null" or the quoted scalar: for messages.
std::string describe(const Node& n);

// A CSV file (RFC 4180: quoted fields, "" inside quotes, line ends inside
// quotes, CRLF), each record with the line it starts on. A stray quote or
// an unclosed one is Error(bad_input) "file:line:col: ...".
struct CsvRow {
  std::size_t line = 0;
  std::vector<std::string> cells;
};
std::vector<CsvRow> read_csv(std::string_view text, const std::string& file);

} // namespace gate::importer

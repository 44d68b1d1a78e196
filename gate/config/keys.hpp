#pragma once

// Internal to gate_config: the rows behind key_table(). Each row binds one
// key to its Config member, its kind and range, so that the loader, apply(),
// show() and to_json() cannot disagree about what a key is.

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <gate/config/config.hpp>

namespace gate::config::detail {

// A parsed value: null, bool, integer, number, string or list of strings.
using Value = std::variant<std::monostate, bool, std::int64_t, double, std::string, std::vector<std::string>>;

enum class Kind {
  string,
  path,     // resolved against the config file's directory
  out_file, // relative to outputs.dir, kept as given
  integer,
  number,
  boolean,
  choice,
  string_list,
  object, // a mapping, held as canonical JSON text (model.extra, pricing)
};

struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false; // (min, max] rather than [min, max]
};

struct Row {
  KeyInfo info;
  Kind kind = Kind::string;
  bool nullable = false;
  bool required = false;
  Range range;
  std::vector<std::string> choices;
  // Kind::object as a table (pricing): a mapping of names to mappings that
  // hold exactly these fields, each a number in `range`. Empty: any mapping.
  std::vector<std::string> table_fields;
  // A check beyond kind and range; returns "" or what was expected.
  std::function<std::string(const Value&)> extra;
  std::function<void(Config&, const Value&)> set;
  std::function<Value(const Config&)> get;
  // In a report's copy of the configuration (to_json): what shapes the
  // numbers. Paths on this machine and where outputs go are not.
  bool reported = true;
};

const std::vector<Row>& rows();
const Row* find_row(std::string_view key);

// " in 0..2", " >= 0", " > 0 and <= 3600", "" (unbounded).
std::string range_text(const Range& r);
bool in_range(const Range& r, double x);
// "an integer in 1..1000", "one of a|b", "a number 0..2 or null".
std::string describe(const Row& r);
// "" when `v` fits the row, else "expected <describe>, got <v>" or the
// extra check's message.
std::string check(const Row& r, const Value& v);
// A value as show() prints it: null, true, 3, 0.05, v1, "a b", ["/user"].
std::string render(const Value& v);
// A row's value as show() and the key table print it: render(v), except that
// a mapping prints as its JSON, which YAML reads back as the same mapping
// ({} when empty).
std::string shown(const Row& r, const Value& v);
// Shortest round-trip text of a double ("2", "0.05").
std::string number_text(double d);

} // namespace gate::config::detail

namespace gate::config::detail {

// Flow collections may nest this deep; a config needs two or three levels.
inline constexpr int k_max_flow_depth = 64;
inline constexpr std::size_t k_max_config_bytes = 1 << 20;

// How many nodes converting one YAML document may visit, counting every
// node reached through an alias again: a 1 MiB config holds far fewer,
// while an alias bomb (billion laughs) expands to billions.
inline constexpr std::size_t k_max_yaml_nodes = 500'000;
// The bounds on yaml-cpp's own parse (see prescan).
inline constexpr std::uint64_t k_yaml_parse_cpu_us_per_mib = 3'000'000;
inline constexpr std::uint64_t k_yaml_parse_memory = std::uint64_t{1} << 30;

// How prescan found the text safe to parse.
enum class YamlGuard {
  plain_form, // the plain block form, which yaml-cpp always finishes on
  child,      // parsed once in the bounded child first
};

// Checks the raw text before yaml-cpp sees it (size, NUL bytes, invalid
// UTF-8, lone CR), then, unless it is in the plain block form, parses it
// once in a child process under a CPU and memory limit, since yaml-cpp
// loops on some invalid inputs. Throws Error(bad_input) "where:line:col:
// ..."; when it returns, YAML::LoadAll on the same text returns (documents
// or a YAML::Exception).
YamlGuard prescan(std::string_view text, const std::string& where);

} // namespace gate::config::detail

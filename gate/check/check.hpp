#pragma once

#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gate::check {

class Regex; // linear-time matcher, see regex.hpp

// A parsed check, validated when the suite loads (an unknown type or a bad
// pattern is a suite error before any model call). Fields not used by a
// type stay empty.
struct Check {
  std::string type;                       // equals, contains, icontains, not_contains, contains_any,
                                          // contains_all, starts_with, regex, json, number, length
  std::string label;                      // how results name it: type, or "type:<name>" when given a name
  std::vector<std::string> values;        // the text operands (one for equals/contains/...)
  bool trim = true, ignore_case = false, collapse_whitespace = false; // equals options
  std::shared_ptr<const Regex> regex;     // regex
  // json: each path is a JSON pointer with one condition.
  struct JsonPath {
    std::string pointer;
    std::optional<boost::json::value> equals;
    std::vector<boost::json::value> one_of;
    std::optional<double> min, max;
    bool exists = true;                   // exists: false → the path must be absent
  };
  std::vector<JsonPath> json_paths;
  // number: first number in the answer within value ± tolerance.
  double number = 0, tolerance = 0;
  // length: chars or words within [min, max].
  std::string unit = "chars";
  std::optional<double> min, max;
};

// Parses one check object from a suite line. `expected` is the case's
// expected answer, used by `equals` when the check gives no value. Throws
// Error(bad_input) with `where` (file:line) and what was expected.
Check parse(const boost::json::value& spec, const std::optional<std::string>& expected, const std::string& where);

struct Result {
  std::string label;
  bool passed = false;
  std::string detail; // why it failed, short; empty on pass
};

// Evaluates a check on a model's final answer. Pure; never throws for any
// answer bytes (invalid UTF-8 included).
Result evaluate(const Check& c, std::string_view answer);

} // namespace gate::check

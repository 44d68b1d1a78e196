#pragma once

#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gate::check {

class Regex;

// The json_schema check's schema: a subset of JSON Schema draft 2020-12
// (docs/suite-format.md "JSON Schema subset"), compiled once when the suite
// loads. Hand-written rather than a packaged validator: Debian 12's
// valijson reads drafts 3, 4 and 7 only, runs `pattern` on std::regex
// (backtracking, on untrusted answers) and ignores keywords it does not
// know; here every `pattern` runs on RE2 (regex.hpp) and an unknown
// keyword is a suite error.
struct Schema {
  // One subschema. A boolean schema is `always` set and nothing else.
  struct Node {
    std::optional<bool> always; // true / false schema
    std::string at;             // its pointer in the schema, for messages
    unsigned types = 0;         // bit set of Kind; 0 = any
    std::optional<std::vector<boost::json::value>> enum_values;
    std::optional<boost::json::value> const_value;
    std::vector<std::pair<std::string, int>> properties; // name → node
    std::vector<std::string> required;
    int additional = -1; // additionalProperties: node (a boolean schema for true/false), -1 absent
    std::vector<int> prefix_items;
    int items = -1;
    std::optional<double> min_items, max_items;
    bool unique_items = false;
    std::optional<double> minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of;
    std::optional<double> min_length, max_length;
    std::string pattern;                // as written
    std::shared_ptr<const Regex> regex; // pattern
    std::vector<int> any_of, all_of, one_of;
    int negated = -1; // not
    int ref = -1;     // $ref, resolved
  };
  // JSON's kinds, as `type` names them; integer is a number without a fraction.
  enum Kind : unsigned {
    null = 1,
    boolean = 2,
    object = 4,
    array = 8,
    number = 16,
    string = 32,
    integer = 64
  };
  std::vector<Node> nodes; // nodes[0] is the root
};

// The keywords compile_schema() accepts, in the order docs list them.
const std::vector<std::string>& schema_keywords();

// Compiles `schema` (an object or a boolean). Throws Error(bad_input) with
// `where` and the subschema's pointer for an unsupported keyword (naming
// it), a keyword of the wrong shape, a bad pattern, or a $ref that is not
// `#` or `#/$defs/<name>` of this schema.
std::shared_ptr<const Schema> compile_schema(const boost::json::value& schema, const std::string& where);

// "" when `doc` is valid, else the first failure as `<instance pointer>:
// <what>`, e.g. `/items/0/qty: 0 is less than minimum 1` (values redacted,
// cut and escaped). `base` is the pointer `doc` sits at in the answer.
// Throws std::runtime_error when validation exceeds its depth or step
// budget (a $ref cycle, an exponential schema).
std::string schema_failure(const Schema& schema, const boost::json::value& doc, const std::string& base);

} // namespace gate::check

#include <gate/check/schema.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>

#include <gate/check/detail.hpp>
#include <gate/check/regex.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::check {

namespace {

// Keywords that assert nothing: read and kept out of validation.
const std::vector<std::string> k_annotations = {"$schema",     "$comment", "title",
                                                "description", "default",  "examples"};

const std::vector<std::pair<std::string, unsigned>> k_type_names = {
    {"null", Schema::null},      {"boolean", Schema::boolean}, {"object", Schema::object},
    {"array", Schema::array},    {"number", Schema::number},   {"string", Schema::string},
    {"integer", Schema::integer}};

const char* k_draft = "https://json-schema.org/draft/2020-12/schema";

struct Compiler {
  Schema& out;
  std::string where;
  const boost::json::object* defs = nullptr; // the root's $defs
  std::vector<std::pair<std::string, int>> def_nodes;
  std::vector<std::pair<int, std::string>> refs; // node, $ref text: resolved at the end

  [[noreturn]] void fail(const std::string& at, const std::string& what) const {
    throw_bad_input(where + ": \"schema\"" + (at.empty() ? "" : " at " + quote_excerpt(at)) + ": " + what);
  }

  double number(const boost::json::value& v, const std::string& at, const char* key) const {
    if (!v.is_number()) fail(at, std::string("\"") + key + "\" must be a number, got " + json::kind_name(v));
    return json::to_double(v);
  }
  double count(const boost::json::value& v, const std::string& at, const char* key) const {
    const double d = v.is_number() ? json::to_double(v) : -1;
    if (d < 0 || d != std::floor(d))
      fail(at, std::string("\"") + key + "\" must be a whole number >= 0, got " + json::kind_name(v));
    return d;
  }
  std::vector<int> list(const boost::json::value& v, const std::string& at, const char* key) {
    if (!v.is_array() || v.get_array().empty())
      fail(at, std::string("\"") + key + "\" must be a non-empty array of schemas");
    std::vector<int> ids;
    for (std::size_t i = 0; i < v.get_array().size(); ++i)
      ids.push_back(compile(v.get_array()[i], at + "/" + key + "/" + std::to_string(i)));
    return ids;
  }

  unsigned types(const boost::json::value& v, const std::string& at) const {
    auto one = [&](const boost::json::value& t) -> unsigned {
      if (t.is_string())
        for (const auto& [name, bit] : k_type_names)
          if (t.get_string() == name) return bit;
      fail(at, "\"type\" must be one of null, boolean, object, array, number, string, integer (or an array "
               "of them), got " +
                   (t.is_string() ? quote_excerpt(t.get_string()) : json::kind_name(t)));
    };
    if (!v.is_array()) return one(v);
    if (v.get_array().empty()) fail(at, "\"type\" must not be an empty array");
    unsigned bits = 0;
    for (const auto& t : v.get_array())
      bits |= one(t);
    return bits;
  }

  // Compiles one subschema at `at` (its pointer in the schema) into a node.
  int compile(const boost::json::value& v, const std::string& at) {
    const int id = static_cast<int>(out.nodes.size());
    out.nodes.emplace_back();
    out.nodes[id].at = at;
    if (v.is_bool()) {
      out.nodes[id].always = v.get_bool();
      return id;
    }
    if (!v.is_object())
      fail(at, std::string("a schema must be an object or a boolean, got ") + json::kind_name(v));
    for (const auto& kv : v.get_object())
      keyword(id, kv.key(), kv.value(), at);
    const Schema::Node& n = out.nodes[id];
    if (n.min_items && n.max_items && *n.min_items > *n.max_items)
      fail(at, "\"minItems\" is greater than \"maxItems\"");
    if (n.min_length && n.max_length && *n.min_length > *n.max_length)
      fail(at, "\"minLength\" is greater than \"maxLength\"");
    return id;
  }

  void keyword(int id, std::string_view key, const boost::json::value& v, const std::string& at) {
    // Every branch reads out.nodes[id] afresh: compiling a subschema grows
    // the vector and moves its elements.
    auto node = [&]() -> Schema::Node& { return out.nodes[static_cast<std::size_t>(id)]; };
    const std::string k(key);
    if (std::find(k_annotations.begin(), k_annotations.end(), k) != k_annotations.end()) {
      if (k == "$schema" && !(v.is_string() && v.get_string() == k_draft))
        fail(at, std::string("\"$schema\" must be \"") + k_draft + "\" (the draft gate reads), or left out");
      return;
    }
    if (k == "$defs") {
      if (!at.empty()) fail(at, "\"$defs\" is read at the root of the schema only");
      return; // compiled on first use by a $ref
    }
    if (k == "type") {
      node().types = types(v, at);
    } else if (k == "enum") {
      if (!v.is_array() || v.get_array().empty()) fail(at, "\"enum\" must be a non-empty array");
      node().enum_values.emplace(v.get_array().begin(), v.get_array().end());
    } else if (k == "const") {
      node().const_value = v;
    } else if (k == "properties") {
      if (!v.is_object()) fail(at, "\"properties\" must be an object of schemas");
      for (const auto& p : v.get_object()) {
        const int child = compile(p.value(), at + "/properties/" + detail::pointer_token(p.key()));
        node().properties.emplace_back(std::string(p.key()), child);
      }
    } else if (k == "required") {
      if (!v.is_array()) fail(at, "\"required\" must be an array of property names");
      for (const auto& r : v.get_array()) {
        if (!r.is_string())
          fail(at, std::string("\"required\" must hold strings, got ") + json::kind_name(r));
        node().required.emplace_back(r.get_string());
      }
    } else if (k == "additionalProperties") {
      const int child = compile(v, at + "/additionalProperties");
      node().additional = child;
    } else if (k == "items") {
      if (v.is_array())
        fail(at, "\"items\" must be one schema (draft 2020-12); an array of schemas is \"prefixItems\"");
      const int child = compile(v, at + "/items");
      node().items = child;
    } else if (k == "prefixItems") {
      auto ids = list(v, at, "prefixItems");
      node().prefix_items = std::move(ids);
    } else if (k == "minItems" || k == "maxItems") {
      (k == "minItems" ? node().min_items : node().max_items) = count(v, at, k.c_str());
    } else if (k == "uniqueItems") {
      if (!v.is_bool()) fail(at, "\"uniqueItems\" must be true or false");
      node().unique_items = v.get_bool();
    } else if (k == "minimum") {
      node().minimum = number(v, at, "minimum");
    } else if (k == "maximum") {
      node().maximum = number(v, at, "maximum");
    } else if (k == "exclusiveMinimum") {
      node().exclusive_minimum = number(v, at, "exclusiveMinimum");
    } else if (k == "exclusiveMaximum") {
      node().exclusive_maximum = number(v, at, "exclusiveMaximum");
    } else if (k == "multipleOf") {
      node().multiple_of = number(v, at, "multipleOf");
      if (!(*node().multiple_of > 0)) fail(at, "\"multipleOf\" must be greater than 0");
    } else if (k == "minLength" || k == "maxLength") {
      (k == "minLength" ? node().min_length : node().max_length) = count(v, at, k.c_str());
    } else if (k == "pattern") {
      if (!v.is_string()) fail(at, std::string("\"pattern\" must be a string, got ") + json::kind_name(v));
      node().pattern = std::string(v.get_string());
      node().regex = std::make_shared<const Regex>(node().pattern, where + ": \"schema\" at " +
                                                                       quote_excerpt(at + "/pattern"));
    } else if (k == "anyOf" || k == "allOf" || k == "oneOf") {
      auto ids = list(v, at, k.c_str());
      (k == "anyOf" ? node().any_of : k == "allOf" ? node().all_of : node().one_of) = std::move(ids);
    } else if (k == "not") {
      const int child = compile(v, at + "/not");
      node().negated = child;
    } else if (k == "$ref") {
      if (!v.is_string()) fail(at, "\"$ref\" must be a string");
      refs.emplace_back(id, std::string(v.get_string()));
    } else {
      std::string known;
      for (const auto& w : schema_keywords())
        known += (known.empty() ? "" : ", ") + w;
      fail(at, "unsupported keyword " + quote_excerpt(key) +
                   " (gate reads a subset of draft 2020-12: " + known + ")");
    }
  }

  // "#" or "#/$defs/<name>" (~0 ~1 and %-escapes undone), compiled once.
  int resolve(const std::string& ref, const std::string& at) {
    if (ref == "#") return 0;
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0 || ref.find('/', prefix.size()) != std::string::npos)
      fail(at, "\"$ref\" " + quote_excerpt(ref) + " is not supported: only \"#\" and \"#/$defs/<name>\"");
    std::string name;
    const std::string raw = ref.substr(prefix.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        name += raw[++i] == '0' ? '~' : '/';
      } else if (raw[i] == '%' && i + 2 < raw.size() && hex_digit(raw[i + 1]) >= 0 &&
                 hex_digit(raw[i + 2]) >= 0) {
        name += static_cast<char>(hex_digit(raw[i + 1]) * 16 + hex_digit(raw[i + 2]));
        i += 2;
      } else {
        name += raw[i];
      }
    }
    const int node = def_node(name);
    if (node < 0) fail(at, "\"$ref\" " + quote_excerpt(ref) + ": no such entry in the root's \"$defs\"");
    return node;
  }

  // The node of $defs/<name>, compiled on first use; -1 when there is none.
  int def_node(const std::string& name) {
    for (const auto& [n, node] : def_nodes)
      if (n == name) return node;
    const boost::json::value* def = defs != nullptr ? defs->if_contains(name) : nullptr;
    if (def == nullptr) return -1;
    const int node = compile(*def, "/$defs/" + detail::pointer_token(name));
    def_nodes.emplace_back(name, node);
    return node;
  }

  // Resolves every $ref met so far, and those the entries it compiles hold.
  void resolve_refs() {
    for (std::size_t i = 0; i < refs.size(); ++i) {
      const auto [node, ref] = refs[i];
      const int target = resolve(ref, out.nodes[static_cast<std::size_t>(node)].at);
      out.nodes[static_cast<std::size_t>(node)].ref = target;
    }
    refs.clear();
  }
};

} // namespace

const std::vector<std::string>& schema_keywords() {
  static const std::vector<std::string> k_words = [] {
    std::vector<std::string> w = {"type",
                                  "enum",
                                  "const",
                                  "properties",
                                  "required",
                                  "additionalProperties",
                                  "items",
                                  "prefixItems",
                                  "minItems",
                                  "maxItems",
                                  "uniqueItems",
                                  "minimum",
                                  "exclusiveMinimum",
                                  "maximum",
                                  "exclusiveMaximum",
                                  "multipleOf",
                                  "minLength",
                                  "maxLength",
                                  "pattern",
                                  "anyOf",
                                  "allOf",
                                  "oneOf",
                                  "not",
                                  "$ref",
                                  "$defs"};
    w.insert(w.end(), k_annotations.begin(), k_annotations.end());
    return w;
  }();
  return k_words;
}

std::shared_ptr<const Schema> compile_schema(const boost::json::value& schema, const std::string& where) {
  auto out = std::make_shared<Schema>();
  Compiler c{*out, where, nullptr, {}, {}};
  if (schema.is_object()) {
    if (const auto* d = schema.get_object().if_contains("$defs")) {
      if (!d->is_object()) c.fail("", "\"$defs\" must be an object of schemas");
      c.defs = &d->get_object();
    }
  }
  c.compile(schema, "");
  // $defs entries are compiled when a $ref names them, and may refer on;
  // an entry nobody names is compiled too, so its errors are not hidden.
  c.resolve_refs();
  if (c.defs != nullptr)
    for (const auto& d : *c.defs) {
      c.def_node(std::string(d.key()));
      c.resolve_refs();
    }
  return out;
}

} // namespace gate::check

#include <gate/check/schema.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <cmath>
#include <optional>
#include <stdexcept>

#include <gate/check/check.hpp>
#include <gate/check/detail.hpp>
#include <gate/check/regex.hpp>
#include <gate/util/json.hpp>

namespace gate::check {

namespace {

using detail::show_json;
using detail::show_number;

// Subschemas entered at once (a $ref cycle that never moves into the
// answer ends here), and subschemas entered in all (anyOf over anyOf over
// a deep answer could otherwise take exponential time).
constexpr int k_max_nesting = 200;
constexpr std::size_t k_max_steps = 1'000'000;

bool is_integer(const boost::json::value& v) {
  if (v.is_int64() || v.is_uint64()) return true;
  return v.is_double() && std::isfinite(v.get_double()) && v.get_double() == std::floor(v.get_double());
}

unsigned kind_of(const boost::json::value& v) {
  switch (v.kind()) {
  case boost::json::kind::null: return Schema::null;
  case boost::json::kind::bool_: return Schema::boolean;
  case boost::json::kind::object: return Schema::object;
  case boost::json::kind::array: return Schema::array;
  case boost::json::kind::string: return Schema::string;
  default: return Schema::number | (is_integer(v) ? Schema::integer : 0u);
  }
}

std::string type_list(unsigned bits) {
  static const std::pair<unsigned, const char*> k_names[] = {
      {Schema::null, "null"},      {Schema::boolean, "boolean"}, {Schema::object, "object"},
      {Schema::array, "array"},    {Schema::number, "number"},   {Schema::string, "string"},
      {Schema::integer, "integer"}};
  std::string out;
  for (const auto& [bit, name] : k_names)
    if (bits & bit) out += (out.empty() ? "\"" : " or \"") + std::string(name) + "\"";
  return out;
}

// A text equal for values json_equal() calls equal (keys sorted, numbers
// by their double), so that uniqueItems sorts rather than compares every
// pair of a long answer; values whose texts collide are compared exactly.
void equality_key(const boost::json::value& v, std::string& out) {
  switch (v.kind()) {
  case boost::json::kind::array:
    out += '[';
    for (const auto& e : v.get_array()) {
      equality_key(e, out);
      out += ',';
    }
    out += ']';
    break;
  case boost::json::kind::object: {
    std::vector<std::pair<std::string_view, const boost::json::value*>> kv;
    for (const auto& e : v.get_object())
      kv.emplace_back(std::string_view(e.key().data(), e.key().size()), &e.value());
    std::sort(kv.begin(), kv.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    out += '{';
    for (const auto& [k, e] : kv) {
      json::append_quoted(k, out);
      out += ':';
      equality_key(*e, out);
      out += ',';
    }
    out += '}';
    break;
  }
  case boost::json::kind::int64:
  case boost::json::kind::uint64:
  case boost::json::kind::double_: json::append_number(json::to_double(v), out); break;
  default: json::append_canonical(v, out); break;
  }
}

// The first (by i, then j) pair of equal items i < j, or nullopt.
std::optional<std::pair<std::size_t, std::size_t>> first_equal_pair(const boost::json::array& a) {
  std::vector<std::string> keys(a.size());
  std::vector<std::size_t> order(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    equality_key(a[i], keys[i]);
    order[i] = i;
  }
  // Stable: within a run of equal keys the indexes ascend, so the first
  // equal partner of the first item that has one is the run's first pair.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return keys[x] < keys[y]; });
  std::optional<std::pair<std::size_t, std::size_t>> best;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t end = i + 1;
    while (end < order.size() && keys[order[end]] == keys[order[i]])
      ++end;
    for (std::size_t x = i; x < end && !(best && order[x] > best->first); ++x)
      for (std::size_t y = x + 1; y < end; ++y) {
        if (json_equal(a[order[x]], a[order[y]])) {
          const std::pair<std::size_t, std::size_t> p{order[x], order[y]};
          if (!best || p < *best) best = p;
          break;
        }
      }
    i = end;
  }
  return best;
}

struct Walk {
  const Schema& schema;
  std::size_t steps = 0;
  int depth = 0;

  std::string fail(const std::string& ptr, const std::string& what) const {
    return (ptr.empty() ? std::string("(root)") : detail::printable(ptr, 120)) + ": " + what;
  }

  // The first failing keyword of node `id` on `v` at `ptr`, or "".
  std::string check(int id, const boost::json::value& v, const std::string& ptr) {
    if (++steps > k_max_steps)
      throw std::runtime_error("the schema took more than " + std::to_string(k_max_steps) +
                               " steps on this answer");
    if (++depth > k_max_nesting)
      throw std::runtime_error("the schema nests deeper than " + std::to_string(k_max_nesting) +
                               " subschemas (a $ref cycle?)");
    std::string f = keywords(schema.nodes[static_cast<std::size_t>(id)], v, ptr);
    --depth;
    return f;
  }

  std::string keywords(const Schema::Node& n, const boost::json::value& v, const std::string& ptr) {
    if (n.always) return *n.always ? "" : fail(ptr, show_json(v) + " is not allowed here (schema false)");
    if (n.types != 0 && (kind_of(v) & n.types) == 0)
      return fail(ptr, show_json(v) + " is not of type " + type_list(n.types));
    if (n.enum_values && std::none_of(n.enum_values->begin(), n.enum_values->end(),
                                      [&](const auto& e) { return json_equal(v, e); }))
      return fail(ptr, show_json(v) + " is not one of enum " +
                           show_json(boost::json::array(n.enum_values->begin(), n.enum_values->end())));
    if (n.const_value && !json_equal(v, *n.const_value))
      return fail(ptr, show_json(v) + " is not const " + show_json(*n.const_value));
    std::string f;
    if (v.is_object()) f = object(n, v.get_object(), ptr);
    if (f.empty() && v.is_array()) f = array(n, v.get_array(), ptr);
    if (f.empty() && v.is_number()) f = number(n, v, ptr);
    if (f.empty() && v.is_string()) f = string(n, v.get_string(), ptr);
    if (f.empty()) f = applicators(n, v, ptr);
    return f;
  }

  std::string object(const Schema::Node& n, const boost::json::object& o, const std::string& ptr) {
    for (const auto& r : n.required)
      if (!o.contains(r)) return fail(ptr, "required property " + detail::snippet(r) + " is missing");
    for (const auto& kv : o) {
      const std::string key(kv.key());
      const std::string at = ptr + "/" + detail::pointer_token(key);
      auto p = std::find_if(n.properties.begin(), n.properties.end(),
                            [&](const auto& prop) { return prop.first == key; });
      if (p != n.properties.end()) {
        if (auto f = check(p->second, kv.value(), at); !f.empty()) return f;
      } else if (n.additional >= 0) {
        const auto& add = schema.nodes[static_cast<std::size_t>(n.additional)];
        if (add.always && !*add.always)
          return fail(ptr, "property " + detail::snippet(key) + " is not allowed (additionalProperties)");
        if (auto f = check(n.additional, kv.value(), at); !f.empty()) return f;
      }
    }
    return "";
  }

  std::string array(const Schema::Node& n, const boost::json::array& a, const std::string& ptr) {
    const double size = static_cast<double>(a.size());
    if (n.min_items && size < *n.min_items)
      return fail(ptr, show_number(size) + " items, fewer than minItems " + show_number(*n.min_items));
    if (n.max_items && size > *n.max_items)
      return fail(ptr, show_number(size) + " items, more than maxItems " + show_number(*n.max_items));
    for (std::size_t i = 0; i < a.size(); ++i) {
      const int id = i < n.prefix_items.size() ? n.prefix_items[i] : n.items;
      if (id < 0) continue;
      if (auto f = check(id, a[i], ptr + "/" + std::to_string(i)); !f.empty()) return f;
    }
    if (n.unique_items) {
      if (auto pair = first_equal_pair(a))
        return fail(ptr, "items " + std::to_string(pair->first) + " and " + std::to_string(pair->second) +
                             " are equal (uniqueItems)");
    }
    return "";
  }

  std::string number(const Schema::Node& n, const boost::json::value& v, const std::string& ptr) {
    const double x = json::to_double(v);
    const std::string shown = show_json(v);
    if (n.minimum && x < *n.minimum)
      return fail(ptr, shown + " is less than minimum " + show_number(*n.minimum));
    if (n.exclusive_minimum && x <= *n.exclusive_minimum)
      return fail(ptr, shown + " is not greater than exclusiveMinimum " + show_number(*n.exclusive_minimum));
    if (n.maximum && x > *n.maximum)
      return fail(ptr, shown + " is greater than maximum " + show_number(*n.maximum));
    if (n.exclusive_maximum && x >= *n.exclusive_maximum)
      return fail(ptr, shown + " is not less than exclusiveMaximum " + show_number(*n.exclusive_maximum));
    if (n.multiple_of) {
      // A quotient within a relative hair of a whole number counts: 0.3 is
      // a multiple of 0.1 as written, though not in binary.
      const double q = x / *n.multiple_of;
      if (!std::isfinite(q) || std::fabs(q - std::round(q)) > 1e-9 * std::max(1.0, std::fabs(q)))
        return fail(ptr, shown + " is not a multiple of " + show_number(*n.multiple_of) + " (multipleOf)");
    }
    return "";
  }

  std::string string(const Schema::Node& n, boost::json::string_view s, const std::string& ptr) {
    const std::string_view text(s.data(), s.size());
    if (n.min_length || n.max_length) {
      const double len = static_cast<double>(detail::code_points(text));
      if (n.min_length && len < *n.min_length)
        return fail(ptr, detail::snippet(text) + " has " + show_number(len) +
                             " characters, fewer than minLength " + show_number(*n.min_length));
      if (n.max_length && len > *n.max_length)
        return fail(ptr, detail::snippet(text) + " has " + show_number(len) +
                             " characters, more than maxLength " + show_number(*n.max_length));
    }
    if (n.regex && !n.regex->search(text))
      return fail(ptr, detail::snippet(text) + " does not match pattern " + detail::show_pattern(n.pattern));
    return "";
  }

  std::string applicators(const Schema::Node& n, const boost::json::value& v, const std::string& ptr) {
    if (n.ref >= 0)
      if (auto f = check(n.ref, v, ptr); !f.empty()) return f;
    for (int id : n.all_of)
      if (auto f = check(id, v, ptr); !f.empty()) return f;
    if (!n.any_of.empty()) {
      std::string first;
      bool any = false;
      for (int id : n.any_of) {
        std::string f = check(id, v, ptr);
        if (f.empty()) {
          any = true;
          break;
        }
        if (first.empty()) first = f;
      }
      if (!any) return fail(ptr, "matches none of anyOf (the first: " + first + ")");
    }
    if (!n.one_of.empty()) {
      std::vector<std::size_t> matched;
      std::string first;
      for (std::size_t i = 0; i < n.one_of.size(); ++i) {
        std::string f = check(n.one_of[i], v, ptr);
        if (f.empty())
          matched.push_back(i);
        else if (first.empty())
          first = f;
      }
      if (matched.empty()) return fail(ptr, "matches none of oneOf (the first: " + first + ")");
      if (matched.size() > 1)
        return fail(ptr, "matches oneOf's " + std::to_string(matched[0]) + " and " +
                             std::to_string(matched[1]) + "; exactly one must match");
    }
    if (n.negated >= 0 && check(n.negated, v, ptr).empty()) return fail(ptr, "matches the schema in not");
    return "";
  }
};

} // namespace

std::string schema_failure(const Schema& schema, const boost::json::value& doc, const std::string& base) {
  Walk w{schema};
  return w.check(0, doc, base);
}

} // namespace gate::check

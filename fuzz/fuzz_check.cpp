// Check evaluation on model answers: evaluate() is documented never to
// throw for any answer bytes, so nothing is caught here.
#include <boost/json/parse.hpp>
#include <optional>
#include <string>
#include <vector>

#include <gate/check/check.hpp>

#include "fuzz_support.hpp"

namespace {

// One check of every type, with the options that change how answers are
// read (case folding, whitespace, JSON pointers with escapes, ranges).
constexpr const char* k_specs[] = {
    R"({"type": "equals", "value": "Paris", "ignore_case": true, "collapse_whitespace": true})",
    R"({"type": "equals", "trim": false})",
    R"({"type": "contains", "value": "refund"})",
    R"({"type": "icontains", "value": "30 DAYS"})",
    R"({"type": "not_contains", "value": "60 days"})",
    R"({"type": "starts_with", "value": "Yes"})",
    R"({"type": "contains_any", "values": ["not free", "über", "\u00e9t\u00e9"]})",
    R"({"type": "contains_all", "values": ["a", "b"]})",
    R"({"type": "regex", "pattern": "5\\s*(-|to|\u2013)\\s*7 business days"})",
    R"({"type": "regex", "pattern": "^(?m)[[:alpha:]]+\\b.*$", "ignore_case": true})",
    R"({"type": "regex", "name": "digits", "pattern": "(\\d{1,3}(,\\d{3})*|\\d+)(\\.\\d+)?"})",
    R"({"type": "json", "paths": [{"path": "/invoice", "equals": "INV-2291"},
        {"path": "/total", "min": 1482.49, "max": 1482.51}, {"path": "/a~1b/~0c/0", "exists": true},
        {"path": "/kind", "one_of": ["x", 1, null]}, {"path": "/gone", "exists": false}]})",
    R"({"type": "json", "paths": [{"path": "", "exists": true}]})",
    R"({"type": "number", "value": 5155, "tolerance": 0.5})",
    R"({"type": "number", "value": -0.5})",
    R"({"type": "length", "unit": "words", "max": 60})",
    R"({"type": "length", "unit": "chars", "min": 2, "max": 5})",
};

const std::vector<gate::check::Check>& checks() {
  static const std::vector<gate::check::Check> all = [] {
    std::vector<gate::check::Check> out;
    const std::optional<std::string> expected = "Paris";
    for (const char* spec : k_specs)
      out.push_back(gate::check::parse(boost::json::parse(spec), expected, "fuzz"));
    return out;
  }();
  return all;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view answer = gate::fuzz::as_text(data, size);
  for (const gate::check::Check& c : checks()) {
    gate::check::Result r = gate::check::evaluate(c, answer);
    if (r.label != c.label) gate::fuzz::violated("result label differs from the check's");
    if (r.passed && (r.errored || !r.detail.empty()))
      gate::fuzz::violated("a passed check with a failure detail");
  }
  (void)gate::check::first_number(answer);
  return 0;
}

#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gate::prompt {

// A prompt template (docs/config.md "Prompts"). Grammar:
//
//   template = { text | slot | escape }
//   slot     = "{{" { " " | "\t" } name { " " | "\t" } "}}"
//   name     = ( letter | "_" ) { letter | digit | "_" }
//   escape   = "\{{"                      (a literal "{{")
//
// Anything else is text, taken byte for byte ("}}" and other backslashes
// included). There is no logic: no conditions, loops, filters or defaults.
// One final line end ("\n" or "\r\n") is dropped, as editors add one.
struct Slot {
  std::string name;
  std::size_t line = 0; // 1-based line of the "{{" in the template
};

struct Template {
  std::string where;               // the file (or gate.yaml key) named in messages
  std::vector<std::string> pieces; // literal text around the slots: pieces.size() == slots.size() + 1
  std::vector<Slot> slots;
};

// Parses `text`; a "{{" that does not open a well-formed slot is
// Error(bad_input) "where:line:col: …".
Template parse(std::string_view text, const std::string& where);

using Vars = std::map<std::string, std::string>;

// Substitutes every slot with its value, inserted as is (a "{{" in a value
// is not expanded again). A slot the case does not define is
// Error(bad_input) naming the template's file and line and `case_label`.
std::string render(const Template& t, const Vars& vars, const std::string& case_label);

// True when `name` follows the name rule above.
bool valid_name(std::string_view name);

} // namespace gate::prompt

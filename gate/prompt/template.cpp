#include <gate/prompt/template.hpp>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/text.hpp>

namespace gate::prompt {

namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }
bool blank(char c) { return c == ' ' || c == '\t'; }

} // namespace

bool valid_name(std::string_view name) {
  if (name.empty() || !name_start(name.front())) return false;
  for (char c : name)
    if (!name_char(c)) return false;
  return true;
}

Template parse(std::string_view text, const std::string& where) {
  if (text.ends_with("\r\n"))
    text.remove_suffix(2);
  else if (text.ends_with("\n"))
    text.remove_suffix(1);
  Template t;
  t.where = where;
  t.pieces.emplace_back();
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\\' && text.substr(i + 1, 2) == "{{") {
      t.pieces.back() += "{{";
      i += 3;
      continue;
    }
    if (c != '{' || text.substr(i, 2) != "{{") {
      if (c == '\n') {
        ++line;
        line_start = i + 1;
      }
      t.pieces.back() += c;
      ++i;
      continue;
    }
    const std::size_t col = i - line_start + 1;
    std::size_t j = i + 2;
    while (j < text.size() && blank(text[j]))
      ++j;
    const std::size_t name_begin = j;
    while (j < text.size() && name_char(text[j]))
      ++j;
    std::string_view name = text.substr(name_begin, j - name_begin);
    while (j < text.size() && blank(text[j]))
      ++j;
    if (!valid_name(name) || text.substr(j, 2) != "}}")
      throw_bad_input(where + ":" + std::to_string(line) + ":" + std::to_string(col) +
                      ": \"{{\" must open a variable such as {{customer_name}} (letters, digits, _), closed "
                      "by \"}}\"; write \\{{ for a literal {{");
    t.slots.push_back({std::string(name), line});
    t.pieces.emplace_back();
    i = j + 2;
  }
  return t;
}

std::string render(const Template& t, const Vars& vars, const std::string& case_label) {
  std::string out = t.pieces.front();
  for (std::size_t i = 0; i < t.slots.size(); ++i) {
    const Slot& s = t.slots[i];
    auto it = vars.find(s.name);
    if (it == vars.end()) {
      std::string known;
      for (const auto& [k, v] : vars)
        known += (known.empty() ? "" : ", ") + k;
      throw_bad_input(t.where + ":" + std::to_string(s.line) + ": variable " + quote_excerpt(s.name) +
                      " is not defined by " + case_label +
                      (known.empty() ? " (it has no \"vars\")" : " (its vars: " + known + ")"));
    }
    out += it->second;
    out += t.pieces[i + 1];
  }
  return out;
}

} // namespace gate::prompt

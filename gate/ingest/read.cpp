#include <gate/ingest/ingest.hpp>

#include <algorithm>
#include <boost/json.hpp>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>

namespace gate::ingest {

namespace bj = boost::json;

const std::vector<std::string>& field_names() {
  static const std::vector<std::string> names = {
      "task_id",          "run_id",      "passed",      "reward",     "model",
      "base_url",         "key_alias",   "temperature", "top_p",      "seed",
      "max_concurrency",  "token_usage", "tool_calls",  "messages",   "final_state",
      "final_state_hash", "answer",      "error_type",  "latency",    "latency_ms",
      "retries",          "attempts",    "scenario",    "difficulty", "group",
      "user_model",       "cost",        "user_cost"};
  return names;
}

FieldMap parse_map(const std::vector<std::string>& specs) {
  FieldMap m;
  const auto& names = field_names();
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error(Exit::bad_input, "--map \"" + spec + "\": expected field=path, e.g. model=meta.model");
    std::string field = spec.substr(0, eq), path = spec.substr(eq + 1);
    if (std::find(names.begin(), names.end(), field) == names.end()) {
      std::string known;
      for (const auto& n : names)
        known += (known.empty() ? "" : ", ") + n;
      throw Error(Exit::bad_input,
                  "--map \"" + spec + "\": unknown field \"" + field + "\"; expected one of " + known);
    }
    if (path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos)
      throw Error(Exit::bad_input, "--map \"" + spec + "\": expected a dotted path without empty parts");
    if (!m.emplace(field, path).second)
      throw Error(Exit::bad_input, "--map: field \"" + field + "\" is mapped twice");
  }
  return m;
}

std::vector<Located> split_records(std::string_view text, const std::string& file) {
  std::vector<Located> out;
  // Editors on Windows (and Python's utf-8-sig) start files with a BOM.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return out;
  if (text[first] == '[') {
    bj::value v = json::parse_strict(text, file);
    auto& a = v.as_array();
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      out.push_back({std::move(a[i]), file + ": record [" + std::to_string(i) + "]"});
    return out;
  }
  std::size_t line_no = 0, pos = 0;
  while (pos <= text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos)
      out.push_back({json::parse_strict(line, file, line_no), file + ":" + std::to_string(line_no)});
    if (end == text.size()) break;
    pos = end + 1;
  }
  return out;
}

} // namespace gate::ingest

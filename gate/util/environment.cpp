#include <gate/util/environment.hpp>

namespace gate {

std::string Environment::get(std::string_view name) const {
  auto it = values.find(name);
  return it == values.end() ? std::string() : it->second;
}

Environment environment_from(const char* const* env) {
  Environment out;
  for (const char* const* e = env; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    out.entries.emplace_back(entry);
    out.values.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return out;
}

Environment environment_of(const std::vector<std::pair<std::string, std::string>>& vars) {
  std::vector<std::string> entries;
  entries.reserve(vars.size());
  for (const auto& [name, value] : vars)
    entries.push_back(name + "=" + value);
  std::vector<const char*> ptrs;
  for (const std::string& e : entries)
    ptrs.push_back(e.c_str());
  ptrs.push_back(nullptr);
  return environment_from(ptrs.data());
}

} // namespace gate

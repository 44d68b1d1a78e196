#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gate {

// The process environment, read once by cli/ at start-up and passed down.
// Nothing below cli/ calls getenv: a module takes the values it needs from
// here, so a test hands it an environment of its own instead of calling
// setenv while its servers run threads (glibc's setenv races getenv).
struct Environment {
  std::vector<std::string> entries;                       // "NAME=value", in the order given
  std::map<std::string, std::string, std::less<>> values; // the first entry of each name

  // "" when unset; an unset and an empty variable are the same to gate.
  std::string get(std::string_view name) const;
  bool has(std::string_view name) const { return values.find(name) != values.end(); }
};

// From a NULL-terminated "NAME=value" array (environ); entries without '='
// are skipped, as getenv would never find them.
Environment environment_from(const char* const* env);
// From explicit pairs, for tests and for children gate starts itself.
Environment environment_of(const std::vector<std::pair<std::string, std::string>>& vars);

} // namespace gate

// The module order of CMakeLists.txt holds in the sources: a file of
// gate/<module>/ includes only its own module's headers and those of the
// modules its gate_module(... DEPS ...) line reaches. The linker does not
// check this for static libraries, so this test does.
#include <doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// module -> the gate_ modules named in its DEPS.
std::map<std::string, std::set<std::string>> declared_deps(const std::string& cmake) {
  std::map<std::string, std::set<std::string>> deps;
  const std::regex call(R"(gate_module\(\s*(\w+)([^)]*)\))");
  const std::regex dep(R"(\bgate_(\w+)\b)");
  for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), call); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (name == "name") continue; // the function's own definition
    const std::string rest = (*it)[2];
    auto& set = deps[name];
    for (auto d = std::sregex_iterator(rest.begin(), rest.end(), dep); d != std::sregex_iterator(); ++d)
      set.insert((*d)[1]);
  }
  return deps;
}

std::set<std::string> reachable(const std::map<std::string, std::set<std::string>>& deps,
                                const std::string& from) {
  std::set<std::string> seen;
  std::vector<std::string> todo{from};
  while (!todo.empty()) {
    const std::string m = todo.back();
    todo.pop_back();
    if (!seen.insert(m).second) continue;
    if (auto it = deps.find(m); it != deps.end())
      for (const std::string& d : it->second)
        todo.push_back(d);
  }
  return seen;
}

// "file: includes gate/<module>/..." for every include the order forbids.
std::vector<std::string> upward_includes(const fs::path& root) {
  const auto deps = declared_deps(slurp(root / "CMakeLists.txt"));
  const std::regex include(R"(#\s*include\s*[<"]gate/(\w+)/)");
  std::vector<std::string> bad;
  for (const auto& dir : fs::directory_iterator(root / "gate")) {
    if (!dir.is_directory()) continue;
    const std::string module = dir.path().filename().string();
    REQUIRE_MESSAGE(deps.count(module) == 1,
                    "gate/" << module << "/ has no gate_module() line in CMakeLists.txt");
    const std::set<std::string> allowed = reachable(deps, module);
    for (const auto& file : fs::directory_iterator(dir.path())) {
      const std::string text = slurp(file.path());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), include); it != std::sregex_iterator();
           ++it)
        if (allowed.count((*it)[1]) == 0)
          bad.push_back("gate/" + module + "/" + file.path().filename().string() + ": includes gate/" +
                        (*it)[1].str() + "/");
    }
  }
  return bad;
}

} // namespace

TEST_CASE("architecture: no module includes a module its DEPS do not reach") {
  // This file is tests/unit/; the sources are two levels up.
  const std::vector<std::string> bad =
      upward_includes(fs::path(__FILE__).parent_path().parent_path().parent_path());
  for (const std::string& b : bad)
    FAIL_CHECK(b);
  CHECK(bad.empty());
}

TEST_CASE("architecture: the check sees an upward include") {
  const fs::path root = fs::temp_directory_path() / ("gate-arch-test-" + std::to_string(::getpid()));
  fs::create_directories(root / "gate" / "low");
  fs::create_directories(root / "gate" / "high");
  std::ofstream(root / "CMakeLists.txt")
      << "gate_module(low DEPS Boost::json)\ngate_module(high DEPS gate_low\n"
         "    gate_util)\ngate_module(util)\n";
  fs::create_directories(root / "gate" / "util");
  std::ofstream(root / "gate" / "high" / "a.cpp")
      << "#include <gate/low/x.hpp>\n#include <gate/util/y.hpp>\n";
  std::ofstream(root / "gate" / "low" / "b.cpp")
      << "#include <gate/low/x.hpp>\n#include \"gate/high/z.hpp\"\n";
  const std::vector<std::string> bad = upward_includes(root);
  fs::remove_all(root);
  CHECK(bad == std::vector<std::string>{"gate/low/b.cpp: includes gate/high/"});
}

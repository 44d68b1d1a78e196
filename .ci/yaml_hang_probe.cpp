// Loads one file with yaml-cpp exactly as gate's config loader does
// (YAML::LoadAll on the whole text), without gate's pre-scan
// (gate/config/scan.cpp), to see whether the installed yaml-cpp still loops
// forever on an input; .ci/debian13 runs it under `timeout`.
// Prints "parsed N document(s)" or "error: <yaml-cpp's message>"; exit 0
// either way: only a timeout means the library hangs.
#include <fstream>
#include <iostream>
#include <sstream>

#include <yaml-cpp/yaml.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: yaml_hang_probe FILE\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "yaml_hang_probe: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  try {
    const std::size_t documents = YAML::LoadAll(text.str()).size();
    std::cout << "parsed " << documents << " document(s)\n";
  } catch (const YAML::Exception& e) {
    std::cout << "error: " << e.what() << "\n";
  }
  return 0;
}

#include <doctest.h>

#include <filesystem>

#include <gate/config/config.hpp>
#include <gate/util/input.hpp>

#include "test_config_support.hpp"

namespace fs = std::filesystem;
using gate::config::test::k_minimal;
using gate::config::test::load_error;

// Inputs found by fuzz/fuzz_config.cpp. Each one made yaml-cpp 0.7 loop
// forever (growing past 2 GB) inside YAML::LoadAll; load() must refuse them
// before yaml-cpp sees them.

TEST_CASE("a ',' before the root mapping is an error, not a hang") {
  // The fuzzer's input: a comment line, then a line starting " ,".
  CHECK(load_error("# The bundled demo\n ,eer#xtraction to JSON\nsuite:\n  path: suite\n") ==
        "gate.yaml:2:2: ',' before the first key; expected key: value lines");
  CHECK(load_error(",\n") == "gate.yaml:1:1: ',' before the first key; expected key: value lines");
  // After a quoted scalar, an anchor or a tag, and after a top-level list.
  CHECK(load_error("\"a\" ,\n") == "gate.yaml:1:5: ',' before the first key; expected key: value lines");
  CHECK(load_error("&a ,\n") == "gate.yaml:1:4: ',' before the first key; expected key: value lines");
  CHECK(load_error("!t ,\n") == "gate.yaml:1:4: ',' before the first key; expected key: value lines");
  CHECK(load_error("- a\n,\n") == "gate.yaml:2:1: ',' before the first key; expected key: value lines");
  // A second document starts without a mapping again.
  CHECK(load_error(k_minimal + "---\n,\n").find(":6:1: ',' before the first key") != std::string::npos);
}

TEST_CASE("a ',' left of an indented root mapping is an error, not a hang") {
  // The 60 s fuzz run's finding (now fuzz/corpus/config/regression-comma-left-of-root.yaml), reduced: the
  // root mapping starts in column 3, then a line starts with ','.
  CHECK(load_error("  a: 0\n,b: 3\n") ==
        "gate.yaml:2:1: ',' left of the first key's column; expected key: value lines");
  CHECK(load_error("  a: 0\n ,b: 3\n") ==
        "gate.yaml:2:2: ',' left of the first key's column; expected key: value lines");
  CHECK(load_error("  - a\n,\n") == "gate.yaml:2:1: ',' before the first key; expected key: value lines");
  CHECK(load_error("# comment\n  model:\n    name: m\n,runs: 3\n") ==
        "gate.yaml:4:1: ',' left of the first key's column; expected key: value lines");
  // The whole finding.
  const std::string finding = gate::read_file(fs::path(__FILE__).parent_path().parent_path().parent_path() /
                                              "fuzz/corpus/config/regression-comma-left-of-root.yaml");
  CHECK(load_error(finding).find("',' left of the first key's column") != std::string::npos);
  // At or right of the root's column it is yaml-cpp's ordinary error.
  CHECK(load_error("  a: 0\n  ,b: 3\n").find("YAML syntax error") != std::string::npos);
}

TEST_CASE("a colon inside an anchor or tag name does not open the mapping") {
  // The second 60 s fuzz run's finding (fuzz/corpus/config/regression-anchor-with-colon.yaml), reduced.
  CHECK(load_error(" &a: ,b\n") == "gate.yaml:1:6: ',' before the first key; expected key: value lines");
  CHECK(load_error("&a: ,b\n") == "gate.yaml:1:5: ',' before the first key; expected key: value lines");
  CHECK(load_error(" !t: ,b\n") == "gate.yaml:1:6: ',' before the first key; expected key: value lines");
  const std::string finding = gate::read_file(fs::path(__FILE__).parent_path().parent_path().parent_path() /
                                              "fuzz/corpus/config/regression-anchor-with-colon.yaml");
  CHECK(load_error(finding).find("',' before the first key") != std::string::npos);
  // An anchor on a value, and a key after an anchored one, still load or fail as yaml-cpp says.
  gate::config::test::Scratch scratch;
  CHECK(gate::config::load(scratch.write("gate.yaml", k_minimal + "runs: &r 3\n")).runs == 3);
  CHECK(load_error("k: &a: ,b\n").find("YAML syntax error") != std::string::npos);
}

TEST_CASE("a ',' on a line that starts left of an indented root is an error, not a hang") {
  // The third fuzz finding, from the 15 s run in .ci/run
  // (fuzz/corpus/config/regression-line-left-of-root.yaml): the root starts
  // in column 3, a later line starts in column 2 with an anchor, and a ','
  // follows right of column 3.
  CHECK(load_error("  a:\n &b: ,c\n") ==
        "gate.yaml:2:6: ',' left of the first key's column; expected key: value lines");
  const std::string finding = gate::read_file(fs::path(__FILE__).parent_path().parent_path().parent_path() /
                                              "fuzz/corpus/config/regression-line-left-of-root.yaml");
  CHECK(load_error(finding).find("',' left of the first key's column") != std::string::npos);
  // The fourth: the document's first content is in column 1, but the first
  // key's line starts in column 3, and the ',' line in column 2.
  CHECK(load_error("do\n  name:\n &b: ,c\n") ==
        "gate.yaml:3:6: ',' left of the first key's column; expected key: value lines");
  const std::string fourth = gate::read_file(fs::path(__FILE__).parent_path().parent_path().parent_path() /
                                             "fuzz/corpus/config/regression-dedent-after-key.yaml");
  CHECK(load_error(fourth).find("',' left of the first key's column") != std::string::npos);
  // The fifth: the ',' is the first thing on its line, in column 1, left of
  // the first key's line (column 3).
  CHECK(load_error("df\n  name:\n    a: b\n, c\n") ==
        "gate.yaml:4:1: ',' left of the first key's column; expected key: value lines");
  const std::string fifth = gate::read_file(fs::path(__FILE__).parent_path().parent_path().parent_path() /
                                            "fuzz/corpus/config/regression-comma-first-left-of-key.yaml");
  CHECK(load_error(fifth).find("',' left of the first key's column") != std::string::npos);
  // A ',' on a line at the root's column is yaml-cpp's to judge, as before.
  CHECK(load_error("  a: 0\n  b: x,y\n").find("left of the first key") == std::string::npos);
}

TEST_CASE("a ',' after the first key is left to the YAML parser") {
  // Inside flow collections and plain scalars a comma is ordinary text; a
  // stray one inside the mapping is yaml-cpp's syntax error, which it
  // reports (it does not hang there).
  CHECK(load_error(k_minimal + ",\n") == "gate.yaml:5:1: YAML syntax error: end of map not found");
  CHECK(load_error(k_minimal + "cache:\n  ignore: [\"/a\", \"/b\"]\n  dir: a,b\n  mode: x\n")
            .find("gate.yaml:8:") == 0);
}

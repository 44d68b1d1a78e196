#pragma once

// Shared by the test_config_* files: a scratch directory that holds config
// files and is removed afterwards, and a helper that expects load() to fail.

#include <doctest.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gate/config/config.hpp>
#include <gate/util/error.hpp>

namespace gate::config::test {

struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          ("gate-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = dir / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

// Loads `text` as gate.yaml (from a scratch directory removed afterwards).
inline Config load_text(const std::string& text) {
  Scratch s;
  return load(s.write("gate.yaml", text));
}

// Loads `text` as gate.yaml; returns the message of the Error(bad_input) it
// must raise, with the file's path replaced by "gate.yaml" so that the
// expected strings read like what a user sees.
inline std::string load_error(const std::string& text) {
  Scratch s;
  const std::filesystem::path p = s.write("gate.yaml", text);
  try {
    load(p);
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    std::string msg = e.what();
    const std::string where = p.string();
    if (msg.starts_with(where)) msg = "gate.yaml" + msg.substr(where.size());
    return msg;
  }
  FAIL("load() accepted: " << text.substr(0, 200));
  return "";
}

// The smallest valid file, to which a test appends the lines it is about.
inline const std::string k_minimal = "suite:\n  path: suite\nmodel:\n  name: m\n";

} // namespace gate::config::test

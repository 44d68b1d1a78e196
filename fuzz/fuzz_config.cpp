// gate.yaml loader: any bytes give a Config or Error(bad_input).
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gate/config/config.hpp>

#include "fuzz_support.hpp"

namespace fs = std::filesystem;

namespace {

// config::load takes a path, so each input is written to one file per
// process; /dev/shm keeps that off the disk where it exists.
const fs::path& scratch_file() {
  static const fs::path file = [] {
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    fs::path dir = base / ("gate-fuzz-config-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir / "gate.yaml";
  }();
  return file;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& file = scratch_file();
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  gate::fuzz::expecting_only_gate_errors([&] {
    gate::config::Config cfg = gate::config::load(file);
    // What `gate config show` and the report do with a loaded config.
    (void)gate::config::show(cfg);
    (void)gate::config::to_json(cfg);
  });
  return 0;
}

#include <doctest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>

namespace fs = std::filesystem;

namespace {

struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("gate-atomic-" + std::to_string(::getpid()));
  ScratchDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
};

std::vector<fs::path> temp_files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(gate::AtomicFile::k_temp_marker) != std::string::npos)
      out.push_back(e.path());
  return out;
}

// 0 when writing `target` fails with Error(cannot_run) "cannot write
// <target>: <why>"; another number says what went wrong.
int fails_naming(const fs::path& target, const std::string& why) {
  try {
    gate::write_file_atomically(target, "new content");
  } catch (const gate::Error& e) {
    if (e.code() != gate::Exit::cannot_run) return 2;
    return std::string(e.what()) == "cannot write " + target.string() + ": " + why ? 0 : 3;
  }
  return 1;
}

} // namespace

TEST_CASE("atomic file: a temp file removed before the rename is reported, then written again") {
  ScratchDir dir;
  const fs::path target = dir.path / "entry";
  gate::write_file_atomically(target, "old");
  {
    gate::AtomicFile f(target);
    f.write("new");
    auto temps = temp_files_in(dir.path);
    REQUIRE(temps.size() == 1);
    fs::remove(temps[0]); // what `gate cache prune --temp-age 0` does to a write in flight
    CHECK_FALSE(f.commit_unless_vanished());
  }
  CHECK(gate::read_file(target) == "old");
  {
    gate::AtomicFile f(target);
    f.write("new");
    fs::remove(temp_files_in(dir.path).at(0));
    try {
      f.commit();
      FAIL("expected an error");
    } catch (const gate::Error& e) {
      CHECK(e.code() == gate::Exit::cannot_run);
      CHECK(std::string(e.what()).rfind("cannot write " + target.string() + ": its temp file ", 0) == 0);
    }
  }
  // A vanished directory is not a vanished temp file: an error, not false.
  {
    const fs::path sub = dir.path / "sub";
    fs::create_directories(sub);
    gate::AtomicFile f(sub / "x");
    f.write("y");
    fs::remove_all(sub);
    CHECK_THROWS_AS(f.commit_unless_vanished(), gate::Error);
  }
  CHECK(temp_files_in(dir.path).empty());
  gate::write_file_atomically(target, "new");
  CHECK(gate::read_file(target) == "new");
}

// The faults a disk gives (full, broken, read-only, forbidden) are made in
// the end-to-end tests, by a preloaded shim (tests/support/
// preload_fault_write.cpp); gate has no seam for them. Here, the one a test
// can make for real: the directory is not there.
TEST_CASE("atomic file: a temp file that cannot be created is an error naming the target") {
  ScratchDir dir;
  const fs::path target = dir.path / "gone" / "report.json";
  CHECK(fails_naming(target, "No such file or directory") == 0);
  CHECK_FALSE(fs::exists(dir.path / "gone"));
}

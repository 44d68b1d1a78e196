// util/input: the one reader of input files. Only regular files and pipes
// are read, and every limit holds while reading (issue 21, item 5).
#include <doctest.h>

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <tests/support/temp_dir.hpp>

namespace fs = std::filesystem;

namespace {

std::string error_of(const fs::path& p, std::size_t max = gate::k_max_input_bytes) {
  try {
    gate::read_file(p, max);
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::bad_input);
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("read_file reads a regular file whole, and refuses one over its limit before reading it") {
  gate::testing::TempDir t;
  std::ofstream(t.path() / "a.txt") << "abc";
  CHECK(gate::read_file(t.path() / "a.txt") == "abc");
  CHECK(gate::read_file(t.path() / "a.txt", 3) == "abc");
  CHECK(error_of(t.path() / "a.txt", 2) ==
        (t.path() / "a.txt").string() + ": larger than 2 bytes, the limit for this file");
  CHECK(error_of(t.path() / "missing") ==
        "cannot read " + (t.path() / "missing").string() + ": No such file or directory");
}

TEST_CASE("devices, directories and sockets are refused unopened; a FIFO is read") {
  gate::testing::TempDir t;
  CHECK(error_of("/dev/zero") == "/dev/zero: a character device; expected a regular file (or a pipe)");
  CHECK(error_of("/dev/urandom") == "/dev/urandom: a character device; expected a regular file (or a pipe)");
  CHECK(error_of(t.path()) == t.path().string() + ": a directory; expected a regular file (or a pipe)");
  fs::create_symlink("/dev/zero", t.path() / "link");
  CHECK(error_of(t.path() / "link") ==
        (t.path() / "link").string() + ": a character device; expected a regular file (or a pipe)");
  const fs::path fifo = t.path() / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] { std::ofstream(fifo) << "through a pipe"; });
  CHECK(gate::read_file(fifo) == "through a pipe");
  writer.join();
}

TEST_CASE("read_all stops one byte past its limit on an endless input") {
  ::signal(SIGPIPE, SIG_IGN); // the writer's last write fails when the reader is gone
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const std::string chunk(4096, 'x');
  std::thread writer([&] {
    // Far more than the limit; the write fails once the reader is gone.
    for (int i = 0; i < 1024 && ::write(fds[1], chunk.data(), chunk.size()) > 0; ++i) {
    }
    ::close(fds[1]);
  });
  std::string out = "kept:";
  CHECK(gate::read_all(fds[0], 10000, out) == gate::ReadAll::too_big);
  CHECK(out.size() == 5 + 10001);
  ::close(fds[0]);
  writer.join();
  CHECK(gate::byte_limit_text(1 << 20) == "1 MiB");
  CHECK(gate::byte_limit_text(64 << 10) == "64 KiB");
  CHECK(gate::byte_limit_text(1000) == "1000 bytes");
}

// agent/workcopy: the fixture copy, its state hash, and writes and reads
// that never follow a symlink out of the copy (RELIABILITY 39).
#include <doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include <gate/agent/workcopy.hpp>
#include <gate/util/error.hpp>
#include <gate/util/sha256.hpp>
#include <tests/support/temp_dir.hpp>

namespace fs = std::filesystem;
using namespace gate::agent;

namespace {

using Scratch = gate::testing::TempDir;

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string get(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// make_work_copy refuses `fx` for a symlink that leads outside the copy.
void check_refused_outside(const fs::path& fx, const fs::path& root) {
  try {
    make_work_copy(fx, root);
    FAIL("no error");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::cannot_run);
    CHECK(std::string(e.what()).find("points outside the work copy") != std::string::npos);
  }
}

} // namespace

TEST_CASE("the copy has the fixture's files, and symlinks stay symlinks with the same target") {
  Scratch s;
  const fs::path fx = s.path() / "fixture";
  put(fx / "a.txt", "alpha\n");
  put(fx / "sub/b.txt", "beta");
  fs::create_symlink("sub/b.txt", fx / "link.txt");
  fs::create_directories(s.path() / "work");
  const fs::path work = make_work_copy(fx, s.path() / "work");
  CHECK(work.parent_path() == s.path() / "work");
  CHECK(get(work / "a.txt") == "alpha\n");
  CHECK(get(work / "sub/b.txt") == "beta");
  REQUIRE(fs::is_symlink(work / "link.txt"));
  CHECK(fs::read_symlink(work / "link.txt") == "sub/b.txt");

  Tree t = read_tree(work);
  REQUIRE(t.size() == 3);
  CHECK(t["a.txt"].content == "alpha\n");
  CHECK(t["link.txt"].link);
  CHECK(t["link.txt"].content == "sub/b.txt");
  // The manifest of docs/suite-format.md, in byte order of the paths.
  const std::string manifest = std::string("file\0a.txt\0", 11) + gate::sha256_hex("alpha\n") + "\n" +
                               std::string("link\0link.txt\0", 14) + "sub/b.txt\n" +
                               std::string("file\0sub/b.txt\0", 15) + gate::sha256_hex("beta") + "\n";
  CHECK(state_hash(t) == gate::sha256_hex(manifest));
  // Any change to content, name or link target changes the hash.
  Tree t2 = t;
  t2["a.txt"].content = "alpha";
  CHECK(state_hash(t2) != state_hash(t));
  remove_work_copy(work);
  CHECK_FALSE(fs::exists(work));
}

TEST_CASE("rel-39: a fixture symlink that points outside is refused and no work copy is left") {
  Scratch s;
  put(s.path() / "outside.txt", "precious");
  fs::create_directories(s.path() / "work");
  for (const std::string& target : std::vector<std::string>{
           "../outside.txt", (s.path() / "outside.txt").string(), "sub/../../outside.txt", "."}) {
    const fs::path fx = s.path() / "fx";
    fs::remove_all(fx);
    put(fx / "sub/x.txt", "x");
    fs::create_symlink(target, fx / "answer.txt");
    CAPTURE(target);
    check_refused_outside(fx, s.path() / "work");
    CHECK(entries(s.path() / "work") == 0);
  }
  CHECK(get(s.path() / "outside.txt") == "precious");
}

TEST_CASE("rel-39: a link that leaves the copy through another link is refused; links that stay are kept") {
  Scratch s;
  put(s.path() / "victim.txt", "precious");
  fs::create_directories(s.path() / "work");
  struct Links {
    std::vector<std::pair<std::string, std::string>> links; // path -> target
    bool inside;
  };
  // sub/sub2/a -> ".." is sub itself, so "a/../.." climbs out of the copy
  // although the text of the target never does.
  const std::vector<Links> cases{
      {{{"sub/sub2/a", ".."}, {"answer.txt", "sub/sub2/a/../../victim.txt"}}, false},
      {{{"sub/sub2/a", ".."}, {"l1", "sub/sub2/a"}, {"l2", "l1/../../victim.txt"}}, false},
      {{{"sub/sub2/a", ".."}, {"sub/up", "sub2/a/.."}}, false}, // the root itself
      {{{"sub/sub2/a", ".."}, {"loop", "loop2"}, {"loop2", "loop"}}, false},
      {{{"gone", "missing/../../victim.txt"}}, false},
      {{{"sub/sub2/a", ".."}, {"ok.txt", "sub/sub2/a/x.txt"}, {"dangling", "missing/../x"}}, true},
  };
  for (const auto& c : cases) {
    const fs::path fx = s.path() / "fx";
    fs::remove_all(fx);
    put(fx / "sub/x.txt", "x");
    fs::create_directories(fx / "sub/sub2");
    for (const auto& [path, target] : c.links)
      fs::create_symlink(target, fx / path);
    CAPTURE(c.links.back().second);
    if (c.inside) {
      const fs::path work = make_work_copy(fx, s.path() / "work");
      CHECK(get(work / "ok.txt") == "x");
      remove_work_copy(work);
    } else {
      check_refused_outside(fx, s.path() / "work");
    }
    CHECK(entries(s.path() / "work") == 0);
  }
  CHECK(get(s.path() / "victim.txt") == "precious");
}

TEST_CASE("a sparse fixture file is copied with its holes; a fixture over the cap is refused") {
  Scratch s;
  const fs::path fx = s.path() / "fx";
  put(fx / "small.txt", "s");
  {
    // 64 MiB apparent, two bytes of data at either end.
    std::ofstream out(fx / "sparse.bin", std::ios::binary);
    out << "a";
    out.seekp((64 << 20) - 1);
    out << "z";
  }
  struct stat st {};
  REQUIRE(::stat((fx / "sparse.bin").c_str(), &st) == 0);
  const bool fs_makes_holes = st.st_blocks * 512 < (1 << 20);
  fs::create_directories(s.path() / "work");
  const fs::path work = make_work_copy(fx, s.path() / "work");
  REQUIRE(::stat((work / "sparse.bin").c_str(), &st) == 0);
  CHECK(st.st_size == (64 << 20));
  if (fs_makes_holes)
    CHECK(st.st_blocks * 512 < (1 << 20));
  else
    MESSAGE("skipped: the temp file system keeps no holes, so the copy's cannot be checked");
  const Tree t = read_tree(work);
  CHECK(t.at("sparse.bin").content.front() == 'a');
  CHECK(t.at("sparse.bin").content.back() == 'z');
  CHECK(t.at("sparse.bin").content[1 << 20] == '\0');
  // Over the cap by apparent size: refused before copying, nothing left.
  CHECK_THROWS_WITH_AS(read_tree(work, 32 << 20), doctest::Contains("holds more than 32 MiB of files"),
                       gate::Error);
  remove_work_copy(work);
  ::truncate((fx / "sparse.bin").c_str(), static_cast<off_t>(k_max_tree_bytes) + 1);
  CHECK_THROWS_WITH_AS(make_work_copy(fx, s.path() / "work"),
                       doctest::Contains("holds more than 256 MiB of files (at sparse.bin)"), gate::Error);
  CHECK(entries(s.path() / "work") == 0);
}

TEST_CASE("rel-39: gate's own writes never go through a symlink") {
  Scratch s;
  put(s.path() / "outside.txt", "precious");
  fs::create_directories(s.path() / "outdir");
  const fs::path work = s.path() / "w";
  fs::create_directories(work);
  fs::create_symlink(s.path() / "outside.txt", work / "task.txt");
  fs::create_symlink(s.path() / "outdir", work / "d");
  CHECK_THROWS_AS(write_inside(work, "task.txt", "pwned"), gate::Error);
  CHECK_THROWS_AS(write_inside(work, "d/task.txt", "pwned"), gate::Error);
  CHECK_THROWS_AS(write_inside(work, "../outside.txt", "pwned"), gate::Error);
  CHECK(get(s.path() / "outside.txt") == "precious");
  CHECK(entries(s.path() / "outdir") == 0);
  write_inside(work, "in/new.txt", "ok");
  CHECK(get(work / "in/new.txt") == "ok");
}

TEST_CASE("reads for checks do not follow symlinks; removal does not follow them either") {
  Scratch s;
  put(s.path() / "outdir/secret.txt", "secret");
  const fs::path work = s.path() / "w";
  put(work / "a.txt", "A");
  fs::create_symlink(s.path() / "outdir/secret.txt", work / "s.txt");
  fs::create_symlink(s.path() / "outdir", work / "d");
  std::string why;
  CHECK(read_inside(work, "a.txt", why) == std::optional<std::string>("A"));
  CHECK_FALSE(read_inside(work, "s.txt", why));
  CHECK(why.find("symlink") != std::string::npos);
  CHECK_FALSE(read_inside(work, "d/secret.txt", why));
  CHECK_FALSE(read_inside(work, "missing.txt", why));
  CHECK(why == "does not exist");
  CHECK_FALSE(read_inside(work, "../outdir/secret.txt", why));
  // read_tree lists the links as links, not what they point at.
  Tree t = read_tree(work);
  CHECK(t.size() == 3);
  CHECK(t["d"].link);
  remove_work_copy(work);
  CHECK_FALSE(fs::exists(work));
  CHECK(get(s.path() / "outdir/secret.txt") == "secret");
}

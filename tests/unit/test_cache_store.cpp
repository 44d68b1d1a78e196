#include <doctest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/util/error.hpp>
#include <tests/support/temp_dir.hpp>

namespace fs = std::filesystem;
using gate::cache::Entry;
using gate::cache::make_fingerprint;
using gate::cache::make_key;
using gate::cache::Store;

namespace {

using Scratch = gate::testing::TempDir;

Entry entry_for(int i, const std::string& body = "body") {
  Entry e;
  e.provider = "openai";
  e.path = "/chat/completions";
  e.request = R"({"model":"m","n":)" + std::to_string(i) + "}";
  e.key = make_key(e.provider, e.path, e.request, 0);
  e.body = body + " " + std::to_string(i);
  e.headers = {{"content-type", "application/json"}};
  e.usage = std::make_pair(std::int64_t{5}, std::int64_t{7});
  e.recorded_at = "2026-01-02T03:04:05Z";
  e.route = R"({"key_alias":"default"})";
  return e;
}

void write_raw(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

std::string read_raw(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t count_files(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& d : fs::recursive_directory_iterator(dir))
    n += d.is_regular_file() ? 1 : 0;
  return n;
}

template <class F> gate::Exit error_code_of(F f) {
  try {
    f();
  } catch (const gate::Error& e) {
    return e.code();
  }
  return gate::Exit::pass;
}

template <class F> std::string error_text_of(F f) {
  try {
    f();
  } catch (const gate::Error& e) {
    return e.what();
  }
  return {};
}

} // namespace

TEST_CASE("make_key: pinned value, length-prefixed fields") {
  // printf 'provider\0006:openaipath\00017:/chat/completionsrequest\00013:{"model":"m"}replica\0001:2'
  //   | sha256sum
  CHECK(make_key("openai", "/chat/completions", R"({"model":"m"})", 2) ==
        "bf92956fdccbc8e47b8ae3ea3a0aa6cd5a84dcb3c3481ddb250c919d46e09fe6");
  // The same without the replica field.
  CHECK(make_fingerprint("openai", "/chat/completions", R"({"model":"m"})") ==
        "d1da575337834cd56f45d8ecee68c8b0dfc010371fd530c246902fc4beeb37aa");
}

TEST_CASE("make_call_key: pinned value; the run and the occurrence are fields of their own") {
  // printf
  // 'provider\0006:openaipath\00021:/t/a/chat/completionsrequest\00013:{"model":"m"}run\0001:0occurrence\0001:2'
  //   | sha256sum
  const std::string key =
      gate::cache::make_call_key("openai", "/t/a/chat/completions", R"({"model":"m"})", "0", 2);
  CHECK(key == "09cf0071a878f9a99a5b9735e34accfa7ad629c236c8896e998144ed099469f0");
  CHECK(gate::cache::make_call_key("openai", "/t/a/chat/completions", R"({"model":"m"})", "1", 2) != key);
  CHECK(gate::cache::make_call_key("openai", "/t/a/chat/completions", R"({"model":"m"})", "0", 1) != key);
  // A run "0" and occurrence 12 is not run "01" and occurrence 2.
  CHECK(gate::cache::make_call_key("openai", "/p", "{}", "0", 12) !=
        gate::cache::make_call_key("openai", "/p", "{}", "01", 2));
  // Never a model task's key, whatever the numbers.
  CHECK(gate::cache::make_call_key("openai", "/chat/completions", R"({"model":"m"})", "", 2) !=
        make_key("openai", "/chat/completions", R"({"model":"m"})", 2));
}

TEST_CASE("make_key changes with each field and not otherwise") {
  const std::string base = make_key("openai", "/chat/completions", "{}", 0);
  CHECK(make_key("openai", "/chat/completions", "{}", 0) == base);
  CHECK(make_key("anthropic", "/chat/completions", "{}", 0) != base);
  CHECK(make_key("openai", "/messages", "{}", 0) != base);
  CHECK(make_key("openai", "/chat/completions", R"({"a":1})", 0) != base);
  CHECK(make_key("openai", "/chat/completions", "{}", 1) != base);
  // Concatenation cannot collide: ("ab", "c") vs ("a", "bc").
  CHECK(make_key("ab", "c", "{}", 0) != make_key("a", "bc", "{}", 0));
  CHECK(make_key("openai", "/x", "1", 1) != make_key("openai", "/x", "11", 0));
  // The fingerprint is shared by all replicas and is not any of their keys.
  const std::string fp = make_fingerprint("openai", "/chat/completions", "{}");
  CHECK(fp == make_fingerprint("openai", "/chat/completions", "{}"));
  CHECK(fp != base);
  CHECK(fp != make_fingerprint("openai", "/chat/completions", R"({"a":1})"));
  CHECK(base.size() == 64);
}

TEST_CASE("store: put, get, miss, remove; layout <root>/<key[0:2]>/<key>.entry") {
  Scratch s;
  Store store(s.path() / "cache");
  const Entry e = entry_for(1);
  // A missing root is a plain miss and is not created by reading.
  auto miss = store.get(e.key);
  CHECK_FALSE(miss.entry);
  CHECK(miss.corrupt_reason.empty());
  CHECK_FALSE(fs::exists(s.path() / "cache"));
  CHECK(store.stats().entries == 0);

  store.put(e);
  const fs::path p = s.path() / "cache" / e.key.substr(0, 2) / (e.key + ".entry");
  CHECK(store.path_for(e.key) == p);
  CHECK(fs::is_regular_file(p));
  CHECK(read_raw(p) == gate::cache::encode(e));
  auto hit = store.get(e.key);
  REQUIRE(hit.entry);
  CHECK(hit.corrupt_reason.empty());
  CHECK(hit.entry->body == e.body);
  CHECK(hit.entry->usage == e.usage);

  // Overwrite: the newer content wins.
  store.put(entry_for(1, "newer"));
  CHECK(store.get(e.key).entry->body == "newer 1");

  auto st = store.stats();
  CHECK(st.entries == 1);
  CHECK(st.bytes == fs::file_size(p));
  CHECK(st.corrupt == 0);
  CHECK(st.temp_files == 0);
  CHECK(store.verify().empty());

  CHECK(store.remove(e.key));
  CHECK_FALSE(store.remove(e.key));
  CHECK_FALSE(store.get(e.key).entry);
}

TEST_CASE("rel-14: keys other than 64 lowercase hex are refused before touching the disk") {
  Scratch s;
  Store store(s.path());
  const std::string good = entry_for(1).key;
  std::string upper = good;
  upper[0] = 'A';
  for (const std::string& key : {std::string("../../etc/passwd"), std::string(), upper, good.substr(1),
                                 good + "0", std::string("../") + good.substr(3), good.substr(0, 63) + "/"}) {
    CHECK(error_code_of([&] { store.get(key); }) == gate::Exit::bad_input);
    CHECK(error_code_of([&] { store.remove(key); }) == gate::Exit::bad_input);
    CHECK(error_code_of([&] { store.path_for(key); }) == gate::Exit::bad_input);
    Entry e = entry_for(1);
    e.key = key;
    CHECK(error_code_of([&] { store.put(e); }) == gate::Exit::bad_input);
  }
  CHECK(fs::is_empty(s.path()));
}

TEST_CASE("rel-10/11: a bad entry is a miss naming the path and the reason") {
  Scratch s;
  Store store(s.path());
  const Entry e = entry_for(2);
  store.put(e);
  const fs::path p = store.path_for(e.key);
  const std::string good = read_raw(p);

  auto reason_for = [&](const std::string& bytes) {
    write_raw(p, bytes);
    auto r = store.get(e.key);
    CHECK_FALSE(r.entry);
    return r.corrupt_reason;
  };
  std::string flipped = good;
  flipped[30] = static_cast<char>(flipped[30] ^ 0x04);
  CHECK(reason_for(flipped) == p.string() + ": checksum mismatch");
  CHECK(reason_for("") == p.string() + ": empty file");
  CHECK(reason_for(good.substr(0, good.size() / 2)) == p.string() + ": truncated (no checksum line)");
  CHECK(reason_for("PK\x03\x04zip") == p.string() + ": wrong magic");
  std::string future = good;
  future[11] = '3';
  CHECK(reason_for(future) == p.string() + ": format version 3 is newer than this gate (2)");
  // A valid entry under another entry's name.
  const Entry other = entry_for(3);
  CHECK(reason_for(gate::cache::encode(other)) == p.string() + ": key does not match file name");

  auto st = store.stats();
  CHECK(st.entries == 0);
  CHECK(st.corrupt == 1);
  CHECK(store.verify() == std::vector<std::string>{p.string() + ": key does not match file name"});
  CHECK(store.prune(nullptr, std::chrono::hours(1)) == 1);
  CHECK_FALSE(fs::exists(p));
  CHECK(store.verify().empty());
}

TEST_CASE("rel-14: a symlinked shard directory is refused, never read, written or pruned through") {
  Scratch s;
  const fs::path outside = s.path() / "outside";
  fs::create_directories(outside);
  const Entry e = entry_for(4);
  // A valid entry outside the root: serving it would prove the link was followed.
  write_raw(outside / (e.key + ".entry"), gate::cache::encode(e));
  const fs::path root = s.path() / "cache";
  fs::create_directories(root);
  fs::create_directory_symlink(outside, root / e.key.substr(0, 2));
  Store store(root);

  auto r = store.get(e.key);
  CHECK_FALSE(r.entry);
  CHECK(r.corrupt_reason == (root / e.key.substr(0, 2)).string() + ": symlink refused");

  const std::string what = error_text_of([&] { store.put(e); });
  CHECK(what.find((root / e.key.substr(0, 2)).string()) != std::string::npos);
  CHECK(error_code_of([&] { store.put(e); }) == gate::Exit::cannot_run);
  CHECK_FALSE(store.remove(e.key));
  CHECK(count_files(outside) == 1);

  CHECK(store.verify() ==
        std::vector<std::string>{(root / e.key.substr(0, 2)).string() + ": symlink refused"});
  CHECK(store.stats().corrupt == 1);
  CHECK(store.prune(nullptr, std::chrono::hours(1)) == 1);
  CHECK_FALSE(fs::is_symlink(root / e.key.substr(0, 2)));
  CHECK(read_raw(outside / (e.key + ".entry")) == gate::cache::encode(e));
  // With the link gone the shard is made for real.
  store.put(e);
  CHECK(store.get(e.key).entry);
}

TEST_CASE("rel-14: a symlinked entry is refused; put replaces the link, not its target") {
  Scratch s;
  const Entry e = entry_for(5);
  const fs::path target = s.path() / "elsewhere.entry";
  write_raw(target, gate::cache::encode(e));
  Store store(s.path() / "cache");
  store.put(entry_for(6)); // creates the root
  fs::create_directories(s.path() / "cache" / e.key.substr(0, 2));
  const fs::path p = store.path_for(e.key);
  fs::create_symlink(target, p);

  auto r = store.get(e.key);
  CHECK_FALSE(r.entry);
  CHECK(r.corrupt_reason == p.string() + ": symlink refused");
  CHECK(store.verify() == std::vector<std::string>{p.string() + ": symlink refused"});

  store.put(entry_for(5, "fresh"));
  CHECK_FALSE(fs::is_symlink(p));
  CHECK(store.get(e.key).entry->body == "fresh 5");
  CHECK(read_raw(target) == gate::cache::encode(e));
}

TEST_CASE("a FIFO or directory in place of an entry is refused without blocking") {
  Scratch s;
  Store store(s.path());
  const Entry a = entry_for(7), b = entry_for(8);
  store.put(a);
  store.put(b);
  REQUIRE(fs::remove(store.path_for(a.key)));
  REQUIRE(::mkfifo(store.path_for(a.key).c_str(), 0644) == 0);
  CHECK(store.get(a.key).corrupt_reason == store.path_for(a.key).string() + ": not a regular file");
  REQUIRE(fs::remove(store.path_for(b.key)));
  fs::create_directory(store.path_for(b.key));
  CHECK(store.get(b.key).corrupt_reason == store.path_for(b.key).string() + ": not a regular file");
  CHECK(store.verify().size() == 2);
  // The FIFO goes, an unknown directory is only reported.
  CHECK(store.prune(nullptr, std::chrono::hours(1)) == 1);
  CHECK(store.verify() ==
        std::vector<std::string>{store.path_for(b.key).string() + ": not a cache entry (a directory)"});
}

TEST_CASE("rel-13/14: the root must be a real directory") {
  Scratch s;
  fs::create_directory(s.path() / "real");
  fs::create_directory_symlink(s.path() / "real", s.path() / "link");
  auto what = error_text_of([&] { Store store(s.path() / "link"); });
  CHECK(what.find((s.path() / "link").string()) != std::string::npos);
  CHECK(what.find("symlink") != std::string::npos);
  CHECK(error_code_of([&] { Store store(s.path() / "link"); }) == gate::Exit::cannot_run);
  // A trailing slash would make lstat follow the link: still refused.
  CHECK(error_code_of([&] { Store store((s.path() / "link").string() + "/"); }) == gate::Exit::cannot_run);
  write_raw(s.path() / "file", "x");
  CHECK(error_code_of([&] { Store store(s.path() / "file"); }) == gate::Exit::cannot_run);
  CHECK(error_code_of([&] { Store store(""); }) == gate::Exit::bad_input);
}

TEST_CASE("rel-13: an unwritable cache directory is Error(cannot_run) naming the path") {
  // Tests run as root, so a chmod'ed directory would still be writable.
  // Unwritable places are simulated instead: /proc refuses new directories,
  // a path below a regular file cannot exist, and a shard name taken by a
  // regular file cannot hold entries.
  Scratch s;
  const Entry e = entry_for(9);
  {
    Store store("/proc/gate-cache-test-unwritable");
    const std::string what = error_text_of([&] { store.put(e); });
    CHECK(what.find("/proc/gate-cache-test-unwritable") != std::string::npos);
    CHECK(error_code_of([&] { store.put(e); }) == gate::Exit::cannot_run);
  }
  {
    write_raw(s.path() / "file", "x");
    Store store(s.path() / "file" / "cache");
    CHECK(error_text_of([&] { store.put(e); }).find((s.path() / "file" / "cache").string()) !=
          std::string::npos);
    CHECK(error_code_of([&] { store.put(e); }) == gate::Exit::cannot_run);
  }
  {
    fs::create_directory(s.path() / "root");
    write_raw(s.path() / "root" / e.key.substr(0, 2), "not a directory");
    Store store(s.path() / "root");
    const std::string what = error_text_of([&] { store.put(e); });
    CHECK(what.find((s.path() / "root" / e.key.substr(0, 2)).string()) != std::string::npos);
    CHECK(error_code_of([&] { store.put(e); }) == gate::Exit::cannot_run);
    CHECK(read_raw(s.path() / "root" / e.key.substr(0, 2)) == "not a directory");
  }
}

TEST_CASE("a shard directory deleted behind the store's back is made again") {
  Scratch s;
  Store store(s.path() / "cache");
  store.put(entry_for(10));
  fs::remove_all(s.path() / "cache");
  store.put(entry_for(10, "again"));
  CHECK(store.get(entry_for(10).key).entry->body == "again 10");
}

TEST_CASE("rel-09: stray temp files are ignored by get, counted, and pruned by age") {
  Scratch s;
  Store store(s.path());
  const Entry e = entry_for(11);
  store.put(entry_for(12));
  fs::create_directories(s.path() / e.key.substr(0, 2));
  // What a writer killed mid-write leaves: a partial entry under a temp name.
  const fs::path old_tmp = s.path() / e.key.substr(0, 2) / (e.key + ".entry.gate-tmp-abc123");
  const fs::path new_tmp = s.path() / e.key.substr(0, 2) / (e.key + ".entry.gate-tmp-def456");
  write_raw(old_tmp, gate::cache::encode(e).substr(0, 40));
  write_raw(new_tmp, "");
  const timespec two_hours_ago[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
  REQUIRE(::utimensat(AT_FDCWD, old_tmp.c_str(), two_hours_ago, 0) == 0);

  auto r = store.get(e.key);
  CHECK_FALSE(r.entry);
  CHECK(r.corrupt_reason.empty());
  auto st = store.stats();
  CHECK(st.temp_files == 2);
  CHECK(st.entries == 1);
  CHECK(st.corrupt == 0);
  CHECK(store.verify().empty());

  CHECK(store.prune(nullptr, std::chrono::hours(1)) == 1);
  CHECK_FALSE(fs::exists(old_tmp));
  CHECK(fs::exists(new_tmp));
  CHECK(store.prune(nullptr, std::chrono::seconds(0)) == 1);
  CHECK(store.stats().temp_files == 0);
  CHECK(store.stats().entries == 1);
}

TEST_CASE("rel-14: odd names are reported, shown escaped, never followed; prune honours keep") {
  Scratch s;
  Store store(s.path());
  const Entry a = entry_for(13), b = entry_for(14), c = entry_for(15);
  store.put(a);
  store.put(b);
  store.put(c);
  const fs::path shard = s.path() / a.key.substr(0, 2);
  write_raw(shard / "..%2f..%2fescape.entry", "x");
  write_raw(shard / "evil\n::error::x", "x");
  write_raw(s.path() / "..x", "x");
  write_raw(s.path() / ".gitattributes", "* binary");
  // A valid entry filed under the wrong shard.
  std::string wrong = a.key.substr(0, 2) == "00" ? "01" : "00";
  fs::create_directories(s.path() / wrong);
  fs::copy_file(store.path_for(a.key), s.path() / wrong / (a.key + ".entry"));

  const std::vector<std::string> want = {
      (s.path() / ".gitattributes").string() + ": not a cache shard directory",
      (s.path() / "..x").string() + ": not a cache shard directory",
      (s.path() / wrong / (a.key + ".entry")).string() + ": entry in the wrong shard directory",
  };
  auto got = store.verify();
  REQUIRE(got.size() == 5);
  for (const auto& w : want)
    CHECK(std::find(got.begin(), got.end(), w) != got.end());
  CHECK(std::find(got.begin(), got.end(),
                  (shard / "..%2f..%2fescape.entry").string() + ": not a cache entry") != got.end());
  CHECK(std::find(got.begin(), got.end(), (shard / "evil\\x0a::error::x").string() + ": not a cache entry") !=
        got.end());
  CHECK(store.stats().corrupt == 5);

  // Entries not kept go; files in shard directories that are not entries
  // go; items directly under the root are only reported.
  const std::vector<std::string> keep = {a.key};
  CHECK(store.prune(&keep, std::chrono::hours(1)) == 5);
  CHECK(store.get(a.key).entry);
  CHECK_FALSE(store.get(b.key).entry);
  CHECK_FALSE(store.get(c.key).entry);
  CHECK(fs::exists(s.path() / "..x"));
  CHECK(fs::exists(s.path() / ".gitattributes"));
  CHECK(store.verify().size() == 2);
}

TEST_CASE("16 threads writing and reading overlapping keys never see a partial entry") {
  Scratch s;
  Store store(s.path());
  constexpr int keys = 24, threads = 16, rounds = 2;
  std::atomic<int> bad{0}, hits{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < keys; ++i) {
          const int k = (i + t) % keys;
          store.put(entry_for(k, "thread " + std::to_string(t)));
          auto got = store.get(entry_for((k + 1) % keys).key);
          if (!got.corrupt_reason.empty()) ++bad;
          if (got.entry) ++hits;
        }
      }
    });
  }
  for (auto& th : pool)
    th.join();
  CHECK(bad == 0);
  CHECK(hits > 0);
  CHECK(store.verify().empty());
  auto st = store.stats();
  CHECK(st.entries == keys);
  CHECK(st.corrupt == 0);
  CHECK(st.temp_files == 0);
  for (int i = 0; i < keys; ++i)
    CHECK(store.get(entry_for(i).key).entry);
}

TEST_CASE("rel-12: 8 processes share one cache directory and write overlapping keys") {
  Scratch s;
  constexpr int procs = 8, keys = 32;
  std::vector<pid_t> children;
  for (int p = 0; p < procs; ++p) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int rc = 0;
      try {
        Store store(s.path() / "cache"); // each process makes the root and shards itself
        for (int i = 0; i < keys; ++i) {
          store.put(entry_for((i + p * 4) % keys, "process " + std::to_string(p)));
          if (!store.get(entry_for((i + 1) % keys).key).corrupt_reason.empty()) rc = 2;
        }
      } catch (...) {
        rc = 1;
      }
      ::_exit(rc);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  Store store(s.path() / "cache");
  CHECK(store.verify().empty());
  auto st = store.stats();
  CHECK(st.entries == keys);
  CHECK(st.temp_files == 0);
  CHECK(st.corrupt == 0);
}

TEST_CASE("rel-09: SIGKILL while 16 workers write leaves no partial entry; a rerun succeeds") {
  Scratch s;
  constexpr int keys = 32;
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    Store store(s.path());
    std::vector<std::thread> pool;
    for (int t = 0; t < 16; ++t)
      pool.emplace_back([&store, t] {
        for (int n = 0;; ++n)
          store.put(entry_for((n + t) % keys, std::string(4096, 'x')));
      });
    for (auto& th : pool)
      th.join();
    ::_exit(0);
  }
  // Wait until writes are under way, then kill mid-stream.
  for (int i = 0; i < 200 && !fs::exists(s.path() / entry_for(0).key.substr(0, 2)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status));

  Store store(s.path());
  CHECK(store.verify().empty());
  for (int i = 0; i < keys; ++i)
    CHECK(store.get(entry_for(i).key).corrupt_reason.empty());
  const auto before = store.stats();
  CHECK(before.corrupt == 0);
  CHECK(before.entries > 0);
  CHECK(store.prune(nullptr, std::chrono::seconds(0)) == before.temp_files);
  for (int i = 0; i < keys; ++i)
    store.put(entry_for(i));
  auto after = store.stats();
  CHECK(after.entries == keys);
  CHECK(after.temp_files == 0);
  CHECK(store.verify().empty());
}

TEST_CASE("by_fingerprint: the lowest replica's entry of each wanted request; corrupt entries skipped") {
  Scratch s;
  Store store(s.path() / "cache");
  CHECK(store.by_fingerprint({"x"}).empty()); // no cache yet
  Entry a0 = entry_for(1), a2 = entry_for(1, "second"), b1 = entry_for(2);
  a2.replica = 2;
  a2.key = make_key(a2.provider, a2.path, a2.request, 2);
  b1.replica = 1;
  b1.key = make_key(b1.provider, b1.path, b1.request, 1);
  store.put(a2);
  store.put(a0);
  store.put(b1);
  store.put(entry_for(3));
  const std::string fa = make_fingerprint(a0.provider, a0.path, a0.request);
  const std::string fb = make_fingerprint(b1.provider, b1.path, b1.request);
  auto found = store.by_fingerprint({fa, fb, std::string(64, '0')});
  REQUIRE(found.size() == 2);
  CHECK(found.at(fa).replica == 0);
  CHECK(found.at(fa).request == a0.request);
  CHECK(found.at(fb).replica == 1);
  // The replica-0 entry damaged: the next one stands in.
  write_raw(store.path_for(a0.key), "garbage");
  found = store.by_fingerprint({fa});
  REQUIRE(found.size() == 1);
  CHECK(found.at(fa).replica == 2);
  CHECK(store.by_fingerprint({}).empty());
}

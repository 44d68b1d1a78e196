#include <doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

namespace fs = std::filesystem;

TEST_CASE("sha256 of known inputs") {
  // FIPS 180-2 test vectors.
  CHECK(gate::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(gate::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(gate::Sha256().update("a").update("bc").hex() == gate::sha256_hex("abc"));
}

TEST_CASE("atomic file: content appears whole, temp removed when not committed") {
  fs::path dir = fs::temp_directory_path() / ("gate-util-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path target = dir / "out.txt";
  gate::write_file_atomically(target, "old");
  {
    gate::AtomicFile f(target);
    f.write("new content");
    // Not committed: the target keeps its old content and no temp remains.
  }
  CHECK(gate::read_file(target) == "old");
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    ++files;
  CHECK(files == 1);
  gate::write_file_atomically(target, "new");
  CHECK(gate::read_file(target) == "new");
  // A directory that does not exist cannot be written: exit 3 naming the path.
  try {
    gate::write_file_atomically(dir / "missing" / "x", "y");
    FAIL("expected an error");
  } catch (const gate::Error& e) {
    CHECK(e.code() == gate::Exit::cannot_run);
    CHECK(std::string(e.what()).find("missing/x") != std::string::npos);
  }
  CHECK_THROWS_AS(gate::read_file(dir / "nope"), gate::Error);
  fs::remove_all(dir);
}

TEST_CASE("redaction replaces the secret, its base64 forms and its tail") {
  const std::string key = "sk-canary-7f3a9b1c2d4e5f60";
  gate::register_secret(key);
  CHECK(gate::redact("key=" + key + "!") == "key=[REDACTED]!");
  CHECK(gate::redact("Basic " + gate::base64_encode(key)).find(gate::base64_encode(key)) ==
        std::string::npos);
  CHECK(gate::redact("Bearer " + gate::base64_encode("Bearer " + key)).find("[REDACTED]") !=
        std::string::npos);
  CHECK(gate::redact("...2d4e5f60") == "...[REDACTED]");
  CHECK_FALSE(gate::contains_secret(gate::redact("x " + key + " y " + key)));
  CHECK(gate::redact("nothing here") == "nothing here");
  // base64 per RFC 4648: "foobar" → "Zm9vYmFy", "fo" → "Zm8=".
  CHECK(gate::base64_encode("foobar") == "Zm9vYmFy");
  CHECK(gate::base64_encode("fo") == "Zm8=");
  CHECK(gate::base64_encode("f") == "Zg==");
}

TEST_CASE("utf8 validation and safe prefixes") {
  CHECK(gate::valid_utf8("plain ascii"));
  CHECK(gate::valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK_FALSE(gate::valid_utf8("\xc3"));             // truncated
  CHECK_FALSE(gate::valid_utf8("\xc0\xaf"));         // overlong '/'
  CHECK_FALSE(gate::valid_utf8("\xed\xa0\x80"));     // surrogate
  CHECK_FALSE(gate::valid_utf8("\xf4\x90\x80\x80")); // > U+10FFFF
  // "é" is two bytes: a 4-byte cut of "abcé" keeps "abc".
  CHECK(gate::utf8_prefix("abc\xc3\xa9", 4) == "abc");
  CHECK(gate::utf8_prefix("abc\xc3\xa9", 5) == "abc\xc3\xa9");
  // One U+FFFD per invalid byte; valid sequences, NUL included, stay as they are.
  CHECK(gate::to_valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(gate::to_valid_utf8("a\xe2\x98"
                            "b") == "a\xef\xbf\xbd\xef\xbf\xbd"
                                    "b");
  CHECK(gate::to_valid_utf8("\xc0\xaf") == "\xef\xbf\xbd\xef\xbf\xbd");
  CHECK(gate::to_valid_utf8(std::string("\0\xff", 2)) == std::string("\0\xef\xbf\xbd", 4));
}

TEST_CASE("glob match") {
  CHECK(gate::glob_match("math-*", "math-sum"));
  CHECK(gate::glob_match("*-sum", "math-sum"));
  CHECK(gate::glob_match("m?th-*", "math-sum"));
  CHECK_FALSE(gate::glob_match("math-*", "cls-math-"));
  CHECK(gate::glob_match("*", ""));
  CHECK_FALSE(gate::glob_match("a*b", "acbd"));
}

TEST_CASE("located error text") {
  CHECK(gate::located("f.yaml", 3, 7, "bad") == "f.yaml:3:7: bad");
  CHECK(gate::located("f.yaml", 3, 0, "bad") == "f.yaml:3: bad");
  CHECK(gate::located("f.yaml", 0, 0, "bad") == "f.yaml: bad");
}

TEST_CASE("shell quoting: one word for a POSIX shell") {
  CHECK(gate::shell_quote("a b") == "'a b'");
  CHECK(gate::shell_quote("it's") == "'it'\\''s'");
  CHECK(gate::shell_quote("") == "''");
  CHECK(gate::shell_word("sub/dir-1.x") == "sub/dir-1.x");
  CHECK(gate::shell_word("my repo") == "'my repo'");
  CHECK(gate::shell_word("$HOME") == "'$HOME'");
  CHECK(gate::shell_word("") == "''");
  CHECK(gate::shell_word(std::string_view("a\0b", 3)) == std::string("'a\0b'", 5));
}

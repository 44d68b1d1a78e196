// Suite directories: metadata.json, pinned hashes, load, new_version,
// create, verify (RELIABILITY.md 34).
#include <doctest.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <unistd.h>

#include <gate/suite/suite.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <gate/util/input.hpp>

#include "test_suite_support.hpp"
#include <gate/util/sha256.hpp>

namespace fs = std::filesystem;
using namespace gate::suite;

using namespace gate::suite::test;

namespace {

// A fresh directory per test, removed afterwards.
struct Scratch {
  fs::path dir;
  Scratch() {
    static std::atomic<int> counter{0};
    dir = fs::temp_directory_path() /
          ("gate-test-suite-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

std::string line(const std::string& id) {
  return R"({"id":")" + id + R"(","input":"hi","checks":[{"type":"contains","value":"x"}]})";
}

std::string cases_text(std::initializer_list<std::string> ids) {
  std::string out;
  for (const auto& id : ids)
    out += line(id) + "\n";
  return out;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  gate::write_file_atomically(p, text);
}

// A suite written by hand (not by create()), so load() is tested apart
// from the writer.
void hand_made_suite(const fs::path& dir, const std::string& v1, const std::string& v2) {
  write(dir / "versions/v1/cases.jsonl", v1);
  write(dir / "versions/v2/cases.jsonl", v2);
  write(dir / "metadata.json", R"({"name": "demo", "latest": "v2", "versions": [)"
                               R"({"version": "v1", "sha256": ")" +
                                   gate::sha256_hex(v1) +
                                   R"(", "cases": 2},)"
                                   R"({"version": "v2", "sha256": ")" +
                                   gate::sha256_hex(v2) + R"(", "cases": 3}]})");
}

} // namespace

TEST_CASE("load picks latest by default and a named version on request") {
  Scratch s;
  std::string v1 = cases_text({"a", "b"}), v2 = cases_text({"a", "b", "c"});
  hand_made_suite(s.dir, v1, v2);
  Suite latest = load(s.dir, "");
  CHECK(latest.name == "demo");
  CHECK(latest.version == "v2");
  CHECK(latest.cases.size() == 3);
  CHECK(latest.sha256 == gate::sha256_hex(v2));
  CHECK(latest.dir == s.dir);
  Suite first = load(s.dir, "v1");
  CHECK(first.version == "v1");
  CHECK(first.cases.size() == 2);
  CHECK(first.cases[1].id == "b");
}

TEST_CASE("an unknown version lists the known ones") {
  Scratch s;
  hand_made_suite(s.dir, cases_text({"a", "b"}), cases_text({"a", "b", "c"}));
  CHECK(has(error_of([&] { load(s.dir, "v9"); }),
            (s.dir / "metadata.json").string() + ": unknown version \"v9\"; known versions: v1, v2"));
}

TEST_CASE("sha256 mismatch names both hashes") {
  Scratch s;
  std::string v1 = cases_text({"a", "b"}), v2 = cases_text({"a", "b", "c"});
  hand_made_suite(s.dir, v1, v2);
  std::string edited = cases_text({"a", "b", "d"});
  write(s.dir / "versions/v2/cases.jsonl", edited);
  std::string err = error_of([&] { load(s.dir, ""); });
  CHECK(has(err, (s.dir / "versions/v2/cases.jsonl").string() + ": sha256 mismatch: metadata.json pins " +
                     gate::sha256_hex(v2) + ", file has " + gate::sha256_hex(edited) +
                     "; the suite was edited in place"));
  CHECK(has(err, "gate suite new-version"));
}

TEST_CASE("the hash is checked before parsing") {
  Scratch s;
  hand_made_suite(s.dir, cases_text({"a", "b"}), cases_text({"a", "b", "c"}));
  // Edited and broken at once: the edit is what is reported.
  write(s.dir / "versions/v2/cases.jsonl", line("a") + "\n{not json\n\xFF\n");
  std::string err = error_of([&] { load(s.dir, ""); });
  CHECK(has(err, "sha256 mismatch"));
  CHECK(err.find("invalid") == std::string::npos);
}

TEST_CASE("the case count must match metadata") {
  Scratch s;
  std::string v1 = cases_text({"a", "b", "c"}); // metadata says 2
  hand_made_suite(s.dir, v1, cases_text({"a", "b", "c"}));
  CHECK(has(error_of([&] { load(s.dir, "v1"); }),
            (s.dir / "versions/v1/cases.jsonl").string() + ": 3 cases, but metadata.json records 2"));
}

TEST_CASE("a pinned file that does not parse is reported with its line") {
  Scratch s;
  std::string v1 = line("a") + "\n" + line("a") + "\n";
  hand_made_suite(s.dir, v1, cases_text({"a", "b", "c"}));
  CHECK(has(error_of([&] { load(s.dir, "v1"); }),
            (s.dir / "versions/v1/cases.jsonl").string() + ":2: duplicate id"));
}

TEST_CASE("metadata.json is validated field by field") {
  Scratch s;
  const std::string meta = (s.dir / "metadata.json").string();
  const std::string h = std::string(64, 'a');
  auto err_with = [&](const std::string& text) {
    write(s.dir / "metadata.json", text);
    return error_of([&] { read_metadata(s.dir); });
  };
  auto version = [&](const std::string& v) { return R"({"name":"n","latest":"v1","versions":[)" + v + "]}"; };
  const std::string ok_v1 = R"({"version":"v1","sha256":")" + h + R"(","cases":1})";

  CHECK(has(error_of([&] { read_metadata(s.dir); }), meta + ": not found"));
  CHECK(has(err_with("{\n  \"name\": \"a\",\n  \"name\": \"b\"}"), meta + ":3:"));
  CHECK(has(err_with("{\n  \"name\": \"a\",\n  \"name\": \"b\"}"), "duplicate key \"name\""));
  CHECK(has(err_with("[]"), meta + ": expected a JSON object"));
  CHECK(has(err_with(R"({"name":"n","latest":"v1","versions":[],"extra":1})"),
            meta + ": unknown key \"extra\"; allowed keys: name, latest, versions"));
  CHECK(has(err_with(R"({"latest":"v1","versions":[]})"), meta + ": missing field \"name\""));
  CHECK(has(err_with(R"({"name":"","latest":"v1","versions":[]})"), "\"name\" must be a non-empty string"));
  CHECK(has(err_with(R"({"name":"n","latest":"v1"})"), meta + ": missing field \"versions\""));
  CHECK(
      has(err_with(R"({"name":"n","latest":"v1","versions":[]})"), "\"versions\" must be a non-empty array"));
  CHECK(has(err_with(version(R"({"version":"../x","sha256":")" + h + R"(","cases":1})")),
            meta + ": versions[0]: \"version\" \"../x\" must be a plain name"));
  CHECK(has(err_with(version(R"({"version":".hidden","sha256":")" + h + R"(","cases":1})")),
            "must be a plain name"));
  CHECK(has(err_with(version(ok_v1 + R"(,{"version":"v2","sha256":"ABC","cases":1})")),
            meta + ": versions[1]: \"sha256\" must be 64 lowercase hex digits, got \"ABC\""));
  CHECK(has(err_with(version(R"({"version":"v1","sha256":")" + std::string(64, 'A') + R"(","cases":1})")),
            "64 lowercase hex digits"));
  CHECK(has(err_with(version(R"({"version":"v1","sha256":")" + h + R"(","cases":0})")),
            "\"cases\" must be a positive integer, got 0"));
  CHECK(has(err_with(version(R"({"version":"v1","sha256":")" + h + R"(","cases":1.5})")),
            "field \"cases\" must be an integer"));
  CHECK(has(err_with(version(R"({"version":"v1","sha256":")" + h + R"(","cases":1,"note":""})")),
            "versions[0]: unknown key \"note\""));
  CHECK(has(err_with(version(ok_v1 + "," + ok_v1)), meta + ": version \"v1\" is listed twice"));
  CHECK(has(err_with(R"({"name":"n","latest":"v3","versions":[)" + ok_v1 + "]}"),
            meta + ": \"latest\" is \"v3\", which is not among \"versions\""));
}

TEST_CASE("format_metadata: one version per line, and it reads back") {
  Metadata m{"demo \"q\"", "v2", {{"v1", std::string(64, 'a'), 40}, {"v2", std::string(64, 'b'), 41}}};
  std::string text = format_metadata(m);
  CHECK(text == "{\n"
                "  \"name\": \"demo \\\"q\\\"\",\n"
                "  \"latest\": \"v2\",\n"
                "  \"versions\": [\n"
                "    {\"version\": \"v1\", \"sha256\": \"" +
                    std::string(64, 'a') +
                    "\", \"cases\": 40},\n"
                    "    {\"version\": \"v2\", \"sha256\": \"" +
                    std::string(64, 'b') +
                    "\", \"cases\": 41}\n"
                    "  ]\n"
                    "}\n");
  Scratch s;
  write(s.dir / "metadata.json", text);
  Metadata back = read_metadata(s.dir);
  CHECK(back.name == m.name);
  CHECK(back.latest == "v2");
  REQUIRE(back.versions.size() == 2);
  CHECK(back.versions[1].sha256 == std::string(64, 'b'));
  CHECK(back.versions[1].cases == 41);
}

TEST_CASE("create, then new_version: numbering, hash, count, old versions untouched") {
  Scratch s;
  fs::path suite = s.dir / "suite";
  const std::string text1 = "\xEF\xBB\xBF" + cases_text({"a", "b"});
  const std::string text2 = cases_text({"a", "b", "c"});
  const std::string text3 = cases_text({"a"});
  write(s.dir / "edit1.jsonl", text1);
  write(s.dir / "edit2.jsonl", text2);
  write(s.dir / "edit3.jsonl", text3);

  create(suite, "demo", s.dir / "edit1.jsonl");
  // The stored file is the input byte for byte (BOM included), so its hash is the input's.
  CHECK(gate::read_file(suite / "versions/v1/cases.jsonl") == text1);
  Metadata m = read_metadata(suite);
  CHECK(m.name == "demo");
  CHECK(m.latest == "v1");
  REQUIRE(m.versions.size() == 1);
  CHECK(m.versions[0].sha256 == gate::sha256_hex(text1));
  CHECK(m.versions[0].cases == 2);
  const std::string meta_v1 = gate::read_file(suite / "metadata.json");

  CHECK(new_version(suite, s.dir / "edit2.jsonl") == "v2");
  CHECK(gate::read_file(suite / "versions/v1/cases.jsonl") == text1);
  CHECK(gate::read_file(suite / "versions/v2/cases.jsonl") == text2);
  m = read_metadata(suite);
  CHECK(m.latest == "v2");
  REQUIRE(m.versions.size() == 2);
  CHECK(m.versions[0].sha256 == gate::sha256_hex(text1)); // v1's entry is unchanged
  CHECK(m.versions[0].cases == 2);
  CHECK(m.versions[1].version == "v2");
  CHECK(m.versions[1].sha256 == gate::sha256_hex(text2));
  CHECK(m.versions[1].cases == 3);
  // v1's line in metadata.json is rewritten as it was.
  CHECK(gate::read_file(suite / "metadata.json")
            .find(R"({"version": "v1", "sha256": ")" + gate::sha256_hex(text1) + R"(", "cases": 2},)") !=
        std::string::npos);
  CHECK(meta_v1 != gate::read_file(suite / "metadata.json"));

  const std::string v1_hash = gate::sha256_hex(gate::read_file(suite / "versions/v1/cases.jsonl"));
  const std::string v2_hash = gate::sha256_hex(gate::read_file(suite / "versions/v2/cases.jsonl"));
  CHECK(new_version(suite, s.dir / "edit3.jsonl") == "v3");
  CHECK(gate::sha256_hex(gate::read_file(suite / "versions/v1/cases.jsonl")) == v1_hash);
  CHECK(gate::sha256_hex(gate::read_file(suite / "versions/v2/cases.jsonl")) == v2_hash);
  CHECK(load(suite, "").cases.size() == 1);
  CHECK(load(suite, "v2").cases.size() == 3);
  CHECK(load(suite, "v1").cases.size() == 2);
}

TEST_CASE("new_version refuses no change, a bad file and a version's own file") {
  Scratch s;
  fs::path suite = s.dir / "suite";
  write(s.dir / "one.jsonl", cases_text({"a"}));
  create(suite, "demo", s.dir / "one.jsonl");
  const std::string meta_before = gate::read_file(suite / "metadata.json");

  CHECK(has(error_of([&] { new_version(suite, s.dir / "one.jsonl"); }),
            (s.dir / "one.jsonl").string() + ": no change: it is byte-identical to the latest version v1"));

  write(s.dir / "bad.jsonl", line("a") + "\n" + line("a") + "\n");
  CHECK(has(error_of([&] { new_version(suite, s.dir / "bad.jsonl"); }),
            (s.dir / "bad.jsonl").string() + ":2: duplicate id"));
  CHECK_FALSE(fs::exists(suite / "versions/v2"));

  CHECK(has(error_of([&] { new_version(suite, suite / "versions/v1/cases.jsonl"); }),
            "is the cases file of version v1"));
  CHECK(has(error_of([&] { new_version(suite, s.dir / "missing.jsonl"); }), "cannot read"));
  CHECK(gate::read_file(suite / "metadata.json") == meta_before);
}

TEST_CASE("new_version numbers after the highest vN, ignoring other names") {
  Scratch s;
  const std::string t = cases_text({"a"});
  write(s.dir / "versions/v7/cases.jsonl", t);
  write(s.dir / "versions/beta/cases.jsonl", t);
  write(s.dir / "metadata.json", R"({"name":"n","latest":"beta","versions":[)"
                                 R"({"version":"v10x","sha256":")" +
                                     gate::sha256_hex(t) +
                                     R"(","cases":1},)"
                                     R"({"version":"v7","sha256":")" +
                                     gate::sha256_hex(t) +
                                     R"(","cases":1},)"
                                     R"({"version":"beta","sha256":")" +
                                     gate::sha256_hex(t) + R"(","cases":1}]})");
  write(s.dir / "next.jsonl", cases_text({"a", "b"}));
  CHECK(new_version(s.dir, s.dir / "next.jsonl") == "v8");
  CHECK(read_metadata(s.dir).latest == "v8");
}

TEST_CASE("create refuses an existing suite and a bad cases file") {
  Scratch s;
  write(s.dir / "one.jsonl", cases_text({"a"}));
  create(s.dir / "suite", "demo", s.dir / "one.jsonl");
  CHECK(has(error_of([&] { create(s.dir / "suite", "demo", s.dir / "one.jsonl"); }),
            (s.dir / "suite/metadata.json").string() + ": already exists"));
  write(s.dir / "empty.jsonl", "\n");
  CHECK(has(error_of([&] { create(s.dir / "other", "demo", s.dir / "empty.jsonl"); }), "no cases"));
  CHECK_FALSE(fs::exists(s.dir / "other/metadata.json"));
  CHECK(has(error_of([&] { create(s.dir / "third", "", s.dir / "one.jsonl"); }), "suite name"));
}

TEST_CASE("verify reports every version, and the first problem") {
  Scratch s;
  std::string v1 = cases_text({"a", "b"}), v2 = cases_text({"a", "b", "c"});
  hand_made_suite(s.dir, v1, v2);
  CHECK(verify(s.dir) == std::vector<std::string>{"v1  2 cases  sha256 ok", "v2  3 cases  sha256 ok"});

  write(s.dir / "versions/v1/cases.jsonl", cases_text({"a", "z"}));
  std::string err = error_of([&] { verify(s.dir); });
  CHECK(has(err, (s.dir / "versions/v1/cases.jsonl").string() + ": sha256 mismatch: metadata.json pins " +
                     gate::sha256_hex(v1)));

  write(s.dir / "versions/v1/cases.jsonl", v1);
  fs::remove(s.dir / "versions/v2/cases.jsonl");
  CHECK(has(error_of([&] { verify(s.dir); }), "cannot read " + (s.dir / "versions/v2/cases.jsonl").string()));
}

// End-to-end: `gate rank` on the four committed strategy reports of
// fixtures/rank, and `gate compare --elo`.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

std::string spec(const std::string& name) {
  return (source_dir() / "fixtures" / "rank" / (name + ".json")).string() + ":" + name;
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("gate rank writes every form and prints the Markdown") {
  TempDir tmp;
  Result r = run_gate({"rank", "--anchor", "baseline", spec("baseline"), spec("r1"), spec("r3"), spec("r5"),
                       "--markdown", "out/rank.md", "--json", "out/rank.json", "--csv", "out/rank.csv",
                       "--svg", "out/rank.svg", "--bootstrap", "200"},
                      tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* f : {"rank.md", "rank.json", "rank.csv", "rank.svg"})
    CHECK(fs::exists(tmp.path() / "out" / f));
  CHECK(slurp(tmp.path() / "out" / "rank.md") == r.out);
  CHECK(r.out.find("## Strategy ranking: rank-demo v1") == 0);
  CHECK(r.out.find("```mermaid") != std::string::npos);
  auto doc = read_json(tmp.path() / "out" / "rank.json");
  CHECK(doc.at("schema").as_string() == "gate.rank/1");
  CHECK(doc.at("bootstrap").as_int64() == 200);
  CHECK(doc.at("strategies").as_array().size() == 4);
  CHECK(slurp(tmp.path() / "out" / "rank.svg").find("<svg xmlns=") == 0);
}

TEST_CASE("gate rank refuses reports of different suites, naming the files") {
  TempDir tmp;
  spit(tmp.path() / "other.json", replace_once(slurp(source_dir() / "fixtures" / "rank" / "r1.json"),
                                               "\"version\":\"v1\"", "\"version\":\"v2\""));
  Result r = run_gate({"rank", "--anchor", "baseline", spec("baseline"), "other.json:r1"}, tmp.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("baseline.json is rank-demo v1") != std::string::npos);
  CHECK(r.err.find("other.json is rank-demo v2") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("gate rank usage errors exit 2") {
  TempDir tmp;
  CHECK(run_gate({"rank", "--anchor", "nobody", spec("baseline"), spec("r1")}, tmp.path()).exit_code == 2);
  CHECK(run_gate({"rank", "--anchor", "baseline", spec("baseline")}, tmp.path()).exit_code == 2);
  CHECK(run_gate({"rank", "--anchor", "r1", "r1.json"}, tmp.path()).exit_code == 2);
  CHECK(
      run_gate({"rank", "--anchor", "baseline", spec("baseline"), "missing.json:x"}, tmp.path()).exit_code ==
      2);
  CHECK(run_gate({"rank", "--anchor", "baseline", spec("baseline"), spec("r1"), "--seed", "-3"}, tmp.path())
            .exit_code == 2);
}

TEST_CASE("gate compare --elo adds the Elo difference to the Markdown") {
  TempDir tmp;
  const fs::path dir = source_dir() / "fixtures" / "rank";
  Result r = run_gate({"compare", "--baseline", (dir / "baseline.json").string(), "--current",
                       (dir / "r1.json").string(), "--elo", "--markdown", "verdict.md"},
                      tmp.path());
  INFO(r.out << r.err);
  CHECK((r.exit_code == 0 || r.exit_code == 1));
  const std::string md = slurp(tmp.path() / "verdict.md");
  CHECK(md.find("### Elo (Bradley–Terry over tasks)\n\n**current** against **baseline**: **+") !=
        std::string::npos);
  Result plain = run_gate({"compare", "--baseline", (dir / "baseline.json").string(), "--current",
                           (dir / "r1.json").string(), "--markdown", "plain.md"},
                          tmp.path());
  CHECK(slurp(tmp.path() / "plain.md").find("### Elo") == std::string::npos);
}

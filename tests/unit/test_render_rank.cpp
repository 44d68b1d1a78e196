#include <doctest.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gate/rank/rank.hpp>
#include <gate/render/rank_output.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>

using namespace gate;
namespace fs = std::filesystem;

namespace {

fs::path source_root() { return fs::path(__FILE__).parent_path().parent_path().parent_path(); }

// Golden files live in tests/golden; GATE_UPDATE_GOLDEN=1 rewrites them
// from the current output instead of comparing (review the diff).
void check_golden(const std::string& name, const std::string& actual) {
  const fs::path path = source_root() / "tests" / "golden" / name;
  const char* update = std::getenv("GATE_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    write_file_atomically(path, actual);
    MESSAGE("rewrote " << path.string());
  }
  REQUIRE_MESSAGE(fs::exists(path), path.string() << " is missing; run with GATE_UPDATE_GOLDEN=1");
  CHECK(read_file(path) == actual);
}

struct Fixture {
  std::vector<report::Report> reports;
  std::vector<rank::Strategy> strategies;
};

// The four committed strategy reports, named as on the command line.
Fixture fixture() {
  Fixture f;
  const std::vector<std::string> names = {"baseline", "r1", "r3", "r5"};
  for (const auto& n : names)
    f.reports.push_back(report::read(source_root() / "fixtures" / "rank" / (n + ".json")));
  for (std::size_t i = 0; i < names.size(); ++i)
    f.strategies.push_back({names[i], "fixtures/rank/" + names[i] + ".json", &f.reports[i]});
  return f;
}

rank::Ranking fixture_ranking() {
  static const Fixture f = fixture();
  rank::Options o;
  o.anchor = "baseline";
  return rank::rank(f.strategies, o);
}

} // namespace

TEST_CASE("the fixture has diminishing returns built in") {
  const rank::Ranking r = fixture_ranking();
  REQUIRE(r.strategies.size() == 4);
  CHECK(r.tasks == 40);
  CHECK(r.strategies[0].name == "baseline");
  CHECK(r.tasks_without_anchor == std::vector<std::string>{"supp-09"});
  // More tokens buy less and less: the marginal value falls step by step.
  for (std::size_t k = 1; k < 4; ++k)
    CHECK(r.strategies[k].tokens_per_task > r.strategies[k - 1].tokens_per_task);
  CHECK(*r.strategies[2].marginal_per_1k < *r.strategies[1].marginal_per_1k);
  CHECK(*r.strategies[3].marginal_per_1k < *r.strategies[2].marginal_per_1k);
  CHECK(r.verdict != rank::k_still_scaling);
}

TEST_CASE("golden: the fixture's Markdown and CSV") {
  const rank::Ranking r = fixture_ranking();
  check_golden("rank_fixture.md", render::rank_markdown(r));
  check_golden("rank_fixture.csv", render::rank_csv(r));
}

TEST_CASE("the JSON form is strict JSON with every strategy") {
  const rank::Ranking r = fixture_ranking();
  const auto doc = json::parse_strict(render::rank_json(r), "rank.json");
  const auto& o = doc.as_object();
  CHECK(o.at("schema").as_string() == "gate.rank/1");
  CHECK(o.at("anchor").as_string() == "baseline");
  REQUIRE(o.at("strategies").as_array().size() == 4);
  const auto& first = o.at("strategies").as_array()[0].as_object();
  CHECK(first.at("elo").to_number<double>() == 1000.0);
  CHECK(first.at("step_gain").is_null());
  CHECK(o.at("tasks_without_anchor").as_array().size() == 1);
}

TEST_CASE("the SVG is self-contained and has one point per strategy") {
  const std::string svg = render::rank_svg(fixture_ranking());
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>\n") == svg.size() - 7);
  CHECK(svg.find("href") == std::string::npos);
  CHECK(svg.find("<script") == std::string::npos);
  std::size_t circles = 0;
  for (std::size_t at = 0; (at = svg.find("<circle", at)) != std::string::npos; ++at)
    ++circles;
  CHECK(circles == 4);
}

TEST_CASE("hostile strategy names and task ids stay inert in every form") {
  rank::Ranking r;
  r.suite_name = "s";
  r.anchor = "a</details>";
  r.verdict = rank::k_flat;
  r.verdict_reason = "because | of [x](http://evil)";
  r.tasks_without_anchor = {"t`1`|<img src=x>"};
  rank::StrategyResult a, b;
  a.name = "a</details>";
  a.anchor = true;
  a.elo = 1000;
  b.name = "=HYPERLINK(\"http://evil\")\n@team";
  b.file = "-x.json";
  b.elo = 1100;
  b.step_gain = 100;
  rank::TaskMove m;
  m.id = "</script><b>";
  m.delta_elo = 50;
  b.gains = {m};
  r.strategies = {a, b};
  const std::string md = render::rank_markdown(r);
  CHECK(md.find("</details>") == std::string::npos);
  // Raw HTML only inside code spans (shown as text), link brackets escaped.
  CHECK(md.find("`` t`1`\\|<img src=x> ``") != std::string::npos);
  CHECK(md.find("` </script><b> `") != std::string::npos);
  CHECK(md.find("\\[x\\](http") != std::string::npos);
  CHECK(md.find("\n@team") == std::string::npos);
  // Mermaid labels keep only [A-Za-z0-9 ._-], at most 24 of them.
  CHECK(md.find("\"_HYPERLINK__http___evil_ 0\"") != std::string::npos);
  const std::string csv = render::rank_csv(r);
  CHECK(csv.find("\"'=HYPERLINK(\"\"http://evil\"\")\n@team\"") != std::string::npos);
  CHECK(csv.find("\"'-x.json\"") != std::string::npos);
  const std::string svg = render::rank_svg(r);
  CHECK(svg.find("</details>") == std::string::npos);
  CHECK(svg.find("&lt;/details&gt;") != std::string::npos);
  CHECK_NOTHROW(json::parse_strict(render::rank_json(r), "rank.json"));
}

TEST_CASE("the compare --elo section: current against the baseline") {
  const rank::Ranking full = fixture_ranking();
  static const Fixture f = fixture();
  rank::Options o;
  o.anchor = "baseline";
  o.order = rank::BudgetOrder::given;
  rank::Ranking two = rank::rank({f.strategies[0], f.strategies[1]}, o);
  const std::string md = render::elo_section_markdown(two);
  CHECK(md.rfind("### Elo (Bradley–Terry over tasks)\n\n**r1** against **baseline**: **+", 0) == 0);
  CHECK(md.find(" won, ") != std::string::npos);
  CHECK(render::elo_section_markdown(full).empty()); // only for two strategies
}

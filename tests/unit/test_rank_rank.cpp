#include <doctest.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <gate/rank/rank.hpp>
#include <gate/util/error.hpp>

using namespace gate;
using rank::Ranking;
using rank::Strategy;

namespace {

// A report of one run per outcome letter per task: "P" passed, "F" failed,
// "E" errored; "" leaves the task out. Each run costs `prompt` +
// `completion` tokens.
report::Report make(const std::vector<std::pair<std::string, std::string>>& tasks, std::int64_t prompt = 100,
                    std::int64_t completion = 50, const std::string& scenario_prefix = "") {
  report::Report r;
  r.suite = {"s", "v1", "abc"};
  for (const auto& [id, outcomes] : tasks) {
    if (outcomes.empty()) continue;
    results::Task t;
    t.id = id;
    t.scenario = scenario_prefix.empty() ? "" : scenario_prefix + id.substr(0, 1);
    for (char c : outcomes) {
      results::Run run;
      run.index = static_cast<int>(t.runs.size());
      run.passed = c == 'P';
      if (c == 'E') run.error = "timeout";
      run.prompt_tokens = prompt;
      run.completion_tokens = completion;
      t.runs.push_back(run);
    }
    r.tasks.push_back(t);
  }
  report::compute(r, {});
  return r;
}

rank::Options options(const std::string& anchor, std::int64_t boot = 200, std::uint64_t seed = 7) {
  rank::Options o;
  o.anchor = anchor;
  o.bootstrap = boot;
  o.seed = seed;
  return o;
}

// string_view, as in json::as_object: g++ 13+ -Wdangling-reference.
const rank::StrategyResult& find(const Ranking& r, std::string_view name) {
  for (const auto& s : r.strategies)
    if (s.name == name) return s;
  FAIL("no strategy " << name);
  throw;
}

} // namespace

TEST_CASE("pooled Elo, per-task spread, tokens and ΔElo per 1k tokens by hand") {
  // Per task, s against a: win, win, draw, loss (one run each).
  auto a = make({{"t1", "F"}, {"t2", "F"}, {"t3", "P"}, {"t4", "P"}}, 100, 50);
  auto s = make({{"t1", "P"}, {"t2", "P"}, {"t3", "P"}, {"t4", "F"}}, 300, 100);
  Ranking r = rank::rank({{"a", "a.json", &a}, {"s", "s.json", &s}}, options("a"));
  const auto& ra = find(r, "a");
  const auto& rs = find(r, "s");
  CHECK(r.games == 4);
  CHECK(rs.won == 2);
  CHECK(rs.drawn == 1);
  CHECK(rs.lost == 1);
  CHECK_FALSE(r.prior);
  // W_s = 2.5, W_a = 1.5 over 4 games: p_s/p_a = 5/3, 400·log10(5/3) = 88.7395.
  CHECK(ra.elo == 1000.0);
  CHECK(rs.elo == doctest::Approx(1088.7394998465).epsilon(1e-10));
  // Tokens: one run of 300 + 100 per task.
  CHECK(rs.tokens_per_task == 400.0);
  // 88.7395 / (400 / 1000) = 221.8487.
  REQUIRE(rs.delta_elo_per_1k);
  CHECK(*rs.delta_elo_per_1k == doctest::Approx(221.8487496164).epsilon(1e-9));
  // Budget order by tokens: a (150) then s (400); marginal = 88.7395 / 0.25.
  REQUIRE(r.strategies.front().name == "a");
  REQUIRE(rs.marginal_per_1k);
  CHECK(*rs.marginal_per_1k == doctest::Approx(354.9579993862).epsilon(1e-9));
  // Per-task fits: a win gets the prior, ratio 3 → +190.8485; a draw (both
  // unbeaten: the prior too) 0; a loss −190.8485. Values 1190.85, 1190.85,
  // 1000, 809.15: mean 1000 + 190.8485/4 = 1047.7121; deviations 143.1364
  // (twice), −47.7121, −238.5606: sd = sqrt(100163.2/3) = 182.7235.
  CHECK(rs.per_task_tasks == 4);
  CHECK(rs.per_task_mean == doctest::Approx(1047.7121254720).epsilon(1e-9));
  CHECK(rs.per_task_sd == doctest::Approx(182.7235291821).epsilon(1e-9));
  CHECK(r.per_task_prior == 4);
  REQUIRE(rs.gains.size() == 2);
  CHECK(rs.gains[0].id == "t1");
  CHECK(rs.gains[0].delta_elo == doctest::Approx(190.8485018879).epsilon(1e-9));
  REQUIRE(rs.losses.size() == 1);
  CHECK(rs.losses[0].id == "t4");
  // The anchor's interval is exactly [1000, 1000] in every resample.
  CHECK(ra.elo_interval.low == 1000.0);
  CHECK(ra.elo_interval.high == 1000.0);
}

TEST_CASE("tokens per task count every run, errored and retried ones too") {
  auto a = make({{"t1", "PE"}, {"t2", "FF"}}, 10, 5);
  auto b = make({{"t1", "PP"}, {"t2", "PF"}}, 40, 0);
  a.tasks[0].runs[1].prompt_tokens = 70; // a retried attempt: the whole chain
  a.tasks[0].runs[1].usage_known = false;
  a.tasks[1].runs[0].judge_prompt_tokens = 30; // an llm_judge call
  a.tasks[1].runs[0].judge_completion_tokens = 4;
  Ranking r = rank::rank({{"a", "a", &a}, {"b", "b", &b}}, options("a"));
  // a: (15 + (70 + 5) + (15 + 30 + 4) + 15) / 2 tasks = 77.
  CHECK(find(r, "a").tokens_per_task == 77.0);
  CHECK(find(r, "a").runs_without_usage == 1);
  CHECK(find(r, "b").tokens_per_task == 80.0);
}

TEST_CASE("the bootstrap is deterministic for a fixed seed") {
  std::vector<std::pair<std::string, std::string>> ta, tb, tc;
  for (int i = 0; i < 30; ++i) {
    const std::string id = "t" + std::to_string(100 + i);
    ta.push_back({id, i % 3 == 0 ? "PF" : "FF"});
    tb.push_back({id, i % 2 == 0 ? "PP" : "PF"});
    tc.push_back({id, i % 5 == 0 ? "FF" : "PP"});
  }
  auto a = make(ta), b = make(tb), c = make(tc);
  std::vector<Strategy> s = {{"a", "a", &a}, {"b", "b", &b}, {"c", "c", &c}};
  Ranking one = rank::rank(s, options("a", 300, 11));
  Ranking two = rank::rank(s, options("a", 300, 11));
  Ranking other = rank::rank(s, options("a", 300, 12));
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(one.strategies[i].elo_interval.low == two.strategies[i].elo_interval.low);
    CHECK(one.strategies[i].elo_interval.high == two.strategies[i].elo_interval.high);
    CHECK(one.strategies[i].elo == other.strategies[i].elo); // the point estimate does not depend on the seed
  }
  const auto& b1 = find(one, "b");
  const auto& b3 = find(other, "b");
  CHECK(b1.elo_interval.low < b1.elo);
  CHECK(b1.elo < b1.elo_interval.high);
  CHECK((b1.elo_interval.low != b3.elo_interval.low || b1.elo_interval.high != b3.elo_interval.high));
}

TEST_CASE("a comparison graph in pieces is Error(bad_input) naming the groups") {
  auto a = make({{"t1", "P"}, {"t2", "F"}});
  auto b = make({{"t1", "F"}, {"t2", "F"}});
  auto c = make({{"t3", "P"}, {"t4", "F"}});
  auto d = make({{"t3", "F"}, {"t4", "P"}});
  try {
    rank::rank({{"a", "a", &a}, {"b", "b", &b}, {"c", "c", &c}, {"d", "d", &d}}, options("a"));
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    CHECK(std::string(e.what()).find("{a, b} and {c, d}") != std::string::npos);
  }
}

TEST_CASE("an unbeaten strategy: the prior is added and named") {
  auto a = make({{"t1", "F"}, {"t2", "F"}, {"t3", "P"}});
  auto b = make({{"t1", "P"}, {"t2", "P"}, {"t3", "P"}});
  Ranking r = rank::rank({{"a", "a", &a}, {"b", "b", &b}}, options("a"));
  CHECK(r.prior);
  CHECK(r.unbeaten == std::vector<std::string>{"b"});
  CHECK(r.winless.empty());
  // b: 2 wins, 1 draw, never lost (its draw alone would keep the fit finite;
  // METRICS.md adds the prior anyway). With one virtual draw W_b = 3,
  // W_a = 1 over 4 games: ratio 3, 400·log10(3) = 190.8485.
  CHECK(find(r, "b").elo == doctest::Approx(1190.8485018879).epsilon(1e-9));
}

TEST_CASE("a task without the anchor is listed, and left out of the per-task numbers only") {
  auto a = make({{"t1", "F"}, {"t2", "E"}, {"t3", "P"}});
  auto b = make({{"t1", "P"}, {"t2", "P"}, {"t3", "F"}});
  auto c = make({{"t1", "F"}, {"t2", "F"}, {"t3", "P"}});
  Ranking r = rank::rank({{"a", "a", &a}, {"b", "b", &b}, {"c", "c", &c}}, options("a"));
  CHECK(r.tasks_without_anchor == std::vector<std::string>{"t2"});
  CHECK(find(r, "b").per_task_tasks == 2);
  CHECK(find(r, "a").scored_tasks == 2);
  // t2's game (b beats c) still counts: c lost to b on t1 and on t2.
  CHECK(find(r, "c").lost == 2);
  CHECK(r.games == 7); // 3 + 1 + 3
}

TEST_CASE("symmetric strategies get equal Elo") {
  auto a = make({{"t1", "PF"}, {"t2", "FF"}, {"t3", "PP"}, {"t4", "PF"}});
  auto b = make({{"t1", "FF"}, {"t2", "PF"}, {"t3", "PF"}, {"t4", "PP"}});
  Ranking r = rank::rank({{"a", "a", &a}, {"b", "b", &b}}, options("a"));
  CHECK(find(r, "b").elo == doctest::Approx(1000.0).epsilon(1e-12));
}

TEST_CASE("usage errors: one strategy, duplicate names, unknown anchor") {
  auto a = make({{"t1", "P"}});
  CHECK_THROWS_AS(rank::rank({{"a", "a", &a}}, options("a")), Error);
  CHECK_THROWS_AS(rank::rank({{"a", "x", &a}, {"a", "y", &a}}, options("a")), Error);
  CHECK_THROWS_WITH_AS(rank::rank({{"a", "x", &a}, {"b", "y", &a}}, options("zz")),
                       "anchor \"zz\" is not one of the strategies (a, b)", Error);
}

TEST_CASE("a strategy that helps one scenario only is said to be one") {
  std::vector<std::pair<std::string, std::string>> ta, tb;
  for (char scen : {'m', 'x', 'y'})
    for (int i = 0; i < 4; ++i) {
      const std::string id = std::string(1, scen) + std::to_string(i);
      ta.push_back({id, "F"});
      tb.push_back({id, scen == 'm' || i == 0 ? "P" : "F"}); // m: 4 wins; x, y: 1 win of 4
    }
  auto a = make(ta, 100, 50, "s-"), b = make(tb, 100, 50, "s-");
  Ranking r = rank::rank({{"a", "a", &a}, {"b", "b", &b}}, options("a"));
  const auto& s = find(r, "b");
  REQUIRE(s.scenarios.size() == 3);
  // s-m: four per-task wins of +190.85; s-x, s-y: one win, three draws: 47.7 ≥ 25 too.
  CHECK(s.scenarios[0].mean_delta_elo == doctest::Approx(190.8485018879).epsilon(1e-9));
  CHECK(s.scenarios[1].mean_delta_elo == doctest::Approx(47.7121254720).epsilon(1e-9));
  CHECK_FALSE(s.only_scenario);
  // With x and y flat, only m is helped.
  for (auto& t : b.tasks)
    if (t.id[0] != 'm') t.runs[0].passed = false;
  report::compute(b, {});
  Ranking r2 = rank::rank({{"a", "a", &a}, {"b", "b", &b}}, options("a"));
  REQUIRE(find(r2, "b").only_scenario);
  CHECK(*find(r2, "b").only_scenario == "s-m");
}

TEST_CASE("parse_strategy and check_same_suite") {
  auto s = rank::parse_strategy("runs/a:b.json:r3");
  CHECK(s.file == "runs/a:b.json");
  CHECK(s.name == "r3");
  for (const char* bad : {"a.json", "a.json:", ":r1", "dir:x/y.json", "a.json:bad\nname"})
    CHECK_THROWS_AS(rank::parse_strategy(bad), Error);
  auto a = make({{"t1", "P"}});
  auto b = a;
  b.suite.version = "v2";
  try {
    rank::check_same_suite({{"a", "one.json", &a}, {"b", "two.json", &b}});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    const std::string m = e.what();
    CHECK(m.find("one.json") != std::string::npos);
    CHECK(m.find("two.json is s v2") != std::string::npos);
  }
}

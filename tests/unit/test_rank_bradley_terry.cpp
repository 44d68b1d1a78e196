#include <doctest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include <gate/rank/bradley_terry.hpp>
#include <gate/rank/rank.hpp>
#include <gate/util/input.hpp>

using namespace gate::rank;

namespace {

// n-player games from (winner, loser, count) and (a, b, draws).
void wins(Games& g, std::size_t winner, std::size_t loser, int count) {
  for (int k = 0; k < count; ++k)
    add_game(g, winner, loser, 1.0, 0.0);
}
void draws(Games& g, std::size_t a, std::size_t b, int count) {
  for (int k = 0; k < count; ++k)
    add_game(g, a, b, 0.5, 0.5);
}

} // namespace

TEST_CASE("add_game: a win is 2 half-points for the winner, a draw 1 for each") {
  Games g(2);
  add_game(g, 0, 1, 0.7, 0.3);
  add_game(g, 0, 1, 0.2, 0.9);
  add_game(g, 0, 1, 0.5, 0.5);
  CHECK(g.at(0, 1) == 3); // one win (2) + one draw (1)
  CHECK(g.at(1, 0) == 3);
  CHECK(g.games(0, 1) == 3);
}

TEST_CASE("two players: the fitted strength ratio equals the win ratio") {
  Games g(2);
  wins(g, 0, 1, 30);
  wins(g, 1, 0, 10);
  Fit f = fit(g);
  REQUIRE(f.converged);
  CHECK_FALSE(f.prior);
  // p_A = 30 / (40 / (p_A + p_B)) = 0.75 with Σp = 1: ratio 30/10 = 3.
  CHECK(f.strength[0] / f.strength[1] == doctest::Approx(3.0).epsilon(1e-12));
  CHECK(f.strength[0] == doctest::Approx(0.75).epsilon(1e-12));
  // 400 · log10(3) = 190.848501888 above the anchor.
  CHECK(elo(f.strength[0], f.strength[1]) == doctest::Approx(1190.848501888).epsilon(1e-12));
}

TEST_CASE("three players match the independent Newton reference in tests/data/rank") {
  // The same data as bt_reference.py: A-B 7:3 with 2 draws, B-C 6:4, A-C 8:2.
  Games g(3);
  wins(g, 0, 1, 7);
  wins(g, 1, 0, 3);
  draws(g, 0, 1, 2);
  wins(g, 1, 2, 6);
  wins(g, 2, 1, 4);
  wins(g, 0, 2, 8);
  wins(g, 2, 0, 2);
  Fit f = fit(g);
  REQUIRE(f.converged);
  CHECK_FALSE(f.prior);
  auto path =
      std::filesystem::path(__FILE__).parent_path().parent_path() / "data" / "rank" / "bt_reference.txt";
  std::istringstream in(gate::read_file(path));
  std::map<std::string, double> expected;
  std::string name;
  double value = 0;
  while (in >> name >> value)
    expected[name] = value;
  REQUIRE(expected.size() == 3);
  const std::size_t anchor = 1; // B
  CHECK(elo(f.strength[0], f.strength[anchor]) == doctest::Approx(expected["A"]).epsilon(1e-9));
  CHECK(elo(f.strength[1], f.strength[anchor]) == expected["B"]);
  CHECK(elo(f.strength[2], f.strength[anchor]) == doctest::Approx(expected["C"]).epsilon(1e-9));
}

TEST_CASE("symmetric data gives equal Elo") {
  Games g(3);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = i + 1; j < 3; ++j) {
      wins(g, i, j, 5);
      wins(g, j, i, 5);
      draws(g, i, j, 2);
    }
  Fit f = fit(g);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(f.strength[i] == doctest::Approx(1.0 / 3).epsilon(1e-12));
    CHECK(elo(f.strength[i], f.strength[0]) == doctest::Approx(1000.0).epsilon(1e-12));
  }
}

TEST_CASE("the anchor's Elo is exactly 1000") {
  for (double p : {1e-9, 0.013, 0.25, 0.5, 1.0})
    CHECK(elo(p, p) == 1000.0);
  Games g(3);
  wins(g, 0, 1, 4);
  wins(g, 1, 2, 3);
  wins(g, 2, 0, 1);
  wins(g, 1, 0, 2);
  Fit f = fit(g);
  for (std::size_t a = 0; a < 3; ++a)
    CHECK(elo(f.strength[a], f.strength[a]) == 1000.0);
}

TEST_CASE("a player that never loses gets one virtual draw against every other") {
  Games g(2);
  wins(g, 0, 1, 3);
  CHECK_FALSE(strongly_connected(g));
  Fit f = fit(g);
  CHECK(f.prior);
  // With the prior: W_A = 3 + 0.5 = 3.5, W_B = 0.5, 4 games: ratio 7,
  // 400 · log10(7) = 338.039216006.
  CHECK(f.strength[0] / f.strength[1] == doctest::Approx(7.0).epsilon(1e-9));
  CHECK(elo(f.strength[0], f.strength[1]) == doctest::Approx(1338.039216006).epsilon(1e-9));
}

TEST_CASE("strong connectivity: a drawing pair that never loses to the third has no finite fit") {
  Games g(3);
  draws(g, 0, 1, 2);
  wins(g, 0, 2, 1);
  wins(g, 1, 2, 1);
  CHECK_FALSE(strongly_connected(g));
  wins(g, 2, 1, 1);
  CHECK(strongly_connected(g));
  CHECK_FALSE(fit(g).prior);
}

TEST_CASE("a comparison graph in pieces is an error") {
  Games g(4);
  wins(g, 0, 1, 2);
  wins(g, 1, 0, 1);
  wins(g, 2, 3, 1);
  auto groups = components(g);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0] == std::vector<std::size_t>{0, 1});
  CHECK(groups[1] == std::vector<std::size_t>{2, 3});
  CHECK_THROWS_AS(fit(g), std::invalid_argument);
}

TEST_CASE("one player: strength 1") {
  Fit f = fit(Games(1));
  CHECK(f.strength == std::vector<double>{1.0});
}

TEST_CASE("splitmix64 gives the published sequence; below() stays in range") {
  SplitMix64 r{0};
  CHECK(r.next() == 0xe220a8397b1dcdafULL);
  CHECK(r.next() == 0x6e789e6aa1b965f4ULL);
  SplitMix64 a{42}, b{42};
  std::vector<int> seen(7, 0);
  for (int i = 0; i < 700; ++i) {
    auto x = a.below(7);
    CHECK(x == b.below(7));
    REQUIRE(x < 7);
    ++seen[x];
  }
  for (int c : seen)
    CHECK(c > 50); // 100 expected each; a stuck generator fails
}

#include <doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_compare_sim_support.hpp"

// Power: the gate catches a change the size it promises to catch. Seeded,
// 500 comparisons per setting, 200 tasks, k = 3, default thresholds.

using namespace gate::sim;
using gate::compare::compare;
using gate::compare::MetricRow;
using gate::compare::Verdict;
using gate::report::Report;

namespace {

const MetricRow& success(const Verdict& v) {
  auto it = std::find_if(v.metrics.begin(), v.metrics.end(),
                         [](const MetricRow& r) { return r.key == "success_rate"; });
  REQUIRE(it != v.metrics.end());
  return *it;
}

} // namespace

TEST_CASE("the PR flow: a true 30pp drop on the 20 edited tasks is caught in >= 90% of PRs") {
  for (Spread spread : {Spread::uniform, Spread::u_shaped}) {
    SplitMix64 rng{spread == Spread::uniform ? 81u : 82u};
    const std::vector<double> p = true_rates(tasks, spread, rng);
    int caught = 0;
    double scoped = 0, suite_wide = 0;
    for (int c = 0; c < comparisons; ++c) {
      // Each PR edits the prompts of its own 20 tasks, and breaks them.
      const std::vector<int> edited = some_tasks(tasks, 20, rng);
      std::vector<double> edited_p;
      for (int i : edited)
        edited_p.push_back(p[static_cast<std::size_t>(i)]);
      const std::vector<double> lowered = dropped(edited_p, 0.30);
      std::vector<double> after = p;
      for (std::size_t j = 0; j < edited.size(); ++j)
        after[static_cast<std::size_t>(edited[j])] = lowered[j];
      Report base = fresh(p, k, rng);
      Verdict v = compare(base, pr_flow(base, after, edited, rng), {});
      caught += alarm(v);
      scoped += success(v).delta / comparisons;
      suite_wide += success(v).suite_delta / comparisons;
    }
    const double rate = static_cast<double>(caught) / comparisons;
    MESSAGE(name(spread) << ": 30pp drop on 20 edited tasks caught in " << 100 * rate << "% (mean Δ "
                         << scoped << "pp on the affected tasks, " << suite_wide << "pp suite-wide)");
    CHECK(rate >= 0.90);
    CHECK(scoped == doctest::Approx(-30).epsilon(0.1));
    CHECK(suite_wide == doctest::Approx(-3).epsilon(0.1));
  }
}

TEST_CASE("a true drop equal to the printed noise floor is caught 80% of the time (± 6)") {
  for (Spread spread : {Spread::uniform, Spread::u_shaped}) {
    SplitMix64 rng{spread == Spread::uniform ? 83u : 84u};
    const std::vector<double> p = true_rates(tasks, spread, rng);
    // The floor an A/A comparison prints, averaged over a few: what a team
    // reads next to its verdicts.
    double floor = 0;
    constexpr int probes = 20;
    for (int c = 0; c < probes; ++c) {
      const Verdict v = compare(fresh(p, k, rng), fresh(p, k, rng), {});
      const MetricRow& s = success(v);
      REQUIRE(s.noise_floor);
      floor += *s.noise_floor / probes;
    }
    const std::vector<double> after = dropped(p, floor / 100);
    int caught = 0;
    for (int c = 0; c < comparisons; ++c)
      caught += alarm(compare(fresh(p, k, rng), fresh(after, k, rng), {}));
    const double rate = static_cast<double>(caught) / comparisons;
    MESSAGE(name(spread) << ": printed floor " << floor << "pp; a true drop of that size caught in "
                         << 100 * rate << "%");
    CHECK(rate >= 0.74);
    CHECK(rate <= 0.86);
  }
}

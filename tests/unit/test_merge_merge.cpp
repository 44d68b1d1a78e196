#include <doctest.h>

#include <boost/json.hpp>

#include <gate/merge/merge.hpp>
#include <gate/util/error.hpp>

using namespace gate;

namespace {

results::Task task(const std::string& id, std::vector<bool> outcomes) {
  results::Task t{id, "s", "", "", {}};
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    results::Run r;
    r.index = static_cast<int>(i);
    r.passed = outcomes[i];
    r.answer = outcomes[i] ? "yes" : "no";
    r.answer_sha256 = std::string(64, outcomes[i] ? 'a' : 'b');
    r.prompt_tokens = 10;
    r.completion_tokens = 2;
    r.cache_hit = true;
    r.fingerprint = "fp-" + id;
    t.runs.push_back(r);
  }
  return t;
}

merge::Part part(int index, int count, std::vector<results::Task> tasks,
                 const std::string& started = "2026-01-01T00:00:10Z",
                 const std::string& finished = "2026-01-01T00:01:00Z") {
  merge::Part p;
  p.file = "shard-" + std::to_string(index) + ".json";
  report::Report& r = p.report;
  r.gate_version = "0.1.0";
  r.suite = {"demo", "v1", std::string(64, 'e')};
  r.config = boost::json::parse(R"({"runs":2,"token_band_pct":25,"model":{"name":"m","seed":7}})");
  r.config.as_object()["shard"] = {{"index", index}, {"count", count}};
  r.route = {{"model", "m"}};
  r.started_at = started;
  r.finished_at = finished;
  r.tasks = std::move(tasks);
  return p;
}

// The refusal's message, or "" when merge accepted the parts.
std::string refusal(std::vector<merge::Part> parts, merge::Options o = {}) {
  try {
    merge::merge(std::move(parts), o);
  } catch (const Error& e) {
    CHECK(e.code() == Exit::bad_input);
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("differing_keys names nested members that differ or exist on one side only") {
  auto a = boost::json::parse(R"({"a":1,"m":{"x":1,"y":2},"l":[1,2]})");
  auto b = boost::json::parse(R"({"a":1,"m":{"x":1,"y":3},"l":[1,2],"z":0})");
  CHECK(merge::differing_keys(a, b) == std::vector<std::string>{"m.y", "z"});
  CHECK(merge::differing_keys(a, a).empty());
  CHECK(merge::differing_keys(boost::json::parse("[1]"), boost::json::parse("[2]")) ==
        std::vector<std::string>{"(the whole value)"});
}

TEST_CASE("two shards merge into one report with every number recomputed") {
  // Shard 2 first: the order of the inputs does not matter.
  std::vector<merge::Part> parts;
  parts.push_back(part(2, 2, {task("c", {true, true}), task("a", {true, false})}, "2026-01-01T00:00:05Z",
                       "2026-01-01T00:00:50Z"));
  parts.push_back(part(1, 2, {task("b", {false, false})}));
  merge::Merged m = merge::merge(std::move(parts), {});
  const auto& r = m.report;
  CHECK(m.shard_count == 2);
  CHECK(m.missing.empty());
  REQUIRE(r.tasks.size() == 3);
  CHECK(r.tasks[0].id == "a");
  CHECK(r.tasks[1].id == "b");
  CHECK(r.tasks[2].id == "c");
  CHECK(r.config.as_object().if_contains("shard") == nullptr);
  CHECK(r.config.as_object().at("runs").as_int64() == 2);
  CHECK(r.started_at == "2026-01-01T00:00:05Z");  // the earliest start
  CHECK(r.finished_at == "2026-01-01T00:01:00Z"); // the latest finish
  CHECK(r.complete);
  CHECK(r.task_stats.size() == 3);
  // Runs passed: a 1 of 2, b 0 of 2, c 2 of 2 → 3 / 6 = 0.5.
  CHECK(r.stats.overall.success_rate == doctest::Approx(0.5));
  // Mixed outcomes: only a, 1 of 3 tasks → 33.33pp.
  CHECK(r.stats.consistency_gap_pp == doctest::Approx(100.0 / 3));
  CHECK(r.stats.total_runs == 6);
}

TEST_CASE("an empty shard merges like any other") {
  std::vector<merge::Part> parts;
  parts.push_back(part(1, 3, {task("a", {true, true})}));
  parts.push_back(part(2, 3, {}));
  parts.push_back(part(3, 3, {task("b", {false, true})}));
  merge::Merged m = merge::merge(std::move(parts), {});
  CHECK(m.report.tasks.size() == 2);
  // 3 of 4 runs passed.
  CHECK(m.report.stats.overall.success_rate == doctest::Approx(0.75));
}

TEST_CASE("mismatched parts are refused naming both files") {
  SUBCASE("different suite") {
    auto b = part(2, 2, {task("b", {true})});
    b.report.suite.sha256 = std::string(64, 'f');
    std::vector<merge::Part> parts{part(1, 2, {task("a", {true})}), b};
    const std::string m = refusal(parts);
    CHECK(has(m, "different suites"));
    CHECK(has(m, "shard-1.json"));
    CHECK(has(m, "shard-2.json"));
  }
  SUBCASE("different config apart from shard") {
    auto b = part(2, 2, {task("b", {true})});
    b.report.config.as_object()["model"].as_object()["seed"] = 8;
    const std::string m = refusal({part(1, 2, {task("a", {true})}), b});
    CHECK(has(m, "different configurations (model.seed)"));
    CHECK(has(m, "shard-2.json"));
  }
  SUBCASE("different gate version") {
    auto b = part(2, 2, {task("b", {true})});
    b.report.gate_version = "0.2.0";
    CHECK(has(refusal({part(1, 2, {task("a", {true})}), b}), "different gate versions"));
  }
  SUBCASE("different shard counts") {
    CHECK(has(refusal({part(1, 2, {task("a", {true})}), part(2, 3, {task("b", {true})})}),
              "different shard counts: 2 vs 3"));
  }
  SUBCASE("the same shard twice") {
    auto again = part(1, 2, {task("b", {true})});
    again.file = "copy.json";
    const std::string m = refusal({part(1, 2, {task("a", {true})}), again, part(2, 2, {})});
    CHECK(has(m, "shard 1/2 given twice (shard-1.json and copy.json)"));
  }
  SUBCASE("a task in two reports") {
    const std::string m = refusal({part(1, 2, {task("a", {true})}), part(2, 2, {task("a", {true})})});
    CHECK(has(m, "task \"a\" is in two reports (shard-1.json and shard-2.json)"));
  }
  SUBCASE("a report that is not a shard") {
    auto whole = part(1, 2, {task("a", {true})});
    whole.report.config.as_object().erase("shard");
    whole.file = "whole.json";
    CHECK(has(refusal({whole}), "whole.json is not a partial report"));
  }
  SUBCASE("a malformed shard member") {
    auto bad = part(1, 2, {});
    bad.report.config.as_object()["shard"] = {{"index", 3}, {"count", 2}};
    CHECK(has(refusal({bad}), "config.shard: expected"));
  }
}

TEST_CASE("missing shards are an error unless allowed, and then the merge is incomplete") {
  auto parts = [] {
    return std::vector<merge::Part>{part(2, 4, {task("a", {true})}), part(4, 4, {task("b", {true})})};
  };
  CHECK(has(refusal(parts()), "missing shard(s) 1, 3 of 4"));
  merge::Options o;
  o.allow_partial = true;
  merge::Merged m = merge::merge(parts(), o);
  CHECK(m.missing == std::vector<int>{1, 3});
  CHECK_FALSE(m.report.complete);
  CHECK(has(m.report.incomplete_reason, "shard(s) 1, 3 of 4 missing"));
}

TEST_CASE("an incomplete part makes the merge incomplete, naming the file") {
  auto b = part(2, 2, {task("b", {true})});
  b.report.complete = false;
  b.report.incomplete_reason = "interrupted";
  merge::Merged m = merge::merge({part(1, 2, {task("a", {true})}), b}, {});
  CHECK_FALSE(m.report.complete);
  CHECK(m.report.incomplete_reason == "shard-2.json: interrupted");
}

TEST_CASE("each part's shared run route stays with its runs") {
  // As read from files: runs with an empty route use the part's runs_route.
  auto a = part(1, 2, {task("a", {true})});
  a.report.runs_route = {{"model", "m"}, {"concurrency", "1"}};
  auto b = part(2, 2, {task("b", {true})});
  b.report.runs_route = {{"model", "m"}, {"concurrency", "8"}};
  merge::Merged m = merge::merge({a, b}, {});
  REQUIRE(m.report.tasks.size() == 2);
  CHECK(report::route_of(m.report, m.report.tasks[0].runs[0]).at("concurrency") == "1");
  CHECK(report::route_of(m.report, m.report.tasks[1].runs[0]).at("concurrency") == "8");
}

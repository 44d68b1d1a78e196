// End-to-end: `gate run --shard i/n` partial reports and `gate merge` on the
// demo suite (replay-only: no network).
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

// Removes the fields that legitimately differ between two runs of the same
// evaluation: when it ran, and how long the model took.
void drop_timing(boost::json::value& v) {
  if (auto* o = v.if_object()) {
    for (const char* k : {"started_at", "finished_at"})
      o->erase(k);
    std::vector<std::string> latency;
    for (auto& kv : *o)
      if (std::string_view(kv.key()).find("latency") != std::string_view::npos)
        latency.emplace_back(kv.key());
    for (const auto& k : latency)
      o->erase(k);
    for (auto& kv : *o)
      drop_timing(kv.value());
  } else if (auto* a = v.if_array()) {
    for (auto& x : *a)
      drop_timing(x);
  }
}

Result run_shard(const fs::path& dir, const fs::path& config, const std::string& shard,
                 std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"run",
                                "--config",
                                config.string(),
                                "--shard",
                                shard,
                                "--out",
                                "shard-" + shard.substr(0, shard.find('/')),
                                "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_gate(args, dir);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("four shards merged equal one unsharded run, apart from timing") {
  TempDir tmp;
  const fs::path config = copy_demo(tmp.path());
  Result whole = run_gate({"run", "--config", config.string(), "--out", "whole", "--quiet"}, tmp.path());
  REQUIRE(whole.exit_code == 0);
  std::vector<std::string> parts;
  std::size_t tasks = 0;
  for (int i = 1; i <= 4; ++i) {
    Result r = run_shard(tmp.path(), config, std::to_string(i) + "/4");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const fs::path part = tmp.path() / ("shard-" + std::to_string(i)) / "report.json";
    auto v = read_json(part);
    CHECK(v.at("config").at("shard").at("index").as_int64() == i);
    CHECK(v.at("config").at("shard").at("count").as_int64() == 4);
    tasks += v.at("tasks").as_array().size();
    parts.push_back(part.string());
  }
  CHECK(tasks == 44); // every demo task in exactly one shard

  // Inputs in any order.
  std::vector<std::string> args{"merge", "--out", "merged.json", parts[2], parts[0], parts[3], parts[1]};
  Result m = run_gate(args, tmp.path());
  INFO(m.out << m.err);
  REQUIRE(m.exit_code == 0);
  CHECK(has(m.out, "merged 4 of 4 shards of demo v2: 44 tasks"));
  auto merged = read_json(tmp.path() / "merged.json");
  auto single = read_json(tmp.path() / "whole" / "report.json");
  CHECK(merged.at("config").as_object().if_contains("shard") == nullptr);
  drop_timing(merged);
  drop_timing(single);
  CHECK(merged == single);

  // The merged report is judged like any other.
  Result c = run_gate({"compare", "--baseline", (source_dir() / "baselines" / "demo.json").string(),
                       "--current", "merged.json"},
                      tmp.path());
  CHECK(c.exit_code == 0);
}

TEST_CASE("a shard that selects no task writes a valid empty partial report") {
  TempDir tmp;
  const fs::path config = copy_demo(tmp.path());
  const std::string id = "cls-account-password";
  Result one = run_shard(tmp.path(), config, "1/2", {"--filter", id});
  Result two = run_shard(tmp.path(), config, "2/2", {"--filter", id});
  INFO(one.err << two.err);
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  const std::size_t n1 = read_json(tmp.path() / "shard-1" / "report.json").at("tasks").as_array().size();
  const std::size_t n2 = read_json(tmp.path() / "shard-2" / "report.json").at("tasks").as_array().size();
  CHECK(n1 + n2 == 1);
  CHECK(n1 * n2 == 0);
  Result m = run_gate({"merge", "--out", "m.json", "shard-1/report.json", "shard-2/report.json"}, tmp.path());
  CHECK(m.exit_code == 0);
  CHECK(read_json(tmp.path() / "m.json").at("tasks").as_array().size() == 1);
  // A filter that matches nothing is still an error, sharded or not.
  Result none = run_shard(tmp.path(), config, "1/2", {"--filter", "no-such-task"});
  CHECK(none.exit_code == 2);
}

TEST_CASE("mismatched, overlapping and missing shards are refused with exit 2") {
  TempDir tmp;
  const fs::path config = copy_demo(tmp.path());
  for (const char* s : {"1/3", "2/3", "3/3"})
    REQUIRE(run_shard(tmp.path(), config, s).exit_code == 0);
  auto merge = [&](std::vector<std::string> files, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"merge", "--out", "m.json"};
    args.insert(args.end(), files.begin(), files.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return run_gate(args, tmp.path());
  };
  const std::string s1 = "shard-1/report.json", s2 = "shard-2/report.json", s3 = "shard-3/report.json";

  SUBCASE("missing shard, unless --allow-partial") {
    Result r = merge({s1, s3});
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "missing shard(s) 2 of 3"));
    CHECK_FALSE(fs::exists(tmp.path() / "m.json"));
    Result partial = merge({s1, s3}, {"--allow-partial"});
    CHECK(partial.exit_code == 0);
    CHECK(has(partial.err, "marked incomplete"));
    CHECK(read_json(tmp.path() / "m.json").at("complete").as_bool() == false);
  }
  SUBCASE("the same shard twice") {
    fs::copy_file(tmp.path() / s2, tmp.path() / "copy.json");
    Result r = merge({s1, s2, s3, "copy.json"});
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "shard 2/3 given twice (" + s2 + " and copy.json)"));
  }
  SUBCASE("a different suite version") {
    std::string text = slurp(tmp.path() / s2);
    const std::string from = "\"version\":\"v2\"";
    REQUIRE(has(text, from));
    text.replace(text.find(from), from.size(), "\"version\":\"v3\"");
    spit(tmp.path() / s2, text);
    Result r = merge({s1, s2, s3});
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "different suites"));
    CHECK(has(r.err, s2));
  }
  SUBCASE("a different configuration") {
    REQUIRE(run_shard(tmp.path(), config, "2/3", {"--runs", "2"}).exit_code == 0);
    Result r = merge({s1, s2, s3});
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "different configurations (runs)"));
  }
  SUBCASE("different shard counts") {
    REQUIRE(run_shard(tmp.path(), config, "2/4").exit_code == 0);
    Result r = merge({s1, s2, s3});
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "different shard counts: 3 vs 4"));
  }
  SUBCASE("an unsharded report") {
    REQUIRE(
        run_gate({"run", "--config", config.string(), "--out", "whole", "--quiet"}, tmp.path()).exit_code ==
        0);
    Result r = merge({s1, "whole/report.json"});
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "whole/report.json is not a partial report"));
  }
}

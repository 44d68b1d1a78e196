// run/runner: run::execute's loop over a small suite with a fake
// ModelClient (tests/unit/fake_model_client.hpp), then run::assemble.
#include <doctest.h>

#include <gate/cache/store.hpp>
#include <gate/run/assemble.hpp>
#include <gate/run/request.hpp>
#include <gate/run/runner.hpp>

#include "../support/temp_dir.hpp"
#include "fake_model_client.hpp"

using gate::testing::FakeModelClient;
using gate::testing::openai_answer;

namespace {

gate::check::Check contains(const std::string& what) {
  gate::check::Check c;
  c.type = gate::check::Type::contains;
  c.label = "contains";
  c.values = {what};
  return c;
}

// Two tasks: "add" passes when the answer holds 4, "capital" when it holds
// Paris.
gate::suite::Suite two_tasks() {
  gate::suite::Suite s;
  s.name = "runner-unit";
  s.version = "v1";
  gate::suite::Case add;
  add.id = "add";
  add.input = {{"user", "what is 2+2?"}};
  add.checks = {contains("4")};
  gate::suite::Case capital;
  capital.id = "capital";
  capital.input = {{"user", "capital of France?"}};
  capital.checks = {contains("Paris")};
  s.cases = {capital, add}; // out of id order: assemble sorts
  return s;
}

struct Harness {
  gate::testing::TempDir tmp;
  gate::suite::Suite suite = two_tasks();
  gate::cache::Store store{tmp.path() / "cache"};
  FakeModelClient client;

  gate::run::Outcome run(const gate::config::Config& cfg) {
    gate::run::Inputs in;
    in.suite = &suite;
    for (const auto& c : suite.cases)
      in.cases.push_back(&c);
    in.config = &cfg;
    in.store = &store;
    in.client = [this]() -> gate::model::ModelClient& { return client; };
    return gate::run::execute(in, {});
  }
  gate::config::Config config(gate::config::CacheMode mode) {
    return gate::testing::fake_client_config(tmp.path() / "cache", mode, 2);
  }
};

void script_answers(FakeModelClient& c) {
  c.answer("2+2", openai_answer("It is 4."));
  c.answer("France", openai_answer("Lyon, I think."));
}

} // namespace

TEST_CASE("record: every run is a fresh call, answered, scored and stored under its replica's key") {
  Harness h;
  script_answers(h.client);
  const auto cfg = h.config(gate::config::CacheMode::record);
  gate::run::Outcome out = h.run(cfg);
  CHECK(out.complete);
  CHECK(out.fatal.empty());
  CHECK(h.client.calls() == 4); // 2 tasks x 2 runs
  CHECK(h.client.workers() == 1);
  REQUIRE(out.tasks.size() == 2);
  CHECK(out.tasks[0].id == "capital"); // case order
  for (const auto& t : out.tasks) {
    REQUIRE(t.runs.size() == 2);
    for (int r = 0; r < 2; ++r) {
      const auto& run = t.runs[static_cast<std::size_t>(r)];
      CHECK(run.index == r);
      CHECK_FALSE(run.cache_hit);
      CHECK(run.error.empty());
      CHECK(run.passed == (t.id == "add"));
      CHECK(run.prompt_tokens == 3);
      CHECK(run.completion_tokens == 2);
    }
  }
  CHECK(out.tasks[1].runs[0].answer == "It is 4.");
  CHECK(h.store.stats().entries == 4);
  // The key of "add" run 1 is make_key over its prepared request, replica 1.
  const auto p = gate::run::prepare(h.suite.cases[1], cfg);
  const auto found = h.store.get(gate::cache::make_key(p.call.provider, p.call.path, p.hashed_body, 1));
  REQUIRE(found.entry);
  CHECK(found.entry->replica == 1);
  CHECK(found.entry->body.find("It is 4.") != std::string::npos);
}

TEST_CASE("replay after record: every run is a hit with the recorded result and no call is made") {
  Harness h;
  script_answers(h.client);
  h.run(h.config(gate::config::CacheMode::record));
  FakeModelClient silent; // would answer every call with a 404
  gate::run::Inputs in;
  const auto cfg = h.config(gate::config::CacheMode::replay);
  in.suite = &h.suite;
  for (const auto& c : h.suite.cases)
    in.cases.push_back(&c);
  in.config = &cfg;
  in.store = &h.store;
  in.client = [&silent]() -> gate::model::ModelClient& { return silent; };
  gate::run::Outcome out = gate::run::execute(in, {});
  CHECK(silent.calls() == 0);
  CHECK(out.complete);
  for (const auto& t : out.tasks)
    for (const auto& run : t.runs) {
      CHECK(run.cache_hit);
      CHECK(run.passed == (t.id == "add"));
      CHECK(run.attempts == 1);
      CHECK(run.attempt_log.empty()); // no attempt was made
    }
}

TEST_CASE("replay-only: a missing entry is a miss named by task, run and key; the others replay; no call") {
  Harness h;
  script_answers(h.client);
  const auto record = h.config(gate::config::CacheMode::record);
  h.run(record);
  const auto p = gate::run::prepare(h.suite.cases[0], record); // capital
  const std::string gone = gate::cache::make_key(p.call.provider, p.call.path, p.hashed_body, 1);
  REQUIRE(h.store.remove(gone));
  const std::size_t before = h.client.calls();
  gate::run::Outcome out = h.run(h.config(gate::config::CacheMode::replay_only));
  CHECK(h.client.calls() == before);
  REQUIRE(out.misses.size() == 1);
  CHECK(out.misses[0].task_id == "capital");
  CHECK(out.misses[0].run == 1);
  CHECK(out.misses[0].key == gone);
  CHECK(out.tasks[0].runs[1].error == "cache_miss");
  CHECK_FALSE(out.tasks[0].runs[1].passed);
  CHECK(out.tasks[0].runs[0].cache_hit);
  CHECK(out.tasks[1].runs[1].cache_hit);
}

TEST_CASE("retries are surfaced as the client reports them: attempts, the log and the whole chain's tokens") {
  Harness h;
  gate::model::ApiResponse retried = openai_answer("4", 10, 1);
  // Two 503s before the answer; the second reported usage of its own.
  retried.attempt_log = {{503, "server", 0, 5, std::nullopt},
                         {503, "server", 250, 6, gate::model::Usage{7, 2}},
                         {200, "", 500, 12, gate::model::Usage{10, 1}}};
  h.client.answer("2+2", retried, 3);
  h.client.answer("France", openai_answer("Paris"));
  gate::run::Outcome out = h.run(h.config(gate::config::CacheMode::replay));
  const auto& run = out.tasks[1].runs[0];
  CHECK(run.attempts == 3);
  REQUIRE(run.attempt_log.size() == 3);
  CHECK(run.attempt_log[0].status == 503);
  CHECK(run.attempt_log[1].wait_ms == 250);
  CHECK(run.attempt_log[1].prompt_tokens == 7);
  // 10 + 7 prompt and 1 + 2 completion tokens: the retried attempt's count.
  CHECK(run.prompt_tokens == 17);
  CHECK(run.completion_tokens == 3);
  CHECK(run.passed);
  CHECK(out.tasks[0].runs[0].attempts == 1);
}

TEST_CASE("apply_ignore: the ignored parts are not hashed, so a changed ignored field still replays") {
  CHECK(gate::run::apply_ignore(R"({"a":1,"b":{"c":2,"d":3}})", {"/b/c", "/missing"}) ==
        R"({"a":1,"b":{"d":3}})");
  Harness h;
  script_answers(h.client);
  auto record = h.config(gate::config::CacheMode::record);
  record.model.temperature = 0.2;
  record.cache.ignore = {"/temperature"};
  h.run(record);
  CHECK(h.client.calls() == 4);
  auto replay = h.config(gate::config::CacheMode::replay_only);
  replay.model.temperature = 0.9;
  replay.cache.ignore = {"/temperature"};
  gate::run::Outcome out = h.run(replay);
  CHECK(out.misses.empty());
  CHECK(h.client.calls() == 4);
  // Without the rule the temperature is part of the key: every run misses.
  replay.cache.ignore.clear();
  CHECK(h.run(replay).misses.size() == 4);
}

TEST_CASE("a 401 ends the run as fatal, naming the key's alias and variable, and nothing is recorded") {
  Harness h;
  h.client.answer("", gate::testing::openai_error(401, "Incorrect API key provided"));
  auto cfg = h.config(gate::config::CacheMode::replay);
  cfg.model.key_alias = "unit-alias";
  cfg.model.api_key_env = "UNIT_KEY_VAR";
  gate::run::Outcome out = h.run(cfg);
  CHECK_FALSE(out.complete);
  CHECK(out.fatal_code == gate::Exit::cannot_run);
  CHECK(out.fatal.find("upstream auth error") != std::string::npos);
  CHECK(out.fatal.find("key alias unit-alias, key from $UNIT_KEY_VAR") != std::string::npos);
  CHECK(h.client.calls() == 1); // concurrency 1: the abort stops the next
  CHECK(h.store.stats().entries == 0);
}

TEST_CASE("assemble: tasks sorted by id, each task's counts and the suite's success rate") {
  Harness h;
  script_answers(h.client);
  const auto cfg = h.config(gate::config::CacheMode::record);
  gate::run::Outcome out = h.run(cfg);
  gate::report::Report r =
      gate::run::assemble(std::move(out), h.suite, cfg, "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z");
  REQUIRE(r.tasks.size() == 2);
  CHECK(r.tasks[0].id == "add");
  CHECK(r.tasks[1].id == "capital");
  REQUIRE(r.task_stats.size() == 2);
  // add: 2 of 2 runs passed; capital: 0 of 2.
  CHECK(r.task_stats[0].n == 2);
  CHECK(r.task_stats[0].c == 2);
  CHECK(r.task_stats[1].n == 2);
  CHECK(r.task_stats[1].c == 0);
  // success = Σc/Σn = 2/4.
  CHECK(r.stats.overall.runs == 4);
  CHECK(r.stats.overall.passed == 2);
  CHECK(r.stats.overall.success_rate == doctest::Approx(0.5));
  CHECK(r.complete);
  CHECK(r.suite.name == "runner-unit");
}

TEST_CASE(
    "latency_ms: a measured latency is checked, and replayed as recorded; an unmeasured one is errored") {
  Harness h;
  gate::check::Check fast;
  fast.type = gate::check::Type::latency_ms;
  fast.label = "latency_ms";
  fast.max = 100;
  for (auto& c : h.suite.cases)
    c.checks = {fast};
  h.client.answer("2+2", openai_answer("It is 4.")); // 12 ms
  auto unmeasured = openai_answer("Paris.");
  unmeasured.latency_ms = 0;
  h.client.answer("France", unmeasured);
  gate::run::Outcome rec = h.run(h.config(gate::config::CacheMode::record));
  REQUIRE(rec.tasks.size() == 2);
  const auto& capital = rec.tasks[0].runs[0];
  CHECK_FALSE(capital.passed);
  CHECK(capital.error == "check");
  REQUIRE(capital.checks.size() == 1);
  CHECK(capital.checks[0].detail.find("no latency") != std::string::npos);
  CHECK(rec.tasks[1].runs[0].passed);
  // Replayed, the recorded 12 ms is what the check sees.
  gate::run::Outcome rep = h.run(h.config(gate::config::CacheMode::replay_only));
  CHECK(rep.tasks[1].runs[0].cache_hit);
  CHECK(rep.tasks[1].runs[0].passed);
}

TEST_CASE("cost check: the model call's tokens at the configured price; replayed as recorded; unpriced is "
          "errored") {
  Harness h;
  gate::check::Check budget;
  budget.type = gate::check::Type::cost;
  budget.label = "cost";
  // 3 prompt and 2 completion tokens at $1000 and $2000 per million:
  // 0.003 + 0.004 = $0.007 a run.
  budget.max = 0.007;
  h.suite.cases[1].checks = {budget}; // add
  budget.max = 0.0069;
  h.suite.cases[0].checks = {budget}; // capital
  script_answers(h.client);
  auto cfg = h.config(gate::config::CacheMode::record);
  cfg.pricing = R"({"m":{"completion":2000,"prompt":1000}})";
  gate::run::Outcome rec = h.run(cfg);
  REQUIRE(rec.tasks.size() == 2);
  CHECK(rec.tasks[1].runs[0].passed);
  CHECK_FALSE(rec.tasks[0].runs[0].passed);
  CHECK(rec.tasks[0].runs[0].error.empty()); // failed, not errored
  CHECK(rec.tasks[0].runs[0].checks[0].detail == "expected a cost of at most 0.0069 USD; it was 0.007 USD");
  cfg.cache.mode = gate::config::CacheMode::replay_only;
  gate::run::Outcome rep = h.run(cfg);
  CHECK(rep.tasks[1].runs[0].cache_hit);
  CHECK(rep.tasks[1].runs[0].passed);
  CHECK_FALSE(rep.tasks[0].runs[0].passed);
  // The report: capital and add each paid 2 × $0.007 when recorded; the
  // replay paid nothing and keeps the recorded $0.028.
  gate::report::Report a = gate::run::assemble(std::move(rec), h.suite, cfg, "t0", "t1");
  CHECK(a.task_stats[0].cost_usd.value() == doctest::Approx(0.014));
  CHECK(a.stats.cost_usd.value() == doctest::Approx(0.028));
  CHECK(a.stats.cached_cost_usd.value() == 0.0);
  gate::report::Report b = gate::run::assemble(std::move(rep), h.suite, cfg, "t0", "t1");
  CHECK(b.stats.cost_usd.value() == 0.0);
  CHECK(b.stats.cached_cost_usd.value() == doctest::Approx(0.028));
  // A model without a price: the check cannot say, so the run is errored.
  cfg.pricing = R"({"other":{"completion":1,"prompt":1}})";
  gate::run::Outcome unpriced = h.run(cfg);
  CHECK(unpriced.tasks[1].runs[0].error == "check");
  CHECK(unpriced.tasks[1].runs[0].checks[0].detail.find("no cost") != std::string::npos);
}

TEST_CASE("a model task's tool calls are its runs' trajectory: the consistency numbers are computed for it") {
  Harness h;
  // "add" calls search(q=a) in runs 0 and 1 and search(q=b), fetch() in
  // run 2; "capital" calls no tool.
  h.client.answer_in_turn("2+2",
                          {gate::testing::openai_tool_calls({{"search", R"({"q":"a"})"}}),
                           gate::testing::openai_tool_calls({{"search", R"({"q": "a"})"}}),
                           gate::testing::openai_tool_calls({{"search", R"({"q":"b"})"}, {"fetch", "{}"}})});
  h.client.answer("France", openai_answer("Paris"));
  auto cfg = gate::testing::fake_client_config(h.tmp.path() / "cache", gate::config::CacheMode::record, 3);
  gate::report::Report r = gate::run::assemble(h.run(cfg), h.suite, cfg, "t0", "t1");
  REQUIRE(r.tasks[0].id == "add");
  const auto& add = r.task_stats[0];
  CHECK(add.has_tool_calls);
  CHECK_FALSE(add.trajectory_consistent);
  // Sets {search:a}, {search:a} (the same canonical arguments), {search:b,
  // fetch}: Jaccard 1, 0, 0 over the three pairs, mean 1/3.
  CHECK(add.trajectory_similarity.value() == doctest::Approx(1.0 / 3.0));
  CHECK(add.first_divergence == 0); // the modal sequence [search:a] differs at step 0
  CHECK_FALSE(r.task_stats[1].has_tool_calls);
  // Over the one task with tool calls: 1 of 1 inconsistent.
  CHECK(r.stats.trajectory_inconsistency_pp.value() == doctest::Approx(100.0));
  CHECK(r.stats.trajectory_similarity.value() == doctest::Approx(1.0 / 3.0));
  CHECK(r.stats.first_divergence_histogram.at(0) == 1);
}

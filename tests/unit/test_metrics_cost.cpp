// metrics/cost: METRICS.md "Cost", worked by hand.
#include <doctest.h>

#include <string>
#include <vector>

#include <gate/metrics/summary.hpp>

using namespace gate::metrics;
using doctest::Approx;
using gate::results::Run;
using gate::results::Task;

namespace {

// gpt-x: $2 per million prompt tokens, $8 per million completion tokens;
// judge-y: $1 and $4.
Pricing prices() {
  Pricing p;
  p.models["gpt-x"] = {2.0, 8.0};
  p.models["judge-y"] = {1.0, 4.0};
  p.judge_model = "judge-y";
  return p;
}

Run run(int index, std::int64_t prompt, std::int64_t completion, bool hit = false) {
  Run r;
  r.index = index;
  r.passed = true;
  r.prompt_tokens = prompt;
  r.completion_tokens = completion;
  r.cache_hit = hit;
  r.route = {{"model", "gpt-x"}};
  return r;
}

Options with_prices() {
  Options o;
  o.pricing = prices();
  return o;
}

} // namespace

TEST_CASE("tokens_cost: tokens times USD per million") {
  // 1000 · 2 / 1e6 + 500 · 8 / 1e6 = 0.002 + 0.004 = 0.006
  CHECK(tokens_cost({2.0, 8.0}, 1000, 500) == Approx(0.006));
  CHECK(tokens_cost({2.0, 8.0}, 0, 0) == 0.0);
}

TEST_CASE("run_cost: the model's tokens at its price, the judge's at the judge's; n/a when unknown") {
  const Pricing p = prices();
  Run r = run(0, 1000, 500);
  CHECK(run_cost(r, "gpt-x", p).value() == Approx(0.006));
  // 300 of the prompt and 100 of the completion tokens were the judge's:
  // 700 · 2 + 400 · 8 = 4600 µ$ for the model, 300 · 1 + 100 · 4 = 700 µ$
  // for the judge: 0.0053.
  r.judge_calls = 1;
  r.judge_prompt_tokens = 300;
  r.judge_completion_tokens = 100;
  CHECK(run_cost(r, "gpt-x", p).value() == Approx(0.0053));
  // A judge without a price: the whole run is n/a, not the model's part.
  Pricing no_judge = p;
  no_judge.models.erase("judge-y");
  CHECK_FALSE(run_cost(r, "gpt-x", no_judge).has_value());
  // A model without a row, or a run whose usage nobody reported: n/a, never 0.
  CHECK_FALSE(run_cost(r, "other", p).has_value());
  Run unknown = run(0, 0, 0);
  unknown.usage_known = false;
  CHECK_FALSE(run_cost(unknown, "gpt-x", p).has_value());
}

TEST_CASE("prompt-cache tokens at their own prices: read and written parts of the prompt") {
  // OpenAI (gpt-4o's rates): 2000 prompt tokens, 1536 of them served by the
  // cache, 100 completion tokens; $2.50 prompt, $1.25 cached, $10 completion.
  // 464 · 2.5 + 1536 · 1.25 + 100 · 10 = 1160 + 1920 + 1000 = 4080 µ$;
  // at the prompt price alone 2000 · 2.5 + 1000 = 6000 µ$, 47% too high.
  Pricing p;
  p.models["gpt-4o"] = {2.5, 10.0, 1.25};
  Run r = run(0, 2000, 100);
  r.route = {{"model", "gpt-4o"}};
  r.cache_read_tokens = 1536;
  CHECK(run_cost(r, "gpt-4o", p).value() == Approx(0.004080));
  // Anthropic (Sonnet's rates): input 50 + cache read 10,000 + written 0 =
  // 10,050 prompt tokens, 200 completion; $3 prompt, $0.30 read, $3.75
  // write, $15 completion: 50 · 3 + 10000 · 0.3 + 200 · 15 = 6150 µ$;
  // at the prompt price alone 10050 · 3 + 3000 = 33150 µ$, 5.4× too high.
  p.models["claude"] = {3.0, 15.0, 0.30, 3.75};
  Run a = run(0, 10050, 200);
  a.cache_read_tokens = 10000;
  a.cache_write_tokens = 0;
  CHECK(run_cost(a, "claude", p).value() == Approx(0.006150));
  // The first call fills the cache: 50 + 10,000 written at $3.75:
  // 50 · 3 + 10000 · 3.75 + 200 · 15 = 150 + 37500 + 3000 = 40650 µ$.
  a.cache_read_tokens = 0;
  a.cache_write_tokens = 10000;
  CHECK(run_cost(a, "claude", p).value() == Approx(0.040650));
  // A row that prices a part whose count the provider did not report: n/a.
  Run unreported = run(0, 2000, 100);
  CHECK_FALSE(run_cost(unreported, "gpt-4o", p).has_value());
  // A row without cache prices: every prompt token at the prompt price, counts or not.
  p.models["plain"] = {2.5, 10.0};
  CHECK(run_cost(r, "plain", p).value() == Approx(0.006000));
  CHECK(run_cost(unreported, "plain", p).value() == Approx(0.006000));
}

TEST_CASE("task and suite cost: fresh runs are paid, replayed ones cost what they did when recorded") {
  // Task a: a fresh run (1000, 500) = 0.006 paid, a hit (2000, 0) = 0.004
  // recorded, an errored run (left out, however many tokens it has).
  Task a;
  a.id = "a";
  a.runs = {run(0, 1000, 500), run(1, 2000, 0, true), run(2, 9000, 9000)};
  a.runs[2].error = "timeout";
  a.runs[2].passed = false;
  // Task b: two hits (500, 250) = 0.001 + 0.002 = 0.003 each: paid 0.
  Task b;
  b.id = "b";
  b.runs = {run(0, 500, 250, true), run(1, 500, 250, true)};
  const Options o = with_prices();
  const std::vector<Task> tasks = {a, b};
  const std::vector<TaskStats> per = {task_stats(a, o), task_stats(b, o)};
  CHECK(per[0].priced);
  CHECK(per[0].cost_usd.value() == Approx(0.006));
  CHECK(per[0].cached_cost_usd.value() == Approx(0.004));
  CHECK(per[1].cost_usd.value() == 0.0);
  CHECK(per[1].cached_cost_usd.value() == Approx(0.006));
  const SuiteStats s = suite_stats(tasks, per, o);
  CHECK(s.priced);
  CHECK(s.cost_usd.value() == Approx(0.006));
  CHECK(s.cached_cost_usd.value() == Approx(0.010));
}

TEST_CASE("cost is n/a when a summed run's is, when nothing was measured, and absent without pricing") {
  Task a;
  a.id = "a";
  a.runs = {run(0, 1000, 500), run(1, 1000, 500)};
  a.runs[1].usage_known = false; // a fresh run without usage: the paid sum is unknown
  Task unmeasured;
  unmeasured.id = "u";
  unmeasured.runs = {run(0, 10, 10)};
  unmeasured.runs[0].error = "rate_limit";
  const Options o = with_prices();
  const TaskStats ta = task_stats(a, o), tu = task_stats(unmeasured, o);
  CHECK_FALSE(ta.cost_usd.has_value());
  CHECK(ta.cached_cost_usd.value() == 0.0); // no replayed run: nothing recorded
  CHECK(tu.priced);
  CHECK_FALSE(tu.cost_usd.has_value());
  CHECK_FALSE(tu.cached_cost_usd.has_value());
  // The unmeasured task is left out; the n/a of task a carries to the suite.
  const SuiteStats s = suite_stats({a, unmeasured}, {ta, tu}, o);
  CHECK_FALSE(s.cost_usd.has_value());
  CHECK(s.cached_cost_usd.value() == 0.0);
  const SuiteStats only_unmeasured = suite_stats({unmeasured}, {tu}, o);
  CHECK(only_unmeasured.priced);
  CHECK_FALSE(only_unmeasured.cost_usd.has_value());

  // A run of a model that has no row.
  Task other = a;
  other.runs = {run(0, 1000, 500)};
  other.runs[0].route = {{"model", "unpriced"}};
  CHECK_FALSE(task_stats(other, o).cost_usd.has_value());

  // The route a run read from a report leaves empty is the shared one.
  Options shared = o;
  Task from_file = a;
  from_file.runs = {run(0, 1000, 500)};
  from_file.runs[0].route.clear();
  shared.routes.shared = {{"model", "gpt-x"}};
  CHECK(task_stats(from_file, shared).cost_usd.value() == Approx(0.006));

  // No pricing table: nothing priced, nothing written.
  const TaskStats none = task_stats(a, Options{});
  CHECK_FALSE(none.priced);
  CHECK_FALSE(none.cost_usd.has_value());
  CHECK_FALSE(suite_stats({a}, {none}, Options{}).priced);
}

TEST_CASE("a cost the harness recorded is the run's, pricing or not; one run without it makes the sum n/a") {
  // Task a: two measured runs that recorded 0.25 and 0.5 (their tokens
  // would price at 0.006 each: the record wins), one errored run (left
  // out). The user simulator's 0.01 and 0.02 are summed apart.
  Task a;
  a.id = "a";
  a.runs = {run(0, 1000, 500), run(1, 1000, 500), run(2, 9, 9)};
  gate::results::recorded(a.runs[0]).agent = 0.25;
  gate::results::recorded(a.runs[1]).agent = 0.5;
  gate::results::recorded(a.runs[0]).user = 0.01;
  gate::results::recorded(a.runs[1]).user = 0.02;
  a.runs[2].error = "exception";
  a.runs[2].passed = false;
  for (const Options& o : {Options{}, with_prices()}) {
    const TaskStats ta = task_stats(a, o);
    CHECK(ta.priced);
    CHECK(ta.recorded_cost);
    CHECK(ta.cost_usd.value() == Approx(0.75));
    CHECK(ta.user_costed);
    CHECK(ta.user_cost_usd.value() == Approx(0.03));
  }
  // Task b: one run recorded no cost. Without pricing it is n/a, and so is
  // the suite's sum; its user cost too.
  Task b;
  b.id = "b";
  b.runs = {run(0, 1000, 500), run(1, 1000, 500)};
  gate::results::recorded(b.runs[0]).agent = 0.1;
  const TaskStats ta = task_stats(a, Options{}), tb = task_stats(b, Options{});
  CHECK(tb.priced);
  CHECK_FALSE(tb.cost_usd.has_value());
  CHECK_FALSE(tb.user_costed);
  CHECK_FALSE(tb.user_cost_usd.has_value());
  const SuiteStats s = suite_stats({a, b}, {ta, tb}, Options{});
  CHECK(s.priced);
  CHECK(s.recorded_cost);
  CHECK_FALSE(s.cost_usd.has_value());
  CHECK(s.user_costed);
  CHECK_FALSE(s.user_cost_usd.has_value());
  // With pricing, b's unrecorded run is priced from its tokens: 0.1 + 0.006.
  const TaskStats priced_b = task_stats(b, with_prices());
  CHECK(priced_b.cost_usd.value() == Approx(0.106));
  const SuiteStats only_a = suite_stats({a}, {ta}, Options{});
  CHECK(only_a.cost_usd.value() == Approx(0.75));
  CHECK(only_a.user_cost_usd.value() == Approx(0.03));
  // Nothing recorded and no pricing: neither is written.
  const SuiteStats none = suite_stats({b}, {task_stats(b, Options{})}, Options{});
  CHECK(none.priced); // b's first run recorded one
  gate::results::recorded(b.runs[0]).agent.reset();
  const SuiteStats nothing = suite_stats({b}, {task_stats(b, Options{})}, Options{});
  CHECK_FALSE(nothing.priced);
  CHECK_FALSE(nothing.user_costed);
}

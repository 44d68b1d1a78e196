// The reply checks (finish reason, tool calls, latency) on hand-made replies.
#include <doctest.h>

#include <boost/json/parse.hpp>
#include <string>

#include <gate/check/check.hpp>
#include <gate/util/error.hpp>

using gate::check::Check;
using gate::check::evaluate;
using gate::check::Reply;
using gate::check::Result;

namespace {

Check mk(std::string_view spec) {
  return gate::check::parse(boost::json::parse(spec), std::nullopt, "c.jsonl:2");
}

Reply calls(std::vector<gate::check::ToolCall> tc) {
  Reply r;
  r.text = "";
  r.finish_reason = "tool_calls";
  r.tool_calls = std::move(tc);
  return r;
}

} // namespace

TEST_CASE("finish_reason: equals or not; absent is errored") {
  Reply r;
  r.text = "cut";
  r.finish_reason = "length";
  CHECK_FALSE(evaluate(mk(R"({"type": "finish_reason", "not": "length"})"), r).passed);
  CHECK(evaluate(mk(R"({"type": "finish_reason", "not": "length"})"), r).detail ==
        "expected the finish reason not to be \"length\"; it is \"length\"");
  CHECK(evaluate(mk(R"({"type": "finish_reason", "equals": "length"})"), r).passed);
  r.finish_reason = "stop";
  CHECK(evaluate(mk(R"({"type": "finish_reason", "not": "length"})"), r).passed);
  r.finish_reason.reset();
  const Result e = evaluate(mk(R"({"type": "finish_reason", "equals": "stop"})"), r);
  CHECK(e.errored);
  CHECK_FALSE(e.passed);
  CHECK_THROWS_AS(mk(R"({"type": "finish_reason", "equals": "stop", "not": "length"})"), gate::Error);
  CHECK_THROWS_AS(mk(R"({"type": "finish_reason"})"), gate::Error);
}

TEST_CASE("tool_called, with and without a count; no_tool_call") {
  const Reply r = calls({{"search", "{}"}, {"fetch", "{}"}, {"search", "{}"}});
  CHECK(evaluate(mk(R"({"type": "tool_called", "tool": "search"})"), r).passed);
  CHECK(evaluate(mk(R"({"type": "tool_called", "tool": "search", "count": 2})"), r).passed);
  Result x = evaluate(mk(R"({"type": "tool_called", "tool": "search", "count": 1})"), r);
  CHECK_FALSE(x.passed);
  CHECK(x.detail == "expected \"search\" to be called 1 time(s); the first response's calls were \"search\", "
                    "\"fetch\", \"search\"");
  CHECK(evaluate(mk(R"({"type": "tool_called", "tool": "book", "count": 0})"), r).passed);
  x = evaluate(mk(R"({"type": "tool_called", "tool": "book"})"), calls({}));
  CHECK(x.detail == "expected \"book\" to be called at least once; the first response's no tool calls");
  CHECK(evaluate(mk(R"({"type": "no_tool_call"})"), calls({})).passed);
  x = evaluate(mk(R"({"type": "no_tool_call"})"), r);
  CHECK_FALSE(x.passed);
  CHECK_THROWS_AS(mk(R"({"type": "tool_called", "tool": "a", "count": 1.5})"), gate::Error);
  // "name" labels the check, as on every type; the tool is "tool".
  CHECK(mk(R"({"type": "tool_called", "tool": "a", "name": "x"})").label == "tool_called:x");
}

TEST_CASE("tool_args: the first call of the name, through the json check's path conditions") {
  const Reply r =
      calls({{"get_weather", R"({"city":"Paris","days":3})"}, {"get_weather", R"({"city":"Rome"})"}});
  CHECK(evaluate(mk(R"({"type": "tool_args", "tool": "get_weather",
                        "paths": [{"path": "/city", "equals": "Paris"}, {"path": "/days", "min": 1, "max": 7}]})"),
                 r)
            .passed);
  Result x = evaluate(
      mk(R"({"type": "tool_args", "tool": "get_weather", "paths": [{"path": "/city", "equals": "Rome"}]})"),
      r);
  CHECK_FALSE(x.passed);
  CHECK(x.detail ==
        "the arguments of \"get_weather\": expected \"/city\" to equal \"Rome\"; it is \"Paris\"");
  x = evaluate(mk(R"({"type": "tool_args", "tool": "book", "paths": []})"), r);
  CHECK(x.detail ==
        "expected a call to \"book\"; the first response's calls were \"get_weather\", \"get_weather\"");
  x = evaluate(mk(R"({"type": "tool_args", "tool": "f"})"), calls({{"f", "{not json"}}));
  CHECK_FALSE(x.passed);
  CHECK(x.detail == "expected the arguments of \"f\" to be JSON; they are \"{not json\"");
}

TEST_CASE("tool_calls: a text check on the first response's calls as canonical JSON") {
  const Reply r = calls({{"get_weather", R"({"days":3,"city":"Paris"})"}, {"f", "{not json"}});
  // Arguments parsed (keys sorted), or kept as text when they are not JSON.
  CHECK(evaluate(mk(R"({"type": "tool_calls", "check": {"type": "equals", "value":
          "[{\"arguments\":{\"city\":\"Paris\",\"days\":3},\"name\":\"get_weather\"},{\"arguments\":\"{not json\",\"name\":\"f\"}]"}})"),
                 r)
            .passed);
  CHECK(evaluate(mk(R"({"type": "tool_calls", "check": {"type": "contains", "value": "Paris"}})"), r).passed);
  CHECK(evaluate(mk(R"({"type": "tool_calls", "check": {"type": "json"}})"), r).passed);
  Result x = evaluate(mk(R"({"type": "tool_calls", "check": {"type": "contains", "value": "Rome"}})"), r);
  CHECK_FALSE(x.passed);
  CHECK(x.detail.starts_with("expected to contain \"Rome\"; the tool calls' JSON "));
  // No call: the text is [].
  Reply none;
  none.text = "Paris";
  CHECK(evaluate(mk(R"({"type": "tool_calls", "check": {"type": "equals", "value": "[]"}})"), none).passed);
  // A reply check on text alone (an agent's stdout) is errored; the inner check must be a text check.
  CHECK(evaluate(mk(R"({"type": "tool_calls", "check": {"type": "json"}})"), "x", "stdout").errored);
  CHECK_THROWS_WITH_AS(mk(R"({"type": "tool_calls", "check": {"type": "no_tool_call"}})"),
                       doctest::Contains("\"check\" must be a text check"), gate::Error);
}

TEST_CASE("tool_order: equals, starts_with, contains in order") {
  const Reply r = calls({{"search", "{}"}, {"fetch", "{}"}, {"answer", "{}"}});
  CHECK(evaluate(mk(R"({"type": "tool_order", "equals": ["search", "fetch", "answer"]})"), r).passed);
  CHECK(evaluate(mk(R"({"type": "tool_order", "starts_with": ["search", "fetch"]})"), r).passed);
  CHECK(evaluate(mk(R"({"type": "tool_order", "contains": ["search", "answer"]})"), r).passed);
  const Result x = evaluate(mk(R"({"type": "tool_order", "contains": ["answer", "search"]})"), r);
  CHECK_FALSE(x.passed);
  CHECK(x.detail ==
        "expected tool calls to contain (in order) [answer, search]; they were [search, fetch, answer]");
  CHECK_THROWS_AS(mk(R"({"type": "tool_order", "equals": ["a"], "contains": ["a"]})"), gate::Error);
}

TEST_CASE("latency_ms: at most max; absent is errored; a reply check on text alone is errored") {
  Reply r;
  r.text = "ok";
  r.latency_ms = 1200.4;
  CHECK(evaluate(mk(R"({"type": "latency_ms", "max": 1200.4})"), r).passed);
  const Result x = evaluate(mk(R"({"type": "latency_ms", "max": 1000})"), r);
  CHECK_FALSE(x.passed);
  CHECK(x.detail == "expected a latency of at most 1000 ms; it was 1200 ms");
  r.latency_ms.reset();
  CHECK(evaluate(mk(R"({"type": "latency_ms", "max": 1000})"), r).errored);
  const Result s = evaluate(mk(R"({"type": "latency_ms", "max": 1000})"), "ok", "stdout");
  CHECK(s.errored);
  CHECK(s.detail == "a reply check needs a model's reply, not stdout");
  CHECK_THROWS_AS(mk(R"({"type": "latency_ms"})"), gate::Error);
}

TEST_CASE("cost: at most max_usd; above fails; an unknown cost is errored, not passed") {
  Reply r;
  r.text = "ok";
  // 1000 prompt tokens at $0.15/M and 500 completion tokens at $0.6/M:
  // 0.00015 + 0.0003 = 0.00045.
  r.cost_usd = 1000 * 0.15 / 1e6 + 500 * 0.6 / 1e6;
  CHECK(evaluate(mk(R"({"type": "cost", "max_usd": 0.0005})"), r).passed);
  const Result x = evaluate(mk(R"({"type": "cost", "max_usd": 0.0004})"), r);
  CHECK_FALSE(x.passed);
  CHECK_FALSE(x.errored);
  CHECK(x.detail == "expected a cost of at most 0.0004 USD; it was 0.00045 USD");
  r.cost_usd = 0.0;
  CHECK(evaluate(mk(R"({"type": "cost", "max_usd": 0})"), r).passed); // a free run is within any budget
  r.cost_usd.reset();
  const Result none = evaluate(mk(R"({"type": "cost", "max_usd": 1})"), r);
  CHECK(none.errored);
  CHECK_FALSE(none.passed);
  CHECK(evaluate(mk(R"({"type": "cost", "max_usd": 1})"), "ok", "stdout").errored);
  CHECK_THROWS_AS(mk(R"({"type": "cost"})"), gate::Error);
  CHECK_THROWS_AS(mk(R"({"type": "cost", "max_usd": -1})"), gate::Error);
  CHECK_THROWS_AS(mk(R"({"type": "cost", "max_usd": "1"})"), gate::Error);
  CHECK_THROWS_AS(mk(R"({"type": "cost", "max": 1})"), gate::Error);
}

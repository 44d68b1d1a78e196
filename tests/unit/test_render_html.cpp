#include <doctest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include <gate/render/html.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>
#include <gate/util/text.hpp>

using namespace gate;
using report::Report;

namespace {

const std::string k_script_break = "</script><script>alert(1)</script>";
const std::string k_img = "<img src=x onerror=alert(2)>";
const std::string k_comment = "<!-- <script>";
const std::string k_ls = "\xE2\x80\xA8";  // U+2028 LINE SEPARATOR
const std::string k_ps = "\xE2\x80\xA9";  // U+2029 PARAGRAPH SEPARATOR
const std::string k_rlo = "\xE2\x80\xAE"; // U+202E RIGHT-TO-LEFT OVERRIDE
const std::string k_canary = "sk-canary-html-0a1b2c3d4e5f6789";

const std::string k_evil_id = "t" + k_script_break + k_ls;
const std::string k_evil_answer = "a " + k_img + " & " + k_comment + k_ps + " ]]> \" ' end";

results::Run run(int index, bool passed, const std::string& answer) {
  results::Run r;
  r.index = index;
  r.passed = passed;
  r.answer = answer;
  r.checks = {{"contains 42", passed, passed ? "" : "got " + k_img}};
  r.prompt_tokens = 100 + index;
  r.completion_tokens = 20;
  r.latency_ms = 250.5;
  return r;
}

results::Task task(const std::string& id, const std::string& scenario, std::vector<bool> outcomes,
                   const std::string& answer = "42") {
  results::Task t{id, scenario, "", "", {}};
  for (std::size_t i = 0; i < outcomes.size(); ++i)
    t.runs.push_back(run(static_cast<int>(i), outcomes[i], outcomes[i] ? "42" : answer));
  return t;
}

metrics::TaskStats stats(std::int64_t c, std::int64_t n, std::int64_t errored = 0) {
  metrics::TaskStats s;
  s.c = c;
  s.n = n;
  s.errored = errored;
  s.mixed = c > 0 && c < n;
  s.outcome_consistent = !s.mixed;
  return s;
}

// Tasks sorted by id, as a report holds them; stats by hand, since
// rendering never computes.
Report make_report(std::vector<results::Task> tasks, std::vector<metrics::TaskStats> st) {
  Report r;
  r.gate_version = "0.1.0";
  r.suite = {"demo" + k_img, "v1", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"};
  r.finished_at = "2026-01-02T03:04:05Z";
  r.tasks = std::move(tasks);
  r.task_stats = std::move(st);
  return r;
}

Report baseline() {
  return make_report({task("calc-1", "math", {true, true, true}), task("calc-2", "math", {true, true, true}),
                      task("gone-1", "misc", {true, true, true}), task(k_evil_id, "math", {true, true, true}),
                      task("word-1", "lang", {true, false, true})},
                     {stats(3, 3), stats(3, 3), stats(3, 3), stats(3, 3), stats(2, 3)});
}

Report current() {
  results::Task err = task("word-1", "lang", {true, true, true});
  err.runs[2].passed = false;
  err.runs[2].error = "timeout";
  err.runs[2].error_message = "no answer within 60 s, key " + k_canary;
  return make_report({task("calc-1", "math", {true, true, true}),
                      task("calc-2", "math", {false, false, true}), task("new-1", "misc", {true}),
                      task(k_evil_id, "math", {false, false, false}, k_evil_answer), err},
                     {stats(3, 3), stats(1, 3), stats(1, 1), stats(0, 3), stats(2, 2, 1)});
}

compare::TaskDiff diff(const std::string& id, const std::string& scenario, std::int64_t c_b, std::int64_t n_b,
                       std::int64_t c_a, std::int64_t n_a) {
  compare::TaskDiff d;
  d.id = id;
  d.scenario = scenario;
  d.c_b = c_b;
  d.n_b = n_b;
  d.c_a = c_a;
  d.n_a = n_a;
  return d;
}

std::string str(const boost::json::value& v) { return std::string(v.as_string()); }

compare::Verdict verdict() {
  compare::Verdict v;
  v.status = gate::compare::Status::failed;
  v.exit = Exit::threshold;
  v.headline = "❌ gate failed: 1 task regressed: " + k_evil_id;
  v.reasons = {"1 task regressed: " + k_evil_id};
  v.warnings = {"routes differ: model: a → " + k_comment};
  v.baseline_suite = v.current_suite = {"demo", "v1", ""};
  compare::MetricRow m;
  m.key = "success_rate";
  m.name = "success rate";
  m.unit = "pp";
  m.value_unit = "%";
  m.baseline = 93.3;
  m.current = 50.0;
  m.delta = -43.3;
  m.threshold = 5.0;
  m.delta_interval = {-80.25, -6.5};
  m.p_value = 0.006;
  m.p_adjusted = 0.0123;
  m.noise_floor = 31.04;
  m.test = "sign-flip exact over 4 tasks";
  m.gated = m.crossed = m.significant = m.failed = true;
  compare::MetricRow t;
  t.key = "tokens_per_task";
  t.name = "tokens per task";
  t.unit = "%";
  t.value_unit = "tokens";
  t.higher_is_better = false;
  t.baseline = 120.25;
  t.current = 121;
  t.delta = 0.62;
  t.delta_interval = {-1, 2.25};
  v.metrics = {m, t};
  compare::TaskDiff evil = diff(k_evil_id, "math", 3, 3, 0, 3);
  evil.flipped = evil.regressed = true;
  evil.p_value = 0.05;
  evil.q_value = 0.1;
  compare::TaskDiff c2 = diff("calc-2", "math", 3, 3, 1, 3);
  c2.flipped = c2.became_flaky = true;
  compare::TaskDiff w1 = diff("word-1", "lang", 2, 3, 2, 2);
  w1.became_stable = true;
  v.tasks = {evil, c2, w1};
  v.added = {"new-1"};
  v.removed = {"gone-1"};
  v.paired = 4;
  v.regressed = 1;
  v.flips = 2;
  v.became_flaky = 1;
  v.became_stable = 1;
  v.scenarios = {{"lang", 2.0 / 3, 1.0, 1}, {"math", 1.0, 0.75, 3}};
  return v;
}

bool has(const std::string& doc, const std::string& part) { return doc.find(part) != std::string::npos; }

std::size_t count(const std::string& doc, const std::string& part) {
  std::size_t n = 0;
  for (auto p = doc.find(part); p != std::string::npos; p = doc.find(part, p + 1))
    ++n;
  return n;
}

std::string between(const std::string& doc, const std::string& open, const std::string& close) {
  auto a = doc.find(open);
  REQUIRE(a != std::string::npos);
  a += open.size();
  auto b = doc.find(close, a);
  REQUIRE(b != std::string::npos);
  return doc.substr(a, b - a);
}

std::string blob(const std::string& doc) {
  return between(doc, "<script type=\"application/json\" id=\"gate-data\">", "</script>");
}

// What a browser computes for a CSP hash source.
std::string csp_hash(const std::string& source) {
  std::string hex = sha256_hex(source), bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2)
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return "'sha256-" + base64_encode(bytes) + "'";
}

// Hostile text never appears in a form a browser would parse as markup.
void check_inert(const std::string& html) {
  CHECK(valid_utf8(html));
  CHECK_FALSE(has(html, "<script>alert"));
  CHECK_FALSE(has(html, "alert(1)</script>"));
  CHECK_FALSE(has(html, "<img"));
  CHECK_FALSE(has(html, "<!--"));
  CHECK_FALSE(has(html, "]]>"));
  // Only the page's own scripts: the error hook, the data block and the main script.
  CHECK(count(html, "<script") == 3);
  CHECK(count(html, "</script>") == 3);
  std::string data = blob(html);
  CHECK_FALSE(has(data, k_ls));
  CHECK_FALSE(has(data, k_ps));
  CHECK_FALSE(has(data, "<"));
  CHECK_FALSE(has(data, ">"));
  CHECK_FALSE(has(data, "&"));
}

} // namespace

TEST_CASE("hostile ids, answers and details stay inert in the verdict page") {
  register_secret(k_canary);
  std::string html = render::verdict_html(verdict(), baseline(), current());
  check_inert(html);
  CHECK_FALSE(has(html, k_canary));
  CHECK_FALSE(has(html, k_canary.substr(k_canary.size() - 8)));
  // Escaped forms are what the reader sees.
  CHECK(has(html, "t&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK(has(html, "baseline: demo&lt;img src=x onerror=alert(2)&gt; v1"));
  CHECK(has(html, "model: a → &lt;!-- &lt;script&gt;"));
  CHECK(has(blob(html), "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
  CHECK(has(blob(html), "\\u2028"));
  CHECK(has(blob(html), "\\u2029"));
}

TEST_CASE("the data blob parses back to the original strings") {
  Report cur = current();
  results::Run& hit = cur.tasks[4].runs[0]; // word-1
  hit.cache_hit = true;
  hit.usage_known = false;
  hit.attempts = 2;
  hit.answer_truncated = true;
  hit.tool_calls = {{"search", "ab12"}, {"open</script>", "cd34"}};
  std::string html = render::verdict_html(verdict(), baseline(), cur);
  boost::json::value data = boost::json::parse(blob(html));
  const auto& tasks = data.at("tasks").as_array();
  // Listed tasks in verdict order, then unchanged, added, removed.
  REQUIRE(tasks.size() == 6);
  CHECK(str(tasks[0].at("id")) == k_evil_id);
  CHECK(tasks[1].at("id") == "calc-2");
  CHECK(tasks[2].at("id") == "word-1");
  CHECK(tasks[3].at("id") == "calc-1");
  CHECK(tasks[4].at("id") == "new-1");
  CHECK(tasks[5].at("id") == "gone-1");
  CHECK(tasks[0].at("status") == boost::json::array{"regressed", "flipped"});
  CHECK(tasks[1].at("status") == boost::json::array{"flipped", "flaky"});
  CHECK(tasks[2].at("status") == boost::json::array{"stable"});
  CHECK(tasks[3].at("status") == boost::json::array{"unchanged"});
  CHECK(tasks[4].at("status") == boost::json::array{"added"});
  CHECK(tasks[4].at("b").is_null());
  CHECK(tasks[5].at("status") == boost::json::array{"removed"});
  CHECK(tasks[5].at("a").is_null());
  CHECK(tasks[0].at("diff").at("p") == 0.05);
  CHECK(tasks[3].at("diff").is_null());

  const auto& answers = data.at("answers").as_array();
  const auto& evil_run = tasks[0].at("a").at("runs").as_array()[0];
  CHECK(str(answers[evil_run.at("answer").to_number<std::size_t>()]) == k_evil_answer);
  CHECK(str(evil_run.at("checks").as_array()[0].at("detail")) == "got " + k_img);
  CHECK(evil_run.at("prompt_tokens") == 100);
  CHECK(evil_run.at("latency_ms") == 250.5);
  // "42" is the answer of many runs and is stored once.
  std::size_t forty_two = 0;
  for (const auto& a : answers)
    forty_two += a == "42";
  CHECK(forty_two == 1);
  const auto& word = tasks[2].at("a");
  CHECK(word.at("c") == 2);
  CHECK(word.at("n") == 2);
  CHECK(word.at("errored") == 1);
  // Values at their default are left out.
  CHECK_FALSE(evil_run.as_object().contains("cache_hit"));
  CHECK_FALSE(evil_run.as_object().contains("error"));
  CHECK_FALSE(evil_run.as_object().contains("tools"));
  const auto& first = word.at("runs").as_array()[0];
  CHECK(first.at("cache_hit") == true);
  CHECK(first.at("usage_known") == false);
  CHECK(first.at("attempts") == 2);
  CHECK(first.at("answer_truncated") == true);
  CHECK(first.at("tools") == boost::json::array{"search", "open</script>"});
  const auto& errored = word.at("runs").as_array()[2];
  CHECK(errored.at("error") == "timeout");
  CHECK(errored.at("error_message") == "no answer within 60 s, key [REDACTED]");
}

TEST_CASE("the verdict page has its sections and the metric table's formatted numbers") {
  std::string html = render::verdict_html(verdict(), baseline(), current());
  CHECK(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0) == 0);
  CHECK(has(html, "<title>gate: failed — demo</title>"));
  CHECK(has(html,
            "<p id=\"gate-headline\" class=\"headline fail\">❌ gate failed: 1 task regressed: t&lt;/script"));
  CHECK(has(html, "<ul class=\"reasons\">"));
  CHECK(has(html, "<ul class=\"warnings\">"));
  CHECK(has(html, "<th>Metric</th><th>Baseline</th><th>Current</th><th>Δ</th><th>95% interval</th>"
                  "<th>Threshold</th><th>Adjusted p</th><th>Noise floor</th><th>Status</th>"));
  // One decimal everywhere; −80.25 rounds to −80.2 (printf's round-half-even on 80.25, exact in binary).
  CHECK(has(html,
            "<td class=\"num\">93.3%</td><td class=\"num\">50.0%</td><td class=\"num\">−43.3 pp</td>"
            "<td class=\"num\">[−80.2, −6.5] pp</td><td class=\"num\">5.0 pp</td><td class=\"num\">0.012</td>"
            "<td class=\"num\">±31.0 pp</td><td class=\"status\">failed</td>"));
  CHECK(has(html, "<tr class=\"failed\">"));
  // Not gated: no threshold, no p-value.
  CHECK(has(html, "<td class=\"num\">120.2</td><td class=\"num\">121.0</td><td class=\"num\">+0.6%</td>"
                  "<td class=\"num\">[−1.0, +2.2]%</td><td class=\"num\">—</td><td class=\"num\">—</td>"
                  "<td class=\"num\">—</td><td class=\"status\">not gated</td>"));
  CHECK(has(html, "(lower is better)"));
  CHECK(has(html, "sign-flip exact over 4 tasks"));
  CHECK(has(html,
            "4 paired · 1 regressed · 0 fixed · 2 flipped · 1 became flaky · 1 became stable · 1 added · "
            "1 removed"));
  CHECK(has(html, "id=\"gate-search\""));
  CHECK(has(html, "<select id=\"gate-status\">"));
  CHECK(has(html, "<option value=\"flipped\">flipped (2)</option>"));
  CHECK(has(html, "<section id=\"gate-detail\" hidden></section>"));
  CHECK(has(html, "<pre id=\"gate-errors\" hidden></pre>"));
  CHECK(has(html, "<th>Task</th><th>Scenario</th><th>Baseline</th><th>Current</th><th>Status</th>"));
  // Every task has a row: 4 paired, 1 added, 1 removed.
  CHECK(count(html, "<tr data-i=") == 6);
  CHECK(has(html,
            "<tr data-i=\"1\" tabindex=\"0\" class=\"st-flipped\"><td class=\"id\">calc-2</td><td>math</td>"
            "<td class=\"num\">3/3</td><td class=\"num\">1/3</td><td><span class=\"badge b-flipped\">flipped"
            "</span><span class=\"badge b-flaky\">flaky</span></td></tr>"));
  CHECK(has(html, "<td class=\"num\">2/3</td><td class=\"num\">2/2 +1 err</td>"));
  CHECK(has(html,
            "<td class=\"id\">new-1</td><td>misc</td><td class=\"num\">—</td><td class=\"num\">1/1</td>"));
  CHECK(has(html,
            "<td class=\"id\">calc-1</td><td>math</td><td class=\"num\">3/3</td><td class=\"num\">3/3</td>"
            "<td><span class=\"badge b-unchanged\">unchanged</span>"));
}

TEST_CASE("scenario bars are inline SVG scaled to the success rate") {
  std::string html = render::verdict_html(verdict(), baseline(), current());
  CHECK(has(html, "<svg class=\"chart\""));
  // Bars are 340 px at 100%: math current 0.75 · 340 = 255.0; lang baseline 2/3 · 340 = 226.7.
  CHECK(has(html, "<rect class=\"cur\" x=\"210\" y=\"72\" width=\"255.0\" height=\"12\"/><text x=\"469.0\" "
                  "y=\"82\">75.0%</text>"));
  CHECK(has(html, "<rect class=\"base\" x=\"210\" y=\"22\" width=\"226.7\" height=\"12\"/><text x=\"440.7\" "
                  "y=\"32\">66.7%</text>"));
  CHECK(has(html, "<title>math — 3 tasks</title>"));
}

TEST_CASE("the page's scripts are allowed by its own Content-Security-Policy and nothing else is") {
  std::string html = render::verdict_html(verdict(), baseline(), current());
  std::string csp = between(html, "<meta http-equiv=\"Content-Security-Policy\" content=\"", "\">");
  CHECK(csp.rfind("default-src 'none'; ", 0) == 0);
  std::string error_js = between(html, "</style>\n<script>", "</script>");
  std::string main_js = between(html, "</script>\n<script>", "</script>\n</body>");
  // The two executable scripts and the JSON block between them.
  CHECK(has(main_js, "JSON.parse"));
  CHECK(has(error_js, "window.onerror"));
  CHECK(has(csp, "script-src " + csp_hash(error_js) + " " + csp_hash(main_js) + ";"));
  CHECK(has(csp, "style-src " + csp_hash(between(html, "<style>", "</style>")) + ";"));
  // Data reaches the DOM as text only.
  CHECK_FALSE(has(main_js, "innerHTML"));
  CHECK_FALSE(has(main_js, "insertAdjacentHTML"));
  CHECK_FALSE(has(main_js, "document.write"));
  CHECK_FALSE(has(html, "http://"));
  CHECK_FALSE(has(html, "https://"));
}

TEST_CASE("invalid UTF-8 and bidirectional overrides are neutralised") {
  Report b = baseline(), a = current();
  std::string bad = "x\xff\xfey" + k_rlo + "gpj.exe";
  a.tasks[1].runs[0].answer = bad;
  a.tasks[1].scenario = bad;
  std::string html = render::verdict_html(verdict(), b, a);
  CHECK(valid_utf8(html));
  CHECK_FALSE(has(html, k_rlo));
  boost::json::value data = boost::json::parse(blob(html));
  const auto& calc2 = data.at("tasks").as_array()[1];
  CHECK(data.at("answers")
            .as_array()[calc2.at("a").at("runs").as_array()[0].at("answer").to_number<std::size_t>()] ==
        "x\xEF\xBF\xBD\xEF\xBF\xBDy\xEF\xBF\xBDgpj.exe");
}

TEST_CASE("past the answer budget, answers are cut and the page says so") {
  Report b = baseline(), a = current();
  std::string long_a(1000, 'a'), long_b(1000, 'b'), long_c(1000, 'c');
  a.tasks[1].runs[0].answer = long_a; // calc-2, listed second
  a.tasks[1].runs[1].answer = long_b;
  a.tasks[0].runs[0].answer = long_c; // calc-1, unchanged: after the listed tasks
  render::HtmlOptions o;
  o.answer_budget_bytes = 1500; // room for long_a, not long_b
  o.short_answer_bytes = 10;
  std::string html = render::verdict_html(verdict(), b, a, o);
  boost::json::value data = boost::json::parse(blob(html));
  CHECK(data.at("answers_shortened") == 2);
  const auto& answers = data.at("answers").as_array();
  auto answer_of = [&](std::size_t task, std::size_t run) {
    const auto& r = data.at("tasks").as_array()[task].at("a").at("runs").as_array()[run];
    return std::make_pair(std::string(answers[r.at("answer").to_number<std::size_t>()].as_string()),
                          r.as_object().contains("answer_shortened"));
  };
  CHECK(answer_of(1, 0) == std::make_pair(long_a, false));
  // 10 bytes: 7 of text and the 3-byte ellipsis.
  CHECK(answer_of(1, 1) == std::make_pair(std::string("bbbbbbb…"), true));
  CHECK(answer_of(3, 0) == std::make_pair(std::string("ccccccc…"), true));
  CHECK(has(html, "2 answers are cut to 10 bytes in this page"));
}

TEST_CASE("a failed gate with no regressed task says why it failed next to the task counts") {
  compare::Verdict v = verdict();
  v.regressed = 0;
  v.reasons = {"success rate fell 19.7pp (threshold 2.0pp, p=0.003 adjusted)"};
  const std::string html = render::verdict_html(v, baseline(), current());
  CHECK(has(html, "4 paired · 0 regressed"));
  CHECK(has(html, "<p class=\"fail-reason\">No task regressed on its own; the gate failed: success rate fell "
                  "19.7pp (threshold 2.0pp, p=0.003 adjusted)</p>"));
  // With a regressed task the counts say it themselves.
  CHECK_FALSE(has(render::verdict_html(verdict(), baseline(), current()), "fail-reason\">"));
}

TEST_CASE("latencies are in human units: the metric table and each run's") {
  const std::string html = render::verdict_html(verdict(), baseline(), current());
  const boost::json::value data = boost::json::parse(blob(html));
  const auto& run = data.at("tasks").as_array()[0].at("a").at("runs").as_array()[0];
  CHECK(run.at("latency_ms") == 250.5);
  CHECK(str(run.at("latency")) == "250 ms"); // 250.5 is exact; printf rounds half to even
  CHECK(has(html, "r.cache_hit ? 'none (cache hit)' : r.latency)"));
}

#include <doctest.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include <gate/check/check.hpp>
#include <gate/render/escape.hpp>
#include <gate/render/verdict_markdown.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/input.hpp>
#include <gate/util/text.hpp>

using namespace gate;
using compare::MetricRow;
using compare::TaskDiff;
using compare::Verdict;
using render::verdict_markdown;
using render::VerdictMarkdownOptions;

namespace {

const std::string k_wj = "\xE2\x81\xA0"; // U+2060 WORD JOINER

// Golden files live in tests/golden, next to this file's directory.
// GATE_UPDATE_GOLDEN=1 rewrites them from the current output instead of
// comparing (review the diff before committing it).
std::filesystem::path golden_path(const std::string& name) {
  return std::filesystem::path(__FILE__).parent_path().parent_path() / "golden" / name;
}

void check_golden(const std::string& name, const std::string& actual) {
  auto path = golden_path(name);
  const char* update = std::getenv("GATE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    write_file_atomically(path, actual);
    MESSAGE("rewrote " << path.string());
    CHECK(read_file(path) == actual);
    return;
  }
  REQUIRE_MESSAGE(std::filesystem::exists(path), path.string()
                                                     << " is missing; run with GATE_UPDATE_GOLDEN=1");
  std::string expected = read_file(path);
  CHECK(actual == expected);
}

MetricRow metric(std::string key, std::string name, std::string unit, std::string value_unit) {
  MetricRow r;
  r.key = std::move(key);
  r.name = std::move(name);
  r.unit = std::move(unit);
  r.value_unit = std::move(value_unit);
  return r;
}

TaskDiff task(std::string id, std::string scenario, std::int64_t c_b, std::int64_t c_a) {
  TaskDiff t;
  t.id = std::move(id);
  t.scenario = std::move(scenario);
  t.c_b = c_b;
  t.n_b = 4;
  t.c_a = c_a;
  t.n_a = 4;
  return t;
}

// Built by hand, not by compare(): rendering only formats what it is given.
// Two regressed tasks (one by a grader change), one newly flaky, one fixed;
// a route warning; a failed metric, a crossed-but-not-significant one and
// two ungated ones.
Verdict small() {
  Verdict v;
  v.status = gate::compare::Status::failed;
  v.exit = Exit::threshold;
  v.reasons = {"success rate fell 12.5pp (threshold 2.0pp, p=0.012 adjusted)",
               "2 tasks regressed: geo-1, math-7 (1 by a check or grader change)"};
  v.headline = "⚠ routes differ (model) — ❌ gate failed: " + v.reasons[0] + "; " + v.reasons[1];
  v.warnings = {"routes differ: model: m-1 → m-2"};
  v.route_diff = {"model: m-1 → m-2"};
  v.baseline_suite = v.current_suite = {"capitals", "2", "0123456789abcdef0123456789abcdef"};

  MetricRow success = metric("success_rate", "success rate", "pp", "%");
  success.baseline = 87.5;
  success.current = 75.0;
  success.delta = -12.5;
  success.delta_interval = {-20.34, -4.66};
  success.threshold = 2.0;
  success.p_value = 0.006;
  success.p_adjusted = 0.012;
  success.noise_floor = 6.3;
  success.test = "sign-flip exact over 5 affected tasks";
  success.gated = success.crossed = success.significant = success.failed = true;

  MetricRow gap = metric("consistency_gap", "consistency gap", "pp", "pp");
  gap.higher_is_better = false;
  gap.baseline = 12.5;
  gap.current = 25.0;
  gap.delta = 12.5;
  gap.delta_interval = {-3.1, 28.1};
  gap.threshold = 5.0;
  gap.p_value = 0.25;
  gap.p_adjusted = 0.25;
  gap.noise_floor = 37.5;
  gap.test = "McNemar exact over 8 tasks (1 became mixed, 0 became consistent)";
  gap.gated = gap.crossed = true;

  MetricRow tokens = metric("tokens_per_task", "tokens per task", "%", "tokens");
  tokens.higher_is_better = false;
  tokens.baseline = 412.4;
  tokens.current = 450.0;
  tokens.delta = 9.12;
  tokens.delta_interval = {2.0, 16.24};
  tokens.p_value = 0.0004;
  tokens.test = "sign-flip exact over 8 paired tasks";

  MetricRow latency = metric("p95_latency", "p95 latency", "%", "ms");
  latency.higher_is_better = false;
  latency.baseline = 8.25;
  latency.current = 812.0;
  latency.test = "no fresh calls";
  v.metrics = {success, gap, tokens, latency};

  TaskDiff geo1 = task("geo-1", "geo", 4, 0);
  geo1.flipped = geo1.regressed = true;
  geo1.p_value = 0.0143;
  geo1.q_value = 0.0286;
  geo1.failing_checks = {"mentions Paris: got Lyon"};
  geo1.answer_excerpt = "Lyon";
  geo1.first_divergence = 2;
  TaskDiff math7 = task("math-7", "math", 4, 2);
  math7.flipped = math7.regressed = math7.became_flaky = true;
  math7.inputs_unchanged = math7.grader_change = true;
  math7.p_value = 0.214;
  math7.q_value = 0.43;
  math7.failing_checks = {"exact answer: expected 42, got 42.0"};
  math7.answer_excerpt = "42.0";
  TaskDiff geo3 = task("geo-3", "geo", 4, 3);
  geo3.flipped = geo3.became_flaky = true;
  geo3.p_value = 0.5;
  geo3.q_value = 1;
  geo3.failing_checks = {"mentions Paris: got Lyon"};
  geo3.answer_excerpt = "Lyon, I think";
  TaskDiff math2 = task("math-2", "math", 0, 4);
  math2.fixed = true;
  math2.p_value = 0.0143;
  math2.q_value = 0.0286;
  v.tasks = {geo1, math7, geo3, math2};

  v.added = {"geo-9"};
  v.added_runs = {{2, 3}};
  v.removed = {"math-0"};
  v.paired = 8;
  v.unchanged_inputs = 3;
  v.affected = 5;
  v.flips = 3;
  v.regressed = 2;
  v.fixed = 1;
  v.became_flaky = 2;
  v.scenarios = {{"geo", 1.0, 0.6875, 4}, {"math", 0.5, 0.625, 4}};
  return v;
}

const std::string k_evil_id = "</details><img src=x>[x](http://evil) @org/team ``` a|b\nc";
const std::string k_evil_answer = "``` `` ` [x](http://evil) </details>\n::error::x | @org/team";

// Hostile text in every untrusted field.
Verdict hostile() {
  Verdict v = small();
  v.reasons[1] = "2 tasks regressed: " + k_evil_id + ", math-7";
  v.headline = "⚠ routes differ (model) — ❌ gate failed: " + v.reasons[0] + "; " + v.reasons[1];
  v.warnings = {"routes differ: model: </details><img src=x> → @org/team"};
  v.route_diff = {"model: </details><img src=x> → [x](http://evil)"};
  v.baseline_suite.name = v.current_suite.name = "suite|<b>@org";
  v.tasks[0].id = k_evil_id;
  v.tasks[0].scenario = "@org/team";
  v.tasks[0].failing_checks = {"regex `a|b`: </details> matched\n| col |"};
  v.tasks[0].answer_excerpt = k_evil_answer;
  v.added = {"``` ```\n</details>"};
  v.scenarios = {{"géo/<x>\"", 1.0, 0.5, 2}, {"@org/team\n```", 0.5, 0.25, 2}};
  return v;
}

// `line` with its inline code spans removed (CommonMark: a run of n
// backticks up to the next run of exactly n).
std::string strip_code_spans(const std::string& line) {
  std::string out;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      out += line.substr(i, 2);
      i += 2;
      continue;
    }
    if (line[i] != '`') {
      out += line[i++];
      continue;
    }
    std::size_t n = 0;
    while (i + n < line.size() && line[i + n] == '`')
      ++n;
    std::size_t j = i + n, close = std::string::npos;
    while (j < line.size()) {
      if (line[j] != '`') {
        ++j;
        continue;
      }
      std::size_t m = 0;
      while (j + m < line.size() && line[j + m] == '`')
        ++m;
      if (m == n) {
        close = j;
        break;
      }
      j += m;
    }
    if (close == std::string::npos) {
      out += line.substr(i, n); // an unmatched run is literal
      i += n;
    } else {
      i = close + n;
    }
  }
  return out;
}

// Occurrences of `c` not escaped by a backslash (for '|': table cell
// separators).
std::size_t live(const std::string& s, char c) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    n += s[i] == c;
  }
  return n;
}

std::size_t live_pipes(const std::string& s) { return live(s, '|'); }

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size()))
    ++n;
  return n;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  for (std::size_t e = s.find('\n'); e != std::string::npos; b = e + 1, e = s.find('\n', b))
    out.push_back(s.substr(b, e - b));
  if (b < s.size()) out.push_back(s.substr(b));
  return out;
}

// Everything outside code spans and the fenced Mermaid block is inert: no
// HTML but gate's own tags, no live link, mention or emphasis from the
// data, and every table row has exactly as many cells as its header.
void check_inert(const std::string& md) {
  static const std::vector<std::string> k_own_tags = {"<!-- gate-verdict -->", "<details>", "</details>",
                                                      "<summary>", "</summary>"};
  std::size_t opened = 0, closed = 0;
  std::size_t header_pipes = 0;
  bool in_fence = false;
  for (const std::string& raw : lines_of(md)) {
    if (raw.rfind("```", 0) == 0) {
      in_fence = !in_fence;
      continue;
    }
    if (in_fence) {
      CHECK_MESSAGE(raw.find('<') == std::string::npos, raw);
      continue;
    }
    std::string line = strip_code_spans(raw);
    opened += count(line, "<details>");
    closed += count(line, "</details>");
    std::string rest = line;
    for (const auto& tag : k_own_tags)
      for (std::size_t at = rest.find(tag); at != std::string::npos; at = rest.find(tag))
        rest.erase(at, tag.size());
    CHECK_MESSAGE(rest.find('<') == std::string::npos, raw);
    CHECK_MESSAGE(live(rest, '[') == 0, raw); // no link text can open
    CHECK_MESSAGE(live(rest, '`') == 0, raw); // no code span left open
    for (std::size_t at = rest.find('@'); at != std::string::npos; at = rest.find('@', at + 1))
      CHECK_MESSAGE(rest.compare(at + 1, k_wj.size(), k_wj) == 0, raw);
    if (line.rfind("|---", 0) == 0) continue;
    if (line.rfind("| ", 0) == 0) {
      if (header_pipes == 0) header_pipes = live_pipes(line);
      CHECK_MESSAGE(live_pipes(line) == header_pipes, raw);
    } else {
      header_pipes = 0; // a table ends at its first non-row line
    }
  }
  CHECK_FALSE(in_fence);
  CHECK(opened == closed);
}

} // namespace

TEST_CASE("verdict markdown: golden small verdict") {
  std::string md = verdict_markdown(small(), {});
  check_golden("verdict_small.md", md);
  check_inert(md);
  CHECK(md.rfind("<!-- gate-verdict -->\n## ⚠ routes differ (model) — ❌ gate failed: ", 0) == 0);
}

TEST_CASE("verdict markdown: golden hostile verdict, every untrusted field inert") {
  Verdict v = hostile();
  std::string md = verdict_markdown(v, {});
  check_golden("verdict_hostile.md", md);
  check_inert(md);
  CHECK(md.find("## " + render::md_cell(v.headline) + "\n") != std::string::npos);
  // The Mermaid labels keep only [A-Za-z0-9 _-]: "géo/<x>\"" → g, é→_, o, /→_, <→_, x, >→_, "→_;
  // "@org/team\n```" → @→_, org, /→_, team, LF→_, three `→___.
  CHECK(md.find("x-axis [\"g_o__x__\", \"_org_team____\"]") != std::string::npos);
}

TEST_CASE("verdict markdown: metric rows, hand-formatted") {
  std::string md = verdict_markdown(small(), {});
  // Δ −12.5 pp; interval −20.34 → "−20.3", −4.66 → "−4.7"; threshold is the
  // allowed worsening of a higher-is-better metric, so −2.0; noise ±6.3.
  CHECK(md.find("| success rate | 87.5% | 75.0% | −12.5 pp | −20.3 to −4.7 pp | −2.0 pp | 0.012 | ±6.3 pp | "
                "❌ fail |") != std::string::npos);
  // Lower is better: threshold +5.0; crossed (12.5 ≥ 5) but p_adj 0.25 ≥ α.
  CHECK(
      md.find(
          "| consistency gap | 12.5 pp | 25.0 pp | +12.5 pp | −3.1 to +28.1 pp | +5.0 pp | 0.250 | ±37.5 pp "
          "| ⚠ crossed, not significant |") != std::string::npos);
  // 412.4 tokens → "412"; +9.12% → "+9.1%"; 16.24 → "+16.2%"; p 0.0004 < 0.001.
  CHECK(
      md.find(
          "| tokens per task | 412 tokens | 450 tokens | +9.1% | +2.0 to +16.2% | — | &lt;0.001 (unadjusted) "
          "| — | ➖ not gated |") != std::string::npos);
  // 8.25 ms < 10 keeps a decimal ("8.2": 8.25 is exact, printf rounds half to even); 812 ms whole.
  CHECK(md.find("| p95 latency | 8.2 ms | 812 ms | 0.0% | 0.0 to 0.0% | — | — | — | ➖ not gated |") !=
        std::string::npos);
}

TEST_CASE("verdict markdown: each task in one section, other changes as notes") {
  std::string md = verdict_markdown(small(), {});
  auto at = [&](const std::string& s) { return md.find(s); };
  REQUIRE(at("### Regressed tasks (2)") != std::string::npos);
  CHECK(at("### Regressed tasks (2)") < at("### Newly flaky (1)"));
  CHECK(at("### Newly flaky (1)") < at("### Fixed (1)"));
  CHECK(at("### Became stable") == std::string::npos);
  CHECK(at("### Flipped") == std::string::npos); // geo-3 flipped and became flaky: listed once, as flaky
  CHECK(md.find(
            "| math-7 | math | 4/4 → 2/4 | 0.430 | exact answer: expected 42, got 42.0 | — | ` 42.0 ` | — | "
            "check or grader change · flipped · became flaky |") != std::string::npos);
  CHECK(md.find("| geo-3 | geo | 4/4 → 3/4 | 1.000 | mentions Paris: got Lyon | — | ` Lyon, I think ` | — | "
                "flipped |") != std::string::npos);
  CHECK(md.find("**3 tasks unchanged, 5 affected by this change**") != std::string::npos);
}

TEST_CASE("verdict markdown: sections over 10 rows fold into <details>") {
  Verdict v = small();
  v.tasks.clear();
  for (int i = 0; i < 10; ++i) {
    TaskDiff t = task("t" + std::to_string(i), "s", 2, 4);
    t.became_stable = true;
    v.tasks.push_back(t);
  }
  std::string ten = verdict_markdown(v, {});
  CHECK(ten.find("<summary>10 tasks that became stable</summary>") == std::string::npos);
  v.tasks.push_back(v.tasks.back());
  std::string eleven = verdict_markdown(v, {});
  CHECK(eleven.find("<details><summary>11 tasks that became stable</summary>") != std::string::npos);
  check_inert(eleven);
}

TEST_CASE("verdict markdown: rel-38, 10,000 hostile regressed tasks") {
  Verdict v = hostile();
  v.tasks.clear();
  v.added.clear();
  v.removed.clear();
  v.scenarios.clear();
  for (int i = 0; i < 10'000; ++i) {
    TaskDiff t = task(k_evil_id + std::to_string(i), "@org/team", 4, 0);
    t.flipped = t.regressed = true;
    t.q_value = 0.01;
    t.failing_checks = {"regex `a|b`: </details> matched"};
    t.answer_excerpt = k_evil_answer;
    v.tasks.push_back(t);
  }
  std::string headline = "## " + render::md_cell(v.headline) + "\n";
  for (std::size_t limit : {std::size_t{65'536}, std::size_t{1} << 20}) {
    CAPTURE(limit);
    std::string md = verdict_markdown(v, {limit, "artifact gate-report / verdict.html"});
    CHECK(md.size() <= limit);
    CHECK(md.size() > limit - 2000); // filled, not stopped early
    CHECK(md.find(headline) != std::string::npos);
    CHECK(md.find("<details><summary>10000 regressed tasks</summary>") != std::string::npos);
    check_inert(md);
    // Left out: the regressed rows not shown, the unchanged line and the
    // route line (the only pieces after the regressed section).
    std::size_t shown = count(md, "| @" + k_wj + "org/team | 4/4 → 0/4 |");
    REQUIRE(shown > 0);
    std::string tail = "more rows; full report in artifact gate-report / verdict.html**\n";
    std::string expected = "\n**… truncated — " + std::to_string(10'000 - shown + 2) + " " + tail;
    CHECK(md.size() >= expected.size());
    CHECK(md.compare(md.size() - expected.size(), expected.size(), expected) == 0);
  }
}

TEST_CASE("verdict markdown: never over the limit, always closed") {
  Verdict v = hostile();
  for (int i = 0; i < 300; ++i) {
    TaskDiff t = task(k_evil_id + std::to_string(i), "s", 1, 4);
    t.became_stable = true;
    t.answer_excerpt = k_evil_answer;
    v.tasks.push_back(t);
  }
  for (std::size_t limit = render::k_min_verdict_bytes; limit < 60'000; limit += 1'733) {
    CAPTURE(limit);
    std::string md = verdict_markdown(v, {limit, "x"});
    CHECK(md.size() <= limit);
    CHECK(valid_utf8(md));
    check_inert(md);
    CHECK(md.find("… truncated — ") != std::string::npos);
  }
  std::string all = verdict_markdown(v, {std::size_t{1} << 20, "x"});
  CHECK(all.find("truncated") == std::string::npos);
  CHECK(all.find("### Route differences") != std::string::npos);
}

TEST_CASE("verdict markdown: a passing verdict without changes") {
  Verdict v;
  v.headline = "✅ gate passed: success 90.0% → 90.0% (0.0pp); 0 regressed; 10 tasks unchanged, 0 affected";
  v.paired = v.unchanged_inputs = 10;
  v.scenarios = {{"", 0.9, 0.9, 10}};
  std::string md = verdict_markdown(v, {});
  CHECK(
      md ==
      "<!-- gate-verdict -->\n## " + render::md_cell(v.headline) +
          "\n\nSuite (unnamed) · 10 paired tasks · α = 0.05\n\n**10 tasks unchanged, 0 affected by this "
          "change** (of 10 paired and measured; unchanged: every run sent the baseline's request and got its "
          "answer)\n\n");
}

TEST_CASE("verdict markdown: a limit below the minimum is a programming error") {
  CHECK_THROWS_AS(verdict_markdown(small(), {render::k_min_verdict_bytes - 1, "x"}), std::invalid_argument);
}

TEST_CASE("verdict markdown: a regex in a check detail is escaped once, so it reads as written") {
  // The suite line holds the JSON string "^\\d{3}$", that is the regex ^\d{3}$.
  const gate::check::Check c =
      gate::check::parse(boost::json::parse(R"({"type":"regex","pattern":"^\\d{3}$"})"), std::nullopt, "t");
  const gate::check::Result r = gate::check::evaluate(c, "abc");
  REQUIRE(r.detail == R"(expected to match /^\d{3}$/; the answer is "abc")");
  Verdict v = small();
  v.tasks[0].failing_checks = {r.label + ": " + r.detail};
  const std::string md = verdict_markdown(v, {65'536, "verdict.html"});
  // Markdown source: one backslash before each character Markdown would
  // read (\\ for \, \$ for $); rendered: ^\d{3}$.
  CHECK(md.find(R"(regex: expected to match /^\\d{3}\$/; the answer is "abc")") != std::string::npos);
  CHECK(md.find(R"(\\\\d)") == std::string::npos);
}

TEST_CASE("verdict markdown: the cost line, baseline → current, paid and as recorded; n/a spelled out") {
  Verdict v;
  v.headline = "✅ gate passed";
  v.paired = v.unchanged_inputs = 1;
  compare::Cost c;
  c.baseline = {true, 0.0123, 0.0};
  c.current = {true, 0.0, 12.345};
  v.cost = c;
  std::string md = verdict_markdown(v, {});
  CHECK(md.find("**Cost (not gated)**: paid $0.0123 → $0; replayed runs, as recorded $0 → $12.35\n\n") !=
        std::string::npos);
  v.cost->baseline = {false, std::nullopt, std::nullopt};
  v.cost->current = {true, std::nullopt, 0.0000004};
  md = verdict_markdown(v, {});
  CHECK(md.find("paid n/a (no pricing) → n/a; replayed runs, as recorded n/a (no pricing) → <$0.000001") !=
        std::string::npos);
  v.cost.reset();
  CHECK(verdict_markdown(v, {}).find("Cost") == std::string::npos);
}

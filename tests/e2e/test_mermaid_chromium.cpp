// End-to-end: the Mermaid chart of the PR Markdown drawn as GitHub draws it,
// by the mermaid npm package (pinned in .ci/deps, installed by
// `.ci/deps --test` into $GATE_TOOLS_DIR, default ~/.cache/gate-tools) in
// headless Chromium. When it cannot run (no Chromium, no package,
// GATE_SKIP_BROWSER=1) it says why and CTest reports it skipped
// (tests/support/skip.hpp), never a pass.
#include <doctest.h>

#include <cstdlib>
#include <iostream>
#include <regex>
#include <unistd.h>

#include "chromium.hpp"
#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

fs::path mermaid_js() {
  const char* d = std::getenv("GATE_TOOLS_DIR");
  const char* home = std::getenv("HOME");
  const fs::path tools = d != nullptr && *d != '\0'
                             ? fs::path(d)
                             : fs::path(home != nullptr ? home : "/nonexistent") / ".cache" / "gate-tools";
  return tools / "node_modules" / "mermaid" / "dist" / "mermaid.min.js";
}

// Why the test cannot run here, or "" when it can.
std::string cannot_run() {
  if (const char* v = std::getenv("GATE_SKIP_BROWSER"); v != nullptr && std::string(v) == "1")
    return "GATE_SKIP_BROWSER=1 is set";
  if (::access(chromium().c_str(), X_OK) != 0) return "no Chromium at " + chromium().string();
  if (!fs::exists(mermaid_js()))
    return "the mermaid npm package is not at " + mermaid_js().string() +
           " (install it with .ci/deps --test)";
  return "";
}

std::string mermaid_block(const std::string& md) {
  const std::string open = "```mermaid\n";
  auto a = md.find(open);
  REQUIRE_MESSAGE(a != std::string::npos, md);
  a += open.size();
  auto b = md.find("```", a);
  REQUIRE(b != std::string::npos);
  return md.substr(a, b - a);
}

// The inside of <g class="NAME"> ... up to the next "</g>".
std::string group(const std::string& svg, const std::string& name) {
  auto a = svg.find("<g class=\"" + name + "\">");
  REQUIRE_MESSAGE(a != std::string::npos, "no group " << name << " in\n" << svg);
  auto b = svg.find("</g>", a);
  return svg.substr(a, b - a);
}

std::vector<double> numbers(const std::string& text, const std::regex& re) {
  std::vector<double> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[1].str()));
  return out;
}

} // namespace

TEST_CASE("the scenario chart shows both series, a legend, and an improvement as the line above its bar") {
  if (const std::string why = cannot_run(); !why.empty()) {
    gate::testing::skip_test(why + "; the Mermaid chart is not checked in a browser");
    return;
  }
  TempDir tmp;
  // The regressed report as the baseline: every scenario improves.
  const fs::path base = source_dir() / "fixtures" / "compare" / "regressed.json";
  const fs::path cur = source_dir() / "baselines" / "demo.json";
  Result r = run_gate({"compare", "--baseline", base.string(), "--current", cur.string(), "--format", "md"},
                      tmp.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string chart = mermaid_block(r.out);
  const fs::path page = tmp.path() / "chart.html";
  spit(page, "<!doctype html><html><body><pre id=\"src\">" + html_text(chart) +
                 "</pre><div id=\"out\">pending</div>\n<script src=\"file://" +
                 percent_encode(mermaid_js().string(), true) +
                 "\"></script>\n<script>\nmermaid.initialize({startOnLoad: false});\n"
                 "mermaid.render('chart', document.getElementById('src').textContent)\n"
                 "  .then(r => { document.getElementById('out').innerHTML = r.svg; })\n"
                 "  .catch(e => { document.getElementById('out').textContent = 'MERMAID-ERROR ' + e; });\n"
                 "</script></body></html>\n");
  Browser b = load(page, "", tmp.path(), 10000);
  INFO(b.log);
  REQUIRE(b.exit_code == 0);
  REQUIRE_MESSAGE(b.dom.find("<div id=\"out\">MERMAID-ERROR") == std::string::npos, b.dom);
  const auto svg_at = b.dom.find("<svg");
  REQUIRE_MESSAGE(svg_at != std::string::npos, b.dom);
  const std::string svg = b.dom.substr(svg_at);

  // Both series: one visible bar per scenario, and a line through as many points.
  const std::string bars = group(svg, "bar-plot-0");
  const std::vector<double> bar_y = numbers(bars, std::regex(R"re(<rect x="[^"]*" y="([-0-9.]+)")re"));
  const std::vector<double> bar_h = numbers(bars, std::regex(R"re( height="([-0-9.]+)")re"));
  REQUIRE(bar_y.size() == 4);
  REQUIRE(bar_h.size() == 4);
  for (double h : bar_h)
    CHECK(h > 10);
  const std::string line = group(svg, "line-plot-1");
  const std::vector<double> line_y = numbers(line, std::regex(R"re([ML][-0-9.]+,([-0-9.]+))re"));
  REQUIRE(line_y.size() == 4);

  // A legend naming both series.
  const std::string legend = group(svg, "legend");
  CHECK(svg.find(">baseline</text>") != std::string::npos);
  CHECK(svg.find(">current</text>") != std::string::npos);
  CHECK(legend.find("<rect") != std::string::npos); // the bar's marker
  CHECK(legend.find("<path") != std::string::npos); // the line's marker

  // Every scenario improved: each point of the line sits above the top of
  // its bar (SVG y grows downwards), so the rise is visible.
  for (std::size_t i = 0; i < 4; ++i)
    CHECK_MESSAGE(line_y[i] < bar_y[i] - 5,
                  "scenario " << i << ": line at y " << line_y[i] << ", bar top at " << bar_y[i]);
}

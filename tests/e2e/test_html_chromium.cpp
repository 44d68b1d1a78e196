// End-to-end: the HTML verdict written by `gate compare --html`, loaded
// from file:// in headless Chromium. The page honours ?q= and ?open=, so
// the DOM Chromium dumps after its scripts ran shows the filter and the
// detail panel at work. Needs /usr/bin/chromium (Debian's `chromium`);
// GATE_SKIP_BROWSER=1 skips these tests, with a message.
#include <doctest.h>

#include <boost/json.hpp>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <regex>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "chromium.hpp"
#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

// The page's data blob, parsed (its \u003c escapes are plain JSON).
boost::json::value page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"gate-data\">";
  auto a = html.find(open);
  REQUIRE(a != std::string::npos);
  a += open.size();
  auto b = html.find("</script>", a);
  REQUIRE(b != std::string::npos);
  return boost::json::parse(html.substr(a, b - a));
}

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string str(const boost::json::value& v) { return std::string(v.as_string()); }

// The text of #gate-errors, where the page reports script errors.
std::string page_errors(const std::string& dom) {
  auto a = dom.find("<pre id=\"gate-errors\"");
  REQUIRE_MESSAGE(a != std::string::npos, "no #gate-errors in the dumped DOM");
  auto gt = dom.find('>', a);
  auto end = dom.find("</pre>", gt);
  REQUIRE(end != std::string::npos);
  return dom.substr(gt + 1, end - gt - 1);
}

std::size_t count(const std::string& s, const std::string& part) {
  std::size_t n = 0;
  for (auto p = s.find(part); p != std::string::npos; p = s.find(part, p + 1))
    ++n;
  return n;
}

// The detail panel: its runs are nested <section>s, so it reaches up to
// its next sibling, #gate-errors.
std::string detail_panel(const std::string& dom, std::string& open_tag) {
  auto a = dom.find("<section id=\"gate-detail\"");
  REQUIRE(a != std::string::npos);
  auto gt = dom.find('>', a);
  open_tag = dom.substr(a, gt + 1 - a);
  auto end = dom.find("<pre id=\"gate-errors\"", gt);
  REQUIRE(end != std::string::npos);
  return dom.substr(gt + 1, end - gt - 1);
}

// The page ran its script without an error or a console message (a CSP
// violation, an exception).
void check_clean_load(const Browser& b) {
  INFO("chromium log:\n" << b.log);
  CHECK(b.exit_code == 0);
  CHECK(b.dom.find("<html lang=\"en\" data-gate-ready=\"1\">") != std::string::npos);
  CHECK(page_errors(b.dom) == "");
  CHECK(b.log.find(":CONSOLE") == std::string::npos);
}

struct Row {
  std::size_t index = 0;
  bool hidden = false;
};

std::vector<Row> rows(const std::string& dom) {
  std::vector<Row> out;
  static const std::regex tr(R"re(<tr data-i="(\d+)"([^>]*)>)re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), tr); it != std::sregex_iterator(); ++it)
    out.push_back({std::stoul((*it)[1].str()), (*it)[2].str().find(" hidden=\"\"") != std::string::npos});
  return out;
}

std::size_t run_count(const boost::json::value& side) {
  return side.is_null() ? 0 : side.at("runs").as_array().size();
}

} // namespace

TEST_CASE("the regressed fixture's HTML verdict filters and opens a task in headless Chromium") {
  if (skip_browser()) return;
  require_chromium();
  TempDir tmp;
  fs::path html = tmp.path() / "out.html";
  Result r = run_gate({"compare", "--baseline", (source_dir() / "baselines/demo.json").string(), "--current",
                       (source_dir() / "fixtures/compare/regressed.json").string(), "--html", html.string()},
                      tmp.path());
  INFO("gate stderr: " << r.err);
  REQUIRE(r.exit_code == 1);
  REQUIRE(fs::exists(html));
  std::string page = slurp(html);
  boost::json::value data = page_data(page);
  const auto& tasks = data.at("tasks").as_array();

  // The first task the verdict lists (flipped, regressed, ...); the filter is its scenario.
  const boost::json::value* target = &tasks.at(0);
  const std::string status = str(target->at("status").as_array().at(0));
  REQUIRE_MESSAGE(status != "unchanged", "the regressed fixture should change some task");
  std::string id = str(target->at("id")), q = str(target->at("scenario"));
  REQUIRE(!q.empty());

  SUBCASE("without parameters every row is shown and no panel is open") {
    Browser b = load(html, "", tmp.path());
    check_clean_load(b);
    std::vector<Row> all = rows(b.dom);
    CHECK(all.size() == tasks.size());
    for (const Row& row : all)
      CHECK_FALSE(row.hidden);
    std::string open_tag;
    CHECK(detail_panel(b.dom, open_tag) == "</section>\n");
    CHECK(open_tag.find(" hidden") != std::string::npos);
  }

  SUBCASE("?q= hides the rows that do not match and ?open= shows both sides' runs") {
    Browser b =
        load(html, "q=" + percent_encode(q, false) + "&open=" + percent_encode(id, false), tmp.path());
    check_clean_load(b);
    std::vector<Row> all = rows(b.dom);
    REQUIRE(all.size() == tasks.size());
    std::size_t shown = 0;
    for (const Row& row : all) {
      const auto& t = tasks.at(row.index);
      bool match = lower(str(t.at("id"))).find(lower(q)) != std::string::npos ||
                   lower(str(t.at("scenario"))).find(lower(q)) != std::string::npos;
      INFO("task " << str(t.at("id")));
      CHECK(row.hidden == !match);
      shown += !row.hidden;
    }
    // The filter did something: the demo has four scenarios.
    CHECK(shown > 0);
    CHECK(shown < all.size());
    CHECK(b.dom.find("<span id=\"gate-count\" class=\"muted\">" + std::to_string(shown) + " of " +
                     std::to_string(all.size()) + " tasks shown</span>") != std::string::npos);

    std::string open_tag;
    std::string panel = detail_panel(b.dom, open_tag);
    CHECK(open_tag.find(" hidden") == std::string::npos);
    CHECK(open_tag.find("data-task=\"" + html_text(id) + "\"") != std::string::npos);
    CHECK(panel.find("<h2 class=\"id\">" + html_text(id) + "</h2>") != std::string::npos);
    const auto& base = target->at("b");
    const auto& cur = target->at("a");
    REQUIRE(run_count(base) > 0);
    REQUIRE(run_count(cur) > 0);
    CHECK(count(panel, "<section class=\"run ") == run_count(base) + run_count(cur));
    CHECK(count(panel, "data-side=\"baseline\" data-run=") == run_count(base));
    CHECK(count(panel, "data-side=\"current\" data-run=") == run_count(cur));
    CHECK(panel.find("<h3>baseline: " + std::to_string(base.at("c").as_int64()) + "/" +
                     std::to_string(base.at("n").as_int64()) + " passed") != std::string::npos);
    CHECK(panel.find("<h3>current: " + std::to_string(cur.at("c").as_int64()) + "/" +
                     std::to_string(cur.at("n").as_int64()) + " passed") != std::string::npos);
    // Per run: outcome, checks, answer, tokens, latency, cache hit.
    CHECK(panel.find("<dt>tokens</dt>") != std::string::npos);
    CHECK(panel.find("<dt>latency</dt>") != std::string::npos);
    CHECK(panel.find("<dt>cache hit</dt>") != std::string::npos);
    CHECK(panel.find("<ul class=\"checks\">") != std::string::npos);
    CHECK(panel.find("<pre class=\"answer\">") != std::string::npos);
    // The row of the opened task is marked.
    std::size_t target_index = static_cast<std::size_t>(target - tasks.data());
    CHECK(b.dom.find("<tr data-i=\"" + std::to_string(target_index) + "\" tabindex=\"0\" class=\"st-" +
                     status + " selected\"") != std::string::npos);
  }
}

TEST_CASE("hostile answers and check details stay text in the browser") {
  if (skip_browser()) return;
  require_chromium();
  TempDir tmp;
  // A current report made from the baseline: one task fails with answers
  // and check details that try to break out of the data block and the DOM.
  boost::json::value report = read_json(source_dir() / "baselines/demo.json");
  auto& task = report.at("tasks").as_array().at(0).as_object();
  const std::string id(task.at("id").as_string());
  const std::string answer =
      "</script><script>document.documentElement.setAttribute('data-pwned','1')</script>"
      "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','2')\">"
      "<!-- <script>\xE2\x80\xA8 & end";
  const std::string detail = "<svg onload=\"document.documentElement.setAttribute('data-pwned','3')\">";
  for (auto& run : task.at("runs").as_array()) {
    auto& o = run.as_object();
    o["passed"] = false;
    o["answer"] = answer;
    for (auto& c : o.at("checks").as_array()) {
      c.as_object()["passed"] = false;
      c.as_object()["detail"] = detail;
    }
  }
  spit(tmp.path() / "current.json", boost::json::serialize(report));
  fs::path html = tmp.path() / "out.html";
  Result r = run_gate({"compare", "--baseline", (source_dir() / "baselines/demo.json").string(), "--current",
                       (tmp.path() / "current.json").string(), "--html", html.string()},
                      tmp.path());
  INFO("gate stderr: " << r.err);
  REQUIRE(r.exit_code == 1);
  std::string page = slurp(html);
  CHECK(page.find("<script>document") == std::string::npos);
  CHECK(page.find("<img") == std::string::npos);
  CHECK(page.find("<svg onload") == std::string::npos);

  Browser b = load(html, "open=" + percent_encode(id, false), tmp.path());
  check_clean_load(b);
  // No injected handler ran: it would have set the attribute on <html>.
  CHECK(b.dom.find(" data-pwned=\"") == std::string::npos);
  std::string open_tag;
  std::string panel = detail_panel(b.dom, open_tag);
  // The answer is shown as text, entity-escaped in the serialized DOM.
  CHECK(panel.find("<pre class=\"answer\">&lt;/script&gt;&lt;script&gt;document.documentElement") !=
        std::string::npos);
  CHECK(panel.find("&lt;svg onload=") != std::string::npos);
  CHECK(count(b.dom, "<img") == 0);
}

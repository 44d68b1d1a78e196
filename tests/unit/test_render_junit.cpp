#include <doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include <gate/render/junit.hpp>
#include <gate/util/text.hpp>

using namespace gate;
using report::Report;

namespace {

// A small, strict XML 1.0 well-formedness checker for what report_junit
// emits: the declaration, elements with quoted attributes (unique names),
// text, and the five predefined entities plus decimal character
// references. Records every element as "name" → its attributes, in order.
struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;
};

struct Xml {
  std::string_view s;
  std::size_t i = 0;
  std::vector<Element> elements;
  std::string error;

  bool fail(const std::string& why) {
    if (error.empty()) error = why + " at byte " + std::to_string(i);
    return false;
  }
  static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }
  bool name(std::string& out) {
    std::size_t b = i;
    while (i < s.size() && name_char(s[i]))
      ++i;
    out = std::string(s.substr(b, i - b));
    return !out.empty() || fail("expected a name");
  }
  // Character data up to `stop`; decodes references into `out`.
  bool chars(char stop, std::string& out) {
    while (i < s.size() && s[i] != stop) {
      char c = s[i];
      if (c == '<') return fail("raw < in character data");
      if (stop == '"' && c == '"') break;
      if (c == '&') {
        std::size_t semi = s.find(';', i);
        if (semi == std::string_view::npos) return fail("unterminated reference");
        std::string_view ref = s.substr(i + 1, semi - i - 1);
        static const std::map<std::string_view, char> k_named = {
            {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
        if (auto it = k_named.find(ref); it != k_named.end()) {
          out += it->second;
        } else if (ref.size() > 1 && ref[0] == '#' &&
                   ref.find_first_not_of("0123456789", 1) == std::string::npos) {
          int code = std::stoi(std::string(ref.substr(1)));
          if (code != 9 && code != 10 && code != 13 && code < 0x20)
            return fail("reference to a forbidden character");
          out += static_cast<char>(code);
        } else {
          return fail("unknown entity &" + std::string(ref) + ";");
        }
        i = semi + 1;
        continue;
      }
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') return fail("forbidden control character");
      out += c;
      ++i;
    }
    return true;
  }
  void space() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
      ++i;
  }
  bool element() {
    if (i >= s.size() || s[i] != '<') return fail("expected <");
    ++i;
    Element e;
    if (!name(e.name)) return false;
    std::size_t me = elements.size();
    elements.push_back(e);
    for (;;) {
      space();
      if (i < s.size() && s[i] == '/') {
        if (s.substr(i, 2) != "/>") return fail("expected />");
        i += 2;
        return true;
      }
      if (i < s.size() && s[i] == '>') {
        ++i;
        break;
      }
      std::string attr, value;
      if (!name(attr)) return false;
      if (s.substr(i, 2) != "=\"") return fail("expected =\"");
      i += 2;
      if (!chars('"', value)) return false;
      if (i >= s.size()) return fail("unterminated attribute");
      ++i;
      if (!elements[me].attrs.emplace(attr, value).second) return fail("duplicate attribute " + attr);
    }
    for (;;) {
      std::string text;
      if (!chars('<', text)) return false;
      elements[me].text += text;
      if (i >= s.size()) return fail("unclosed <" + elements[me].name + ">");
      if (s.substr(i, 2) == "</") {
        i += 2;
        std::string close;
        if (!name(close)) return false;
        if (close != elements[me].name) return fail("</" + close + "> closes <" + elements[me].name + ">");
        if (i >= s.size() || s[i] != '>') return fail("expected >");
        ++i;
        return true;
      }
      if (!element()) return false;
    }
  }
  bool document() {
    const std::string_view decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    if (s.substr(0, decl.size()) != decl) return fail("missing XML declaration");
    if (!valid_utf8(s)) return fail("invalid UTF-8");
    i = decl.size();
    if (!element()) return false;
    space();
    return i == s.size() || fail("data after the root element");
  }
};

Xml parse(const std::string& xml) {
  Xml x;
  x.s = xml;
  bool ok = x.document();
  INFO("XML: ", xml);
  CHECK_MESSAGE(ok, x.error);
  return x;
}

const Element* find(const Xml& x, const std::string& name, const std::string& attr,
                    const std::string& value) {
  for (const auto& e : x.elements)
    if (e.name == name && e.attrs.count(attr) && e.attrs.at(attr) == value) return &e;
  return nullptr;
}

results::Run run(int index, bool passed, double latency_ms) {
  results::Run r;
  r.index = index;
  r.passed = passed;
  r.answer = passed ? "Paris" : "Lyon";
  r.checks = {{"mentions Paris", passed, passed ? "" : "got Lyon"}};
  r.latency_ms = latency_ms;
  return r;
}

// Hand-set stats: the renderer formats, it does not compute.
Report sample() {
  Report r;
  r.gate_version = "0.1.0";
  r.suite = {"capitals", "2", std::string(64, 'f')};
  results::Task flaky{"geo-1", "geo", "", "", {run(0, true, 800), run(1, false, 900), run(2, true, 1000)}};
  results::Task pass{"geo-2", "geo", "", "", {run(0, true, 100), run(1, true, 100), run(2, true, 100)}};
  results::Task errored{"t-err", "", "", "", {run(0, false, 0), run(1, false, 0), run(2, false, 0)}};
  for (auto& e : errored.runs) {
    e.error = e.index == 2 ? "connection" : "timeout";
    e.error_message = "no response";
    e.checks.clear();
  }
  results::Task partly{"t-partly", "geo", "", "", {run(0, true, 10), run(1, false, 0)}};
  partly.runs[1].error = "rate_limit";
  partly.runs[1].checks.clear();
  r.tasks = {flaky, pass, errored, partly};
  metrics::TaskStats s_flaky, s_pass, s_err, s_partly;
  s_flaky.n = 3;
  s_flaky.c = 2;
  s_pass.n = 3;
  s_pass.c = 3;
  s_err.errored = 3;
  s_partly.n = 1;
  s_partly.c = 1;
  s_partly.errored = 1;
  r.task_stats = {s_flaky, s_pass, s_err, s_partly};
  return r;
}

} // namespace

TEST_CASE("one testcase per task; failures and errors counted per task") {
  std::string xml = render::report_junit(sample());
  Xml x = parse(xml);
  const Element* suite = find(x, "testsuite", "name", "capitals");
  REQUIRE(suite != nullptr);
  CHECK(suite->attrs.at("tests") == "4");
  CHECK(suite->attrs.at("failures") == "1");
  CHECK(suite->attrs.at("errors") == "1");
  // 800 + 900 + 1000 + 3·100 + 10 ms = 3010 ms.
  CHECK(suite->attrs.at("time") == "3.010");
  CHECK(find(x, "testsuites", "tests", "4") != nullptr);

  const Element* flaky = find(x, "testcase", "name", "geo-1");
  REQUIRE(flaky != nullptr);
  CHECK(flaky->attrs.at("classname") == "geo");
  CHECK(flaky->attrs.at("time") == "2.700"); // 800 + 900 + 1000 ms
  const Element* failure = find(x, "failure", "message", "2/3 runs passed");
  REQUIRE(failure != nullptr);
  CHECK(failure->text == "run 1: check \"mentions Paris\" failed: got Lyon\n  answer: Lyon\n");

  // Two timeouts and one connection error: the type is the commonest bucket.
  const Element* error = find(x, "error", "type", "timeout");
  REQUIRE(error != nullptr);
  CHECK(error->attrs.at("message") == "3 of 3 runs errored");
  CHECK(error->text == "run 0: error timeout: no response\nrun 1: error timeout: no response\n"
                       "run 2: error connection: no response\n");
  // A task without a scenario is classed under the suite.
  CHECK(find(x, "testcase", "name", "t-err")->attrs.at("classname") == "capitals");

  // All runs that ran passed: not a failure, but the errored run is shown.
  CHECK(xml.find("<testcase classname=\"geo\" name=\"geo-2\" time=\"0.300\"/>") != std::string::npos);
  CHECK(xml.find("<system-out>run 1: error rate_limit\n</system-out>") != std::string::npos);
}

TEST_CASE("a failing task's body starts with what it asked: the question, escaped") {
  Report r = sample();
  for (auto& t : r.tasks)
    if (t.id == "geo-1")
      t.input = "system: You answer geography questions.\n\nuser: Capital of <France> & \x01?";
  Xml x = parse(render::report_junit(r));
  REQUIRE(x.error.empty());
  const Element* failure = find(x, "failure", "message", "2/3 runs passed");
  REQUIRE(failure != nullptr);
  // The system prompt every task shares is left out; the control byte is U+FFFD.
  CHECK(failure->text == "input: user: Capital of <France> & \xEF\xBF\xBD?\n"
                         "run 1: check \"mentions Paris\" failed: got Lyon\n  answer: Lyon\n");
}

TEST_CASE("the checker itself rejects what is not well-formed") {
  const std::string decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  auto ok = [&](const std::string& body) {
    std::string text = decl + body;
    Xml x;
    x.s = text;
    return x.document();
  };
  CHECK(ok("<a x=\"1\"><b/>t&amp;&#10;</a>"));
  CHECK_FALSE(ok("<a><b></a>"));
  CHECK_FALSE(ok("<a>1 < 2</a>"));
  CHECK_FALSE(ok("<a>&nbsp;</a>"));
  CHECK_FALSE(ok("<a x=\"1\" x=\"2\"/>"));
  CHECK_FALSE(ok("<a>\x01</a>"));
  CHECK_FALSE(ok("<a>&#1;</a>"));
  CHECK_FALSE(ok("<a>\xff</a>"));
  CHECK_FALSE(ok("<a/><b/>"));
}

TEST_CASE("incomplete reports are marked") {
  Report r = sample();
  r.complete = false;
  r.incomplete_reason = "interrupted";
  Xml x = parse(render::report_junit(r));
  CHECK(find(x, "property", "name", "complete")->attrs.at("value") == "false");
  CHECK(find(x, "property", "name", "incomplete_reason")->attrs.at("value") == "interrupted");
}

TEST_CASE("well-formed XML whatever the bytes in ids, scenarios, answers and details") {
  const std::vector<std::string> nasty = {"]]>",
                                          "<!--",
                                          "\"quoted\" & 'single'",
                                          std::string("nul\0byte", 8),
                                          "\x01\x02\x1f",
                                          "\xff\xfe bad",
                                          "\xef\xbf\xbe",
                                          "</testcase>",
                                          "a\r\nb",
                                          "<![CDATA[x]]>",
                                          "&amp;",
                                          "\xc3",
                                          "\xed\xa0\x80"};
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    Report r = sample();
    auto pick = [&] { return nasty[rng() % nasty.size()] + nasty[rng() % nasty.size()]; };
    for (auto& t : r.tasks) {
      t.id = pick();
      t.scenario = pick();
      t.input = "user: " + pick();
      for (auto& run : t.runs) {
        run.answer = pick();
        run.error_message = run.errored() ? pick() : "";
        for (auto& c : run.checks) {
          c.label = pick();
          c.detail = pick();
        }
      }
    }
    r.suite.name = pick();
    r.incomplete_reason = pick();
    r.complete = round % 2 == 0;
    std::string xml = render::report_junit(r);
    Xml x = parse(xml);
    if (!x.error.empty()) break;
    CHECK(x.elements.size() >= 7); // testsuites, testsuite, properties, ≥3 properties, 4 testcases
  }
}

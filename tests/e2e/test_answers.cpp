// End-to-end: whatever the model produced is an answer (docs/metrics.md
// "Measured runs"): a refusal, a length cut-off, a content-filter finish and
// a tool call whose arguments are not JSON are measured runs, scored by the
// checks, recorded and replayed with --mode replay-only, and a streamed call
// gives the verdict a plain one gives. Each on OpenAI chat, the Responses API
// and Anthropic, the fake upstream speaking each one's real shapes.
#include <doctest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;
using gate::testing::FakeUpstream;
using gate::testing::Rule;
using gate::testing::Script;

namespace {

constexpr int k_cases = 10;
constexpr int k_runs = 2;

// Ten cases "question N"; case 7 is the one the script answers in a shape.
void write_suite(const fs::path& dir, const std::string& checks) {
  std::string lines;
  for (int i = 0; i < k_cases; ++i)
    lines += R"({"id": "q)" + std::to_string(i) + R"(", "input": "question )" + std::to_string(i) +
             R"(", "checks": )" + checks + "}\n";
  spit(dir / "cases.jsonl", lines);
  Result created = run_gate({"suite", "create", "suite", "--name", "answers", "--from", "cases.jsonl"}, dir);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
}

void write_config(const fs::path& dir, const std::string& provider, const std::string& api,
                  const std::string& base, bool stream) {
  spit(dir / "gate.yaml", "suite:\n  path: suite\nmodel:\n  provider: " + provider + "\n" +
                              (api.empty() ? "" : "  api: " + api + "\n") +
                              "  name: fake-model\n  base_url: " + base +
                              "\n  api_key_env: null\n  stream: " + (stream ? "true" : "false") +
                              "\nruns: " + std::to_string(k_runs) + "\ncache:\n  dir: cache\n");
}

// What the checks made of each run: the parts a plain and a streamed call
// must agree on (not the fingerprint: a streamed request differs).
boost::json::array verdicts(const boost::json::value& report) {
  boost::json::array out;
  for (const auto& t : report.at("tasks").as_array())
    for (const auto& r : t.at("runs").as_array()) {
      boost::json::object v;
      v["task"] = t.at("id");
      for (const char* field : {"passed", "error", "checks", "answer", "answer_sha256", "tool_calls"})
        v[field] = r.at(field);
      out.push_back(std::move(v));
    }
  return out;
}

const boost::json::object& run_of(const boost::json::value& report, const std::string& task) {
  for (const auto& t : report.at("tasks").as_array())
    if (t.at("id").as_string() == task) return t.at("runs").as_array()[0].as_object();
  FAIL("no task " << task);
  throw std::logic_error("unreachable");
}

struct Dialect {
  std::string provider; // gate.yaml's model.provider
  std::string api;      // gate.yaml's model.api line, or ""
};

// Records, checks the report is measured, replays offline; returns the
// recorded report.
boost::json::value record_and_replay(const fs::path& dir, FakeUpstream& upstream) {
  Result rec = run_gate({"run", "--config", "gate.yaml", "--out", "rec", "--mode", "record"}, dir);
  INFO(rec.out << rec.err);
  REQUIRE(fs::exists(dir / "rec" / "report.json"));
  CHECK(rec.exit_code == 0);
  CHECK(rec.out.find("0 errored") != std::string::npos);
  const auto sent = upstream.requests();
  CHECK(sent == static_cast<std::uint64_t>(k_cases * k_runs));
  Result rep = run_gate({"run", "--config", "gate.yaml", "--out", "rep", "--mode", "replay-only"}, dir);
  INFO(rep.out << rep.err);
  CHECK(rep.exit_code == rec.exit_code); // not 4: every answer was recorded
  CHECK(upstream.requests() == sent);
  const auto a = read_json(dir / "rec" / "report.json");
  const auto b = read_json(dir / "rep" / "report.json");
  CHECK(outcome_view(a) == outcome_view(b));
  CHECK(a.at("stats").at("overall") == b.at("stats").at("overall"));
  return a;
}

struct Shaped {
  std::string shape;
  std::string answer; // the rule's answer (the refusal's words, the cut text, the arguments)
  std::string checks; // the suite's checks
  bool passes;        // whether case q7 passes them
};

void run_shape(const Shaped& sh, const std::vector<Dialect>& dialects) {
  for (const auto& d : dialects) {
    std::optional<boost::json::array> plain;
    for (const bool stream : {false, true}) {
      CAPTURE(sh.shape);
      CAPTURE(d.provider + d.api);
      CAPTURE(stream);
      Script s;
      Rule rule{"question 7", {sh.answer}};
      rule.shape = sh.shape;
      s.rules = {rule};
      FakeUpstream upstream(s);
      upstream.start();
      TempDir tmp;
      const fs::path dir = tmp.path();
      write_suite(dir, sh.checks);
      write_config(dir, d.provider, d.api, upstream.base_url(), stream);
      const auto report = record_and_replay(dir, upstream);
      const auto& overall = report.at("stats").at("overall");
      for (const auto& v : verdicts(report))
        CHECK(v.at("error").as_string() == "");
      CHECK(boost::json::value_to<double>(overall.at("success_rate")) ==
            doctest::Approx(sh.passes ? 1.0 : double(k_cases - 1) / k_cases));
      const auto& q7 = run_of(report, "q7");
      CHECK(q7.at("error").as_string() == "");
      CHECK(q7.at("passed").as_bool() == sh.passes);
      // The words the model produced are the answer; a call's arguments are not.
      CHECK(q7.at("answer").as_string() == (sh.shape == "bad_arguments" ? "" : sh.answer));
      if (sh.shape == "refusal")
        CHECK(std::string(q7.at("checks").as_array()[0].at("detail").as_string()).find("the model refused") !=
              std::string::npos);
      if (sh.shape == "bad_arguments") {
        REQUIRE(q7.at("tool_calls").as_array().size() == 1);
        CHECK(q7.at("tool_calls").as_array()[0].at("name").as_string() == "lookup");
      }
      const auto v = verdicts(report);
      if (plain)
        CHECK(v == *plain); // streamed: the verdict of the plain call
      else
        plain = v;
    }
  }
}

const std::vector<Dialect> k_all = {{"openai", ""}, {"openai", "responses"}, {"anthropic", ""}};

} // namespace

TEST_CASE("a refusal is an answer: measured, failing the refusal check, recorded, streamed alike") {
  // No refusal phrase in the words: the API's word that it refused is what
  // counts, and the words are the answer the checks see.
  run_shape({"refusal", "Sorry, that is not something I will do.", R"([{"type": "refusal"}])", false}, k_all);
}

TEST_CASE("a length cut-off and a content-filter finish are answers the checks judge") {
  // OpenAI says "length", Anthropic "max_tokens".
  const std::string not_cut =
      R"([{"type": "finish_reason", "not": "length"}, {"type": "finish_reason", "not": "max_tokens"}])";
  run_shape({"length", "The answer is", not_cut, false}, k_all);
  run_shape({"length", "", not_cut, false}, k_all); // nothing before the limit (reasoning, thinking)
  run_shape({"content_filter", "", R"([{"type": "finish_reason", "not": "content_filter"}])", false},
            {{"openai", ""}, {"openai", "responses"}});
}

TEST_CASE("a tool call whose arguments are not JSON is an answer the checks judge, not an error") {
  run_shape({"bad_arguments", R"({"city": "Par)", R"([{"type": "no_tool_call"}])", false}, k_all);
}

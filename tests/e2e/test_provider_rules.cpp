// End-to-end: today's models as the providers answer them (issue 28). The
// fake upstream enforces each provider's documented rule (Script::enforce:
// the 400 with the provider's own body for what the real API refuses), and
// gate runs through it: reasoning models on Chat Completions and the
// Responses API, an Azure deployment of one under another name, Claude 4.5's
// one sampling field, a streamed overloaded_error, a Retry-After waited out
// or refused, and prompt-cache tokens priced. (gate init --model gpt-5-mini,
// followed as printed, is in test_init.cpp.)
#include <doctest.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;
using gate::testing::FakeUpstream;
using gate::testing::Fault;
using gate::testing::Rule;
using gate::testing::Script;

namespace {

bool has(const std::string& hay, const std::string& needle) {
  const bool found = hay.find(needle) != std::string::npos;
  if (!found) MESSAGE("expected \"" << needle << "\" in:\n" << hay);
  return found;
}

// Three cases "what is N" whose answers contain N; one run each.
void write_suite(const fs::path& dir) {
  std::string lines;
  for (int i = 1; i <= 3; ++i)
    lines += R"({"id": "q)" + std::to_string(i) + R"(", "input": "what is )" + std::to_string(i) +
             R"(", "checks": [{"type": "contains", "value": ")" + std::to_string(i) + R"("}]})" + "\n";
  spit(dir / "cases.jsonl", lines);
  Result created = run_gate({"suite", "create", "suite", "--name", "rules", "--from", "cases.jsonl"}, dir);
  INFO(created.out << created.err);
  REQUIRE(created.exit_code == 0);
}

// gate.yaml: `model` holds the model block's lines after provider and base_url.
void write_config(const fs::path& dir, const std::string& provider, const std::string& base,
                  const std::string& model, const std::string& rest = "") {
  spit(dir / "gate.yaml", "suite:\n  path: suite\nmodel:\n  provider: " + provider + "\n  base_url: " + base +
                              "\n  api_key_env: null\n" + model + "runs: 1\ncache:\n  dir: cache\n" + rest);
}

Fault fault(const std::string& match, int status, int times) {
  Fault f;
  f.match = match;
  f.status = status;
  f.times = times;
  return f;
}

std::string text(const boost::json::value& v) { return std::string(v.as_string()); }

Script echo_script() {
  Script s;
  s.rules = {Rule{.match = "", .answers = {"it is 1 2 3"}}};
  return s;
}

struct Ran {
  Result result;
  boost::json::value report;
};

Ran record(const fs::path& dir) {
  Ran r{run_gate({"run", "--config", "gate.yaml", "--mode", "record", "--out", "out"}, dir), nullptr};
  if (fs::exists(dir / "out" / "report.json")) r.report = read_json(dir / "out" / "report.json");
  return r;
}

const boost::json::object& stats(const Ran& r) { return r.report.at("stats").as_object(); }

const boost::json::object& first_run(const Ran& r) {
  return r.report.at("tasks").as_array()[0].at("runs").as_array()[0].as_object();
}

} // namespace

TEST_CASE("OpenAI reasoning models: Chat Completions and the Responses API take what gate sends; a "
          "deployment named otherwise takes it with model.family: reasoning") {
  Script script = echo_script();
  script.enforce = "openai-reasoning";
  FakeUpstream upstream(script);
  upstream.start();
  struct Case {
    const char* what;
    std::string model; // the model block
    const char* limit; // the body's max-tokens field
  };
  for (const Case& c :
       {Case{"chat, o4-mini", "  name: o4-mini\n", "\"max_completion_tokens\":512"},
        Case{"responses, gpt-5", "  api: responses\n  name: gpt-5\n", "\"max_output_tokens\":512"},
        Case{"chat, an alias", "  name: prod-reasoner\n  family: reasoning\n",
             "\"max_completion_tokens\":512"}}) {
    INFO(c.what);
    TempDir tmp;
    write_suite(tmp.path());
    write_config(tmp.path(), "openai", upstream.base_url(), c.model + "  temperature: 0\n  top_p: 0.5\n");
    const std::size_t before = upstream.requests();
    Ran r = record(tmp.path());
    INFO(r.result.out << r.result.err);
    CHECK(r.result.exit_code == 0);
    CHECK(stats(r).at("errored_runs").as_int64() == 0);
    CHECK(upstream.requests() == before + 3);
    const std::string sent = upstream.log().back().body;
    CHECK(has(sent, c.limit));
    CHECK(sent.find("\"temperature\"") == std::string::npos);
    CHECK(sent.find("\"top_p\"") == std::string::npos);
    // The route says what went on the wire.
    CHECK(r.report.at("route").at("temperature").as_string() == "unset");
  }

  // The alias without model.family: OpenAI's 400, and the run says which
  // key to change, in the report and in gate doctor.
  TempDir tmp;
  write_suite(tmp.path());
  write_config(tmp.path(), "openai", upstream.base_url(), "  name: prod-reasoner\n");
  Ran r = record(tmp.path());
  CHECK(r.result.exit_code == 3);
  CHECK(stats(r).at("errors_by_bucket").at("bad_response").as_int64() == 3);
  CHECK(has(text(first_run(r).at("error_message")),
            "HTTP 400: the model does not take max_tokens: set model.max_tokens: null in gate.yaml, or "
            "model.family: reasoning (gpt-5, o-series) — Unsupported parameter: 'max_tokens'"));
}

TEST_CASE("Claude 4.5: one sampling field is sent, and max_tokens always; the route records what was sent") {
  Script script = echo_script();
  script.enforce = "claude-4.5";
  FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  write_suite(tmp.path());
  write_config(tmp.path(), "anthropic", upstream.base_url(),
               "  name: claude-sonnet-4-5\n  temperature: 0\n  top_p: 0.9\n  max_tokens: null\n  seed: 7\n");
  Ran r = record(tmp.path());
  INFO(r.result.out << r.result.err);
  CHECK(r.result.exit_code == 0);
  CHECK(stats(r).at("errored_runs").as_int64() == 0);
  const std::string sent = upstream.log().back().body;
  CHECK(has(sent, "\"temperature\":0"));
  CHECK(sent.find("\"top_p\"") == std::string::npos);
  CHECK(has(sent, "\"max_tokens\":1024"));
  CHECK(sent.find("\"seed\"") == std::string::npos);
  const auto& route = r.report.at("route").as_object();
  CHECK(route.at("top_p").as_string() == "unset");
  CHECK(route.at("seed").as_string() == "unset");
  CHECK(route.at("max_tokens").as_string() == "1024");

  // The rule is the server's: a model gate's table does not count as 4.5
  // (an older name) gets both fields, and under these rules Anthropic's 400.
  set_yaml(tmp.path() / "gate.yaml", "name", "claude-3-5-sonnet-latest");
  Ran old = record(tmp.path());
  CHECK(old.result.exit_code == 3);
  CHECK(has(text(first_run(old).at("error_message")),
            "HTTP 400: `temperature` and `top_p` cannot both be specified for this model."));
}

TEST_CASE("a streamed overloaded_error is Anthropic's 529: a server error after retries, not a rate limit") {
  Script script = echo_script();
  script.faults = {fault("", 529, 1000)};
  script.faults[0].stream = "error";
  FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  write_suite(tmp.path());
  write_config(tmp.path(), "anthropic", upstream.base_url(),
               "  name: claude-sonnet-4-5\n  stream: true\n  max_retries: 1\n");
  Ran r = record(tmp.path());
  INFO(r.result.out << r.result.err);
  CHECK(r.result.exit_code == 3);
  const auto& buckets = stats(r).at("errors_by_bucket").as_object();
  CHECK(buckets.at("server").as_int64() == 3);
  CHECK_FALSE(buckets.contains("rate_limit"));
  // Retried as a server fault: two attempts a run, each logged as the 529.
  const auto& attempts = first_run(r).at("attempt_log").as_array();
  REQUIRE(attempts.size() == 2);
  CHECK(attempts[0].at("status").as_int64() == 529);
  CHECK(has(text(first_run(r).at("error_message")), "overloaded"));
}

TEST_CASE("Retry-After as the SDKs honour it: a wait within model.max_retry_after_s is waited out, a longer "
          "one errors the run with the reason") {
  Script script = echo_script();
  script.faults = {fault("what is 1", 429, 1), fault("what is 2", 503, 1000)};
  script.faults[0].headers = {{"retry-after", "2"}};
  script.faults[1].headers = {{"retry-after", "120"}};
  FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  write_suite(tmp.path());
  write_config(tmp.path(), "openai", upstream.base_url(), "  name: gpt-4o\n  max_retry_after_s: 60\n",
               "thresholds:\n  max_errored_runs_pct: 50\n");
  const auto start = std::chrono::steady_clock::now();
  Ran r = record(tmp.path());
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(r.result.out << r.result.err);
  CHECK(r.result.exit_code == 0);
  CHECK(took >= 2.0); // the 2 s the server asked for (the SDKs wait up to 60 s), not refused at 8 s
  CHECK(took < 30.0); // and not the 120 s
  for (const auto& t : r.report.at("tasks").as_array()) {
    const auto& run = t.at("runs").as_array()[0].as_object();
    INFO(t.at("id").as_string());
    if (t.at("id").as_string() == "q1") {
      CHECK(run.at("passed").as_bool());
      CHECK(run.at("attempt_log").as_array().size() == 2);
    } else if (t.at("id").as_string() == "q2") {
      CHECK(run.at("error").as_string() == "server");
      CHECK(run.at("attempt_log").as_array().size() == 1);
      CHECK(has(
          text(run.at("error_message")),
          "not retried: the server asked to wait 120 s (Retry-After), above model.max_retry_after_s (60 s)"));
    }
  }
}

TEST_CASE("prompt-cache tokens are counted per run and priced at the cached rate") {
  for (const std::string provider : {"openai", "anthropic"}) {
    INFO(provider);
    Script script = echo_script();
    script.cached_prompt_tokens = 4;
    FakeUpstream upstream(script);
    upstream.start();
    TempDir tmp;
    write_suite(tmp.path());
    const std::string model = provider == "openai" ? "gpt-4o" : "claude-sonnet-4-5";
    // USD per million tokens: prompt 3, cached 0.3, completion 15 (and
    // Anthropic's cache writes 3.75: OpenAI has none to price).
    write_config(tmp.path(), provider, upstream.base_url(), "  name: " + model + "\n",
                 "pricing:\n  " + model + ": {prompt: 3, completion: 15, cached_prompt: 0.3" +
                     (provider == "anthropic" ? ", cache_write: 3.75" : "") + "}\n");
    Ran r = record(tmp.path());
    INFO(r.result.out << r.result.err);
    REQUIRE(r.result.exit_code == 0);
    double expected = 0;
    for (const auto& t : r.report.at("tasks").as_array()) {
      const auto& run = t.at("runs").as_array()[0].as_object();
      // "what is N" (3 words) + 3 = 6 prompt tokens, 4 of them cached;
      // "it is 1 2 3" (5 words) + 1 = 6 completion tokens.
      CHECK(run.at("prompt_tokens").as_int64() == 6);
      CHECK(run.at("cache_read_tokens").as_int64() == 4);
      CHECK(run.at("completion_tokens").as_int64() == 6);
      if (provider == "anthropic") CHECK(run.at("cache_write_tokens").as_int64() == 0);
      expected += (2 * 3 + 4 * 0.3 + 6 * 15) / 1e6;
    }
    // 3 runs × (2 × 3 + 4 × 0.3 + 6 × 15) / 1e6 = 291.6 µ$; all six prompt
    // tokens at the full price would be 324 µ$.
    CHECK(expected == doctest::Approx(291.6e-6));
    CHECK(stats(r).at("cost_usd").as_double() == doctest::Approx(expected));
  }
}

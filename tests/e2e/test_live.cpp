// End-to-end: streamed fresh calls through `gate run`, recorded and replayed.
#include <doctest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>

#include <gate/util/sha256.hpp>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"
#include "tests/support/test_certs.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

const std::string k_key = "sk-live-e2e-0123456789abcdef";

// Points the copied demo at `upstream`, with an empty cache in record mode;
// `extra_model_lines` go below `model:`.
fs::path live_demo(const TempDir& tmp, const gate::testing::FakeUpstream& upstream,
                   const std::string& extra) {
  fs::path config = copy_demo(tmp.path());
  fs::remove_all(tmp.path() / "demo" / "cache");
  std::string text = slurp(config);
  auto replace_value = [&](const std::string& key, const std::string& value) {
    std::size_t at = text.find("  " + key + ":");
    REQUIRE(at != std::string::npos);
    text.replace(at, text.find('\n', at) - at, "  " + key + ": " + value);
  };
  replace_value("base_url", upstream.base_url());
  replace_value("mode", "record");
  replace_value("api_key_env", "GATE_LIVE_E2E_KEY");
  std::size_t model = text.find("\nmodel:\n");
  REQUIRE(model != std::string::npos);
  text.insert(model + 8, extra);
  spit(config, text);
  return config;
}

Result run_live(const fs::path& config, const fs::path& out, const std::string& key = k_key) {
  return run_gate({"run", "--config", config.string(), "--concurrency", "1", "--out", out.string()},
                  config.parent_path(), {{"GATE_LIVE_E2E_KEY", key}});
}

// What a streamed and a plain call must agree on, run by run.
std::string outcomes(const boost::json::value& report) {
  boost::json::array out;
  for (const auto& t : report.at("tasks").as_array())
    for (const auto& r : t.at("runs").as_array()) {
      const auto& run = r.as_object();
      out.push_back(boost::json::object{{"task", t.at("id")},
                                        {"answer", run.at("answer")},
                                        {"passed", run.at("passed")},
                                        {"error", run.at("error")},
                                        {"prompt_tokens", run.at("prompt_tokens")},
                                        {"completion_tokens", run.at("completion_tokens")},
                                        {"usage_known", run.at("usage_known")}});
    }
  return boost::json::serialize(out);
}

// A one-version suite of `cases` (JSON lines) under dir/suite, and a
// gate.yaml recording against `base_url` with `extra` appended.
fs::path small_suite(const TempDir& tmp, const std::string& cases, const std::string& base_url,
                     const std::string& extra = "") {
  const fs::path suite = tmp.path() / "suite";
  fs::create_directories(suite / "versions" / "v1");
  spit(suite / "versions" / "v1" / "cases.jsonl", cases);
  std::size_t count = static_cast<std::size_t>(std::count(cases.begin(), cases.end(), '\n'));
  spit(suite / "metadata.json",
       R"({"name": "live", "latest": "v1", "versions": [{"version": "v1", "sha256": ")" +
           gate::sha256_hex(cases) + R"(", "cases": )" + std::to_string(count) + "}]}");
  const fs::path config = tmp.path() / "gate.yaml";
  spit(config, "suite:\n  path: suite\nmodel:\n  base_url: " + base_url +
                   "\n  api_key_env: GATE_LIVE_E2E_KEY\n  name: task-model\n" + extra +
                   "runs: 2\ncache:\n  dir: cache\n  mode: record\n");
  return config;
}

gate::testing::Script demo_script() {
  return gate::testing::parse_script(slurp(source_dir() / "fixtures" / "demo" / "upstream.json"));
}

} // namespace

TEST_CASE("streamed and plain recordings agree run by run; the cache serves either mode") {
  gate::testing::Script script = demo_script();
  // Two answers cut short by a mid-stream error: retried, never recorded.
  gate::testing::Fault cut;
  cut.status = 529;
  cut.stream = "error";
  cut.times = 2;
  script.faults.push_back(cut);
  gate::testing::FakeUpstream streamed_upstream(script);
  streamed_upstream.start();
  gate::testing::FakeUpstream plain_upstream(demo_script());
  plain_upstream.start();

  TempDir a, b;
  fs::path streamed = live_demo(a, streamed_upstream, "  stream: true\n");
  fs::path plain = live_demo(b, plain_upstream, "");
  Result rs = run_live(streamed, a.path() / "out");
  INFO(rs.err);
  REQUIRE(rs.exit_code == 0);
  Result rp = run_live(plain, b.path() / "out");
  INFO(rp.err);
  REQUIRE(rp.exit_code == 0);

  CHECK(streamed_upstream.requests() == 132 + 2); // two retried attempts
  CHECK(plain_upstream.requests() == 132);
  for (const auto& l : streamed_upstream.log())
    CHECK(l.body.find("\"stream\":true") != std::string::npos);
  auto sr = read_json(a.path() / "out" / "report.json");
  auto pr = read_json(b.path() / "out" / "report.json");
  CHECK(outcomes(sr) == outcomes(pr));

  // The streamed recording is stored in the provider's plain form, keyed
  // without the stream flag: a plain replay-only run finds every entry.
  std::string text = slurp(streamed);
  text.replace(text.find("  stream: true\n"), 15, "");
  text.replace(text.find("mode: record"), 12, "mode: replay-only");
  spit(streamed, text);
  Result replay = run_live(streamed, a.path() / "replay", "");
  INFO(replay.err);
  CHECK(replay.exit_code == 0);
  CHECK(streamed_upstream.requests() == 134);
  CHECK(outcomes(read_json(a.path() / "replay" / "report.json")) == outcomes(pr));
  // rel-27: the two answers cut by an error event were not recorded.
  std::size_t stored = 0;
  for (const auto& f : files_below(a.path() / "demo" / "cache"))
    stored += f.extension() == ".entry" ? 1 : 0;
  CHECK(stored == 132);
  for (const auto& f : files_below(a.path() / "demo" / "cache"))
    CHECK(slurp(f).find("data: ") == std::string::npos);
  // The key went upstream and nowhere else: no file, no output.
  for (const auto& f : files_below(a.path())) {
    CAPTURE(f.string());
    CHECK(slurp(f).find(k_key) == std::string::npos);
  }
  for (const Result* r : {&rs, &rp, &replay})
    CHECK((r->out + r->err).find(k_key) == std::string::npos);
}

TEST_CASE("llm_judge: the judge's calls go through the client and the cache; verdicts land in the run") {
  gate::testing::Script script;
  script.rules = {{"The assistant's answer:\necho: say pass-me", {R"({"verdict":"pass","reason":"fine"})"}},
                  {"The assistant's answer:\necho: say fail-me", {R"(```json
{"verdict": "fail", "reason": "too rude"}
```)"}}};
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  const std::string cases =
      R"({"id": "j-pass", "input": "say pass-me", "checks": [{"type": "llm_judge", "rubric": "Is it polite?"}]})"
      "\n"
      R"({"id": "j-fail", "input": "say fail-me", "checks": [{"type": "contains", "value": "echo"}, )"
      R"({"type": "llm_judge", "name": "tone", "rubric": "Is it polite?"}]})"
      "\n";
  const fs::path config = small_suite(tmp, cases, upstream.base_url(), "judge:\n  model: judge-model\n");

  Result rec = run_live(config, tmp.path() / "rec");
  INFO(rec.err);
  REQUIRE(rec.exit_code == 0);
  CHECK(upstream.requests() == 8); // 2 tasks x 2 runs x (answer + judge)
  int judged = 0;
  for (const auto& l : upstream.log())
    if (l.body.find("\"model\":\"judge-model\"") != std::string::npos) {
      ++judged;
      CHECK(l.body.find("Rubric:\\nIs it polite?") != std::string::npos);
    }
  CHECK(judged == 4);

  auto check_report = [](const boost::json::value& report) {
    for (const auto& t : report.at("tasks").as_array()) {
      std::string id(t.at("id").as_string());
      for (const auto& r : t.at("runs").as_array()) {
        const auto& checks = r.at("checks").as_array();
        const auto& judge = checks.back().as_object();
        CHECK(r.at("error").as_string() == "");
        // The task's own prompt is 2 words + 3 = 5 tokens; the judge's adds more.
        CHECK(r.at("prompt_tokens").as_int64() > 5);
        if (id == "j-pass") {
          CHECK(judge.at("label").as_string() == "llm_judge");
          CHECK(judge.at("passed").as_bool());
          CHECK(r.at("passed").as_bool());
        } else {
          CHECK(judge.at("label").as_string() == "llm_judge:tone");
          CHECK_FALSE(judge.at("passed").as_bool());
          CHECK(judge.at("detail").as_string() == "too rude");
          CHECK_FALSE(r.at("passed").as_bool());
        }
      }
    }
  };
  auto first = read_json(tmp.path() / "rec" / "report.json");
  check_report(first);

  // Replay-only without a key: the judge's verdicts come from the cache too.
  std::string text = slurp(config);
  text.replace(text.find("mode: record"), 12, "mode: replay-only");
  spit(config, text);
  Result rep = run_live(config, tmp.path() / "rep", "");
  INFO(rep.err);
  CHECK(rep.exit_code == 0);
  CHECK(upstream.requests() == 8);
  auto second = read_json(tmp.path() / "rep" / "report.json");
  check_report(second);
  CHECK(outcomes(first) == outcomes(second));
}

TEST_CASE("rel-30: a context overflow is the task's failure, not an infrastructure error") {
  gate::testing::Fault overflow;
  overflow.match = "too long";
  overflow.status = 400;
  overflow.times = 100;
  overflow.body = R"({"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum",)"
                  R"("type":"invalid_request_error","code":null}})";
  gate::testing::Script script;
  script.faults = {overflow};
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  const std::string cases =
      R"({"id": "fits", "input": "short", "checks": [{"type": "contains", "value": "short"}]})"
      "\n"
      R"({"id": "overflows", "input": "far too long", "checks": [{"type": "contains", "value": "x"}]})"
      "\n";
  Result r = run_live(small_suite(tmp, cases, upstream.base_url()), tmp.path() / "out");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(upstream.requests() == 4); // not retried
  auto report = read_json(tmp.path() / "out" / "report.json");
  for (const auto& t : report.at("tasks").as_array()) {
    if (t.at("id").as_string() != "overflows") continue;
    for (const auto& run : t.at("runs").as_array()) {
      CHECK(run.at("error").as_string() == "");
      CHECK_FALSE(run.at("passed").as_bool());
      CHECK(run.at("checks").as_array().at(0).at("label").as_string() == "context_length");
    }
  }
}

TEST_CASE("rel-16/17: a certificate for another host, or a missing trust bundle, exits 3 before any answer") {
  auto ca = gate::testing::make_test_ca();
  auto other = gate::testing::issue_server_cert(ca, {"other.example"});
  gate::testing::FakeUpstream upstream(gate::testing::Script{});
  upstream.start_tls(0, 2, other.cert, other.key);
  TempDir tmp;
  spit(tmp.path() / "ca.pem", ca.cert);
  const std::string cases = R"({"id": "t", "input": "hi", "checks": [{"type": "contains", "value": "hi"}]})"
                            "\n";
  fs::path config = small_suite(tmp, cases, upstream.base_url(), "  ca_file: ca.pem\n");
  Result r = run_live(config, tmp.path() / "out");
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("tls: certificate does not match host localhost") != std::string::npos);
  CHECK(upstream.requests() == 0);

  TempDir tmp2;
  config = small_suite(tmp2, cases, upstream.base_url());
  Result missing =
      run_gate({"run", "--config", config.string(), "--out", (tmp2.path() / "out").string()}, tmp2.path(),
               {{"GATE_LIVE_E2E_KEY", k_key}, {"SSL_CERT_FILE", "/nonexistent/ca.pem"}});
  CHECK(missing.exit_code == 3);
  CHECK(missing.err.find("SSL_CERT_FILE") != std::string::npos);
  CHECK(upstream.requests() == 0);
}

TEST_CASE("responses API: a streamed recording replays offline to the same runs; chat does not share it") {
  gate::testing::FakeUpstream upstream(gate::testing::Script{});
  upstream.start();
  TempDir tmp;
  const std::string cases =
      R"({"id": "r1", "input": "hello there", "checks": [{"type": "contains", "value": "hello"}]})"
      "\n"
      R"({"id": "r2", "input": "second one", "checks": [{"type": "contains", "value": "nope"}]})"
      "\n";
  fs::path config = small_suite(tmp, cases, upstream.base_url(), "  api: responses\n  stream: true\n");
  Result rec = run_live(config, tmp.path() / "rec");
  INFO(rec.err);
  REQUIRE(rec.exit_code == 0); // no baseline: r2 failing its check is data, not an error
  CHECK(upstream.requests() == 4);
  for (const auto& l : upstream.log()) {
    CHECK(l.target == "/v1/responses");
    CHECK(l.body.find(R"("input":[{"content":)") != std::string::npos);
    CHECK(l.body.find(R"("stream":true)") != std::string::npos);
  }
  auto recorded = read_json(tmp.path() / "rec" / "report.json");
  // The fake's usage: prompt = 2 words + 3, completion = "echo: hello there" 3 words + 1.
  CHECK(recorded.at("tasks").at(0).at("runs").at(0).at("prompt_tokens").as_int64() == 5);
  CHECK(recorded.at("tasks").at(0).at("runs").at(0).at("answer").as_string() == "echo: hello there");

  std::string text = slurp(config);
  text.replace(text.find("  stream: true\n"), 15, "");
  text.replace(text.find("mode: record"), 12, "mode: replay-only");
  spit(config, text);
  Result replay = run_live(config, tmp.path() / "replay", "");
  INFO(replay.err);
  CHECK(replay.exit_code == 0);
  CHECK(upstream.requests() == 4);
  CHECK(outcomes(read_json(tmp.path() / "replay" / "report.json")) == outcomes(recorded));

  // The same cases over Chat Completions are other requests: every one misses.
  text.replace(text.find("  api: responses\n"), 17, "");
  spit(config, text);
  Result chat = run_live(config, tmp.path() / "chat", "");
  CHECK(chat.exit_code == 4);
  CHECK(upstream.requests() == 4);
}

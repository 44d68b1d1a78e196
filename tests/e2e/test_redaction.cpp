// End-to-end: the key in every encoding an upstream body can carry it
// (RELIABILITY.md item 3): raw, JSON \u escapes, split across two stream
// events, base64 of a text holding it at each byte alignment, its last 8
// characters. None may reach the cache, the report, the Markdown, the
// baseline, the output or a client of the proxy.
#include <doctest.h>

#include <boost/json.hpp>

#include <gate/util/redact.hpp>
#include <gate/util/sha256.hpp>

#include "harness.hpp"
#include "sdk/proxy_child.hpp"
#include <tests/support/fake_upstream.hpp>

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

const std::string k_key = "sk-canary-7f3a9b1c2d4e5f60";

std::string u_escaped(const std::string& s) {
  static const char* k_hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s)
    out += std::string("\\u00") + k_hex[c >> 4] + k_hex[c & 15];
  return out;
}

// The answers, by the word in the prompt that asks for them. Each is how
// the body writes the content string, JSON-escaped where it needs to be.
const std::vector<std::pair<std::string, std::string>> k_encodings = {
    {"raw", "the key is " + k_key},
    {"escaped", "the key is " + u_escaped(k_key)},
    {"b64-0", "blob " + gate::base64_encode(k_key + "!")},
    {"b64-1", "blob " + gate::base64_encode("a" + k_key + "!")},
    {"b64-2", "blob " + gate::base64_encode("ab" + k_key + "!")},
    {"tail", "ends in 2d4e5f60"},
};
// Split so that neither event holds the last 8 characters whole.
const std::string k_split_a = "the key is sk-canary-7f3a9b1c2d4";
const std::string k_split_b = "e5f60, keep it";

// Substrings that give the key away, computed here without gate's own
// redaction: the key, its tail, its escaped form, the pieces of the split,
// and for each alignment 12 base64 characters that encode key bytes only.
std::vector<std::string> giveaways() {
  std::vector<std::string> g = {k_key, "sk-canary", "2d4e5f60", u_escaped("canary"), "e5f60,"};
  g.push_back(gate::base64_encode(k_key).substr(0, 12));
  g.push_back(gate::base64_encode("a" + k_key).substr(4, 12));
  g.push_back(gate::base64_encode("ab" + k_key).substr(4, 12));
  return g;
}

// The first give-away `text` holds, or "".
std::string leak_in(const std::string& text) {
  for (const auto& g : giveaways())
    if (text.find(g) != std::string::npos) return g;
  return "";
}

void check_clean(const fs::path& dir, const std::vector<const std::string*>& printed) {
  for (const auto& f : files_below(dir)) {
    CAPTURE(f.string());
    CHECK(leak_in(slurp(f)) == "");
  }
  for (const std::string* text : printed)
    CHECK(leak_in(*text) == "");
}

std::string chat_body(const std::string& content) {
  return R"({"id":"chatcmpl-x","object":"chat.completion","model":"m","choices":[{"index":0,"message":)"
         R"({"role":"assistant","content":")" +
         content +
         R"("},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}})";
}

std::string chunk(const std::string& content) {
  return R"(data: {"id":"chatcmpl-s","object":"chat.completion.chunk","model":"m","choices":[{"index":0,)"
         R"("delta":{"content":")" +
         content + "\"},\"finish_reason\":null}]}\n\n";
}

std::string split_stream() {
  return chunk(k_split_a) + chunk(k_split_b) +
         R"(data: {"id":"chatcmpl-s","object":"chat.completion.chunk","model":"m","choices":[{"index":0,)"
         R"("delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}})"
         "\n\ndata: [DONE]\n\n";
}

// A hostile upstream: a 200 with the body above for each prompt word, and
// the split stream for "split".
gate::testing::Script hostile_script() {
  gate::testing::Script s;
  for (const auto& [word, content] : k_encodings) {
    gate::testing::Fault f;
    f.match = word + " please";
    f.status = 200;
    f.times = 1000;
    f.body = chat_body(content);
    f.headers = {{"content-type", "application/json"}};
    s.faults.push_back(f);
  }
  gate::testing::Fault split;
  split.match = "split please";
  split.status = 200;
  split.times = 1000;
  split.body = split_stream();
  split.headers = {{"content-type", "text/event-stream"}};
  s.faults.push_back(split);
  return s;
}

fs::path hostile_suite(const fs::path& dir, const std::string& base_url) {
  std::string cases;
  std::vector<std::string> words;
  for (const auto& e : k_encodings)
    words.push_back(e.first);
  words.push_back("split");
  for (const auto& w : words)
    cases += R"({"id": "leak-)" + w + R"(", "input": ")" + w +
             R"( please", "checks": [{"type": "contains", "value": "key"}]})"
             "\n";
  fs::create_directories(dir / "suite" / "versions" / "v1");
  spit(dir / "suite" / "versions" / "v1" / "cases.jsonl", cases);
  spit(dir / "suite" / "metadata.json",
       R"({"name": "leaks", "latest": "v1", "versions": [{"version": "v1", "sha256": ")" +
           gate::sha256_hex(cases) + R"(", "cases": )" + std::to_string(words.size()) + "}]}");
  spit(dir / "gate.yaml",
       "suite:\n  path: suite\nmodel:\n  base_url: " + base_url +
           "\n  api_key_env: GATE_LEAK_KEY\n  name: m\n  stream: true\nruns: 1\n"
           "cache:\n  dir: cache\n  mode: record\noutputs:\n  dir: out\nbaseline: base.json\n");
  return dir / "gate.yaml";
}

ProxyAnswer post(unsigned short port, const std::string& target, const std::string& body) {
  return send_to_proxy(port, "POST", target, "127.0.0.1:" + std::to_string(port), body);
}

} // namespace

TEST_CASE("rel-03: gate run keeps the key in every encoding out of cache, report, Markdown and baseline") {
  gate::testing::clear_network_env();
  gate::testing::FakeUpstream upstream(hostile_script());
  upstream.start();
  TempDir tmp;
  fs::path config = hostile_suite(tmp.path(), upstream.base_url());
  const std::map<std::string, std::string> env{{"GATE_LEAK_KEY", k_key}};

  Result rec = run_gate({"run", "--config", config.string(), "--quiet"}, tmp.path(), env);
  INFO(rec.err);
  REQUIRE(rec.exit_code <= 1);
  REQUIRE(upstream.requests() == k_encodings.size() + 1);
  const auto report = read_json(tmp.path() / "out" / "report.json");
  for (const auto& task : report.at("tasks").as_array()) {
    CAPTURE(task.at("id").as_string());
    const auto& run = task.at("runs").as_array().at(0);
    CHECK(run.at("error").as_string() == "");
    CHECK(std::string(run.at("answer").as_string()).find("[REDACTED]") != std::string::npos);
  }
  Result base = run_gate({"baseline", "update", "--report", "out/report.json", "--baseline", "base.json"},
                         tmp.path(), env);
  INFO(base.err);
  CHECK(base.exit_code == 0);
  CHECK(fs::exists(tmp.path() / "base.json"));
  // Replay serves what was stored: the same clean answers, no new call.
  Result rep =
      run_gate({"run", "--config", config.string(), "--mode", "replay-only", "--quiet", "--out", "rep"},
               tmp.path(), env);
  CHECK(rep.exit_code <= 1);
  CHECK(upstream.requests() == k_encodings.size() + 1);
  check_clean(tmp.path(), {&rec.out, &rec.err, &base.out, &base.err, &rep.out, &rep.err});
}

TEST_CASE("rel-03: gate proxy never hands the key to its client nor stores it, in any encoding") {
  gate::testing::clear_network_env();
  gate::testing::FakeUpstream upstream(hostile_script());
  upstream.start();
  TempDir tmp;
  copy_demo(tmp.path());
  write_config(tmp.path(), upstream.base_url());
  const std::map<std::string, std::string> env{{"GATE_PROXY_TEST_KEY", k_key}};

  auto request = [](const std::string& word, bool stream) {
    return R"({"model":"m",)" + std::string(stream ? R"("stream":true,)" : "") +
           R"("messages":[{"role":"user","content":")" + word + R"( please"}]})";
  };
  std::vector<std::pair<std::string, bool>> asks;
  for (const auto& e : k_encodings)
    asks.emplace_back(e.first, false);
  asks.emplace_back("split", true);

  std::string rec_out;
  unsigned short port = 0;
  Child rec = start_proxy(tmp.path(), "record", env, rec_out, port);
  REQUIRE(port != 0);
  std::vector<std::string> bodies;
  for (const auto& ask : asks) {
    const auto& word = ask.first;
    const auto& stream = ask.second;
    CAPTURE(word);
    ProxyAnswer a = post(port, "/t/leak/r/0/chat/completions", request(word, stream));
    CHECK(a.status == 200);
    CHECK(leak_in(a.body) == "");
    CHECK(a.body.find("[REDACTED]") != std::string::npos);
    bodies.push_back(a.body);
  }
  Result r1 = stop(rec);
  upstream.stop();

  std::string rep_out;
  Child rep = start_proxy(tmp.path(), "replay-only", env, rep_out, port);
  REQUIRE(port != 0);
  for (std::size_t i = 0; i < asks.size(); ++i) {
    CAPTURE(asks[i].first);
    ProxyAnswer a = post(port, "/t/leak/r/0/chat/completions", request(asks[i].first, asks[i].second));
    CHECK(a.status == 200);
    CHECK(a.body == bodies[i]);
  }
  Result r2 = stop(rep);
  check_clean(tmp.path(), {&rec_out, &rep_out, &r1.out, &r1.err, &r2.out, &r2.err});
}

TEST_CASE(
    "rel-03: gate analyze redacts the configured key from a harness's answers in report.json and report.md") {
  TempDir tmp;
  spit(tmp.path() / "gate.yaml", "suite:\n  path: suite\nmodel:\n  base_url: http://127.0.0.1:9/v1\n"
                                 "  api_key_env: GATE_ANALYZE_KEY\n  name: m\n");
  const std::string short_key = "Qz9k2";
  spit(tmp.path() / "runs.jsonl",
       "{\"task_id\":\"a\",\"run_id\":0,\"passed\":true,\"answer\":\"the key is " + k_key +
           "\"}\n"
           "{\"task_id\":\"a\",\"run_id\":1,\"passed\":false,\"answer\":\"base64 " +
           gate::base64_encode("ab" + k_key) + "\"}\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"analyze", "runs.jsonl", "--out", "out"},
        std::vector<std::string>{"analyze", "runs.jsonl", "--config", "gate.yaml", "--out", "out2"}}) {
    CAPTURE(args.back());
    Result r = run_gate(args, tmp.path(), {{"GATE_ANALYZE_KEY", k_key}});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const fs::path out = tmp.path() / args.back();
    CHECK(slurp(out / "report.json").find("[REDACTED]") != std::string::npos);
    CHECK(slurp(out / "report.md").find("REDACTED") != std::string::npos); // Markdown escapes the brackets
    for (const auto& f : files_below(out)) {
      CAPTURE(f.string());
      CHECK(leak_in(slurp(f)) == "");
    }
    CHECK(leak_in(r.out + r.err) == "");
  }
  // A key under 8 characters, standing alone in the answer.
  spit(tmp.path() / "short.jsonl",
       "{\"task_id\":\"b\",\"run_id\":0,\"passed\":true,\"answer\":\"key " + short_key + " here\"}\n");
  Result r =
      run_gate({"analyze", "short.jsonl", "--out", "out3"}, tmp.path(), {{"GATE_ANALYZE_KEY", short_key}});
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(tmp.path() / "out3" / "report.json").find(short_key) == std::string::npos);
  CHECK(slurp(tmp.path() / "out3" / "report.json").find("key [REDACTED] here") != std::string::npos);
}

// End-to-end: `gate init` (issue 15 item 5). In an empty git repository,
// the printed commands are run as printed against the fake upstream: the
// suite loads with its pins, the config loads, the checks pass on the
// scripted answers, the baseline is promoted, `gate check` passes and a
// push through the pre-push hook goes out. Then a prompt edit reaches the
// hook as a change (issue 15 item 4). And gate init never overwrites.
#include <doctest.h>

#include <sstream>

#include "harness.hpp"
#include "tests/support/fake_upstream.hpp"

using namespace gate::e2e;
namespace fs = std::filesystem;

namespace {

// What a good model answers to each of gate init's cases (matched on the
// case's question), so that every check passes.
const char* k_answers = R"({"rules": [
  {"match": "return a jacket", "answers": ["Hi Ann! You can return it within 30 days of delivery, with the receipt."]},
  {"match": "see my refund", "answers": ["Hi Ben, refunds reach your original payment method within 5-7 business days."]},
  {"match": "thirty dollars", "answers": ["$4.95"]},
  {"match": "money back for order", "answers": ["{\"intent\": \"refund\", \"order\": \"A-1001\"}"]},
  {"match": "Where is my parcel", "answers": ["Shipping"]},
  {"match": "ship to Canada", "answers": ["Hi Femi! Yes: international orders arrive in 10-14 business days."]}
]})";

const char* k_git = "git -c user.name=gate-test -c user.email=gate-test@example.invalid ";
const std::string k_canary = "sk-init-canary-0123456789abcdef";

bool has(const std::string& hay, const std::string& needle) {
  const bool found = hay.find(needle) != std::string::npos;
  if (!found) MESSAGE("expected \"" << needle << "\" in:\n" << hay);
  return found;
}

// The command lines gate init printed after "Next, in this order:".
std::vector<std::string> printed_commands(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out.substr(out.find("Next, in this order:\n") + 21));
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("  ")) lines.push_back(line.substr(2));
  return lines;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

// Runs each printed line as a user would: `export` sets the key (to the
// canary), `gate` and `git` run in `work`. Every command must succeed.
// Returns everything they printed.
std::string follow(const std::vector<std::string>& lines, const fs::path& work,
                   std::map<std::string, std::string>& env) {
  std::string printed;
  for (const std::string& line : lines) {
    INFO("command: " << line);
    if (line.starts_with("#")) continue;
    if (line.starts_with("export ")) {
      const std::string name = line.substr(7, line.find('=') - 7);
      CHECK(name == "OPENAI_API_KEY");
      env[name] = k_canary;
    } else if (line.starts_with("gate ")) {
      const std::vector<std::string> w = words(line);
      Result r = run_gate(std::vector<std::string>(w.begin() + 1, w.end()), work, env);
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      printed += r.out + r.err;
    } else if (line.starts_with("git ")) {
      Result r = sh(work, k_git + line.substr(4));
      INFO(r.out);
      REQUIRE(r.exit_code == 0);
      printed += r.out;
    } else {
      FAIL("gate init printed a line the test cannot follow: " << line);
    }
  }
  return printed;
}

// An empty git repository at tmp/work whose origin is a bare tmp/remote.git.
fs::path git_repo(const TempDir& tmp) {
  const fs::path work = tmp.path() / "work";
  fs::create_directories(work);
  REQUIRE(sh(tmp.path(), "git init -q --bare remote.git").exit_code == 0);
  REQUIRE(sh(work, "git init -q -b main && git remote add origin ../remote.git").exit_code == 0);
  return work;
}

} // namespace

TEST_CASE("gate init in an empty git repository, then its printed commands as printed: the gate passes, "
          "a push goes through the hook, and a prompt edit reaches the hook as a change") {
  gate::testing::FakeUpstream upstream(gate::testing::parse_script(k_answers));
  upstream.start();
  TempDir tmp;
  const fs::path work = git_repo(tmp);

  Result init = run_gate({"init", "--base-url", upstream.base_url()}, work);
  INFO(init.out << init.err);
  REQUIRE(init.exit_code == 0);
  CHECK(has(init.out, "provider openai, model gpt-4o-mini"));
  const std::vector<std::string> lines = printed_commands(init.out);
  REQUIRE(lines.size() >= 8);
  std::map<std::string, std::string> env;
  const std::string printed = follow(lines, work, env);

  // 6 cases x 3 runs recorded once; the check replayed them.
  CHECK(upstream.requests() == 18);
  CHECK(has(printed, "support v1: success 100.0%"));
  CHECK(has(printed, "✅ gate passed"));
  CHECK(fs::exists(work / "baselines" / "support.json"));
  CHECK(fs::exists(work / ".git" / "hooks" / "pre-push"));
  // Everything init wrote is committed by the printed steps, .gitignore too;
  // only the ignored local reports are left out.
  CHECK(sh(work, "git status --porcelain").out.empty());

  // The committed starting point passes the hook, offline.
  Result push = sh(work, "git push -q origin main");
  INFO(push.out);
  CHECK(push.exit_code == 0);
  CHECK(has(push.out, "checked commit "));
  CHECK(upstream.requests() == 18);

  // A prompt edit, committed: the hook checks it against the baseline
  // replay-only, and the edited prompt's requests are not recorded yet.
  const fs::path prompt = work / "prompts" / "support.md";
  spit(prompt, slurp(prompt) + "- Always thank the customer.\n");
  REQUIRE(sh(work, std::string(k_git) + "commit -q -am 'Thank the customer'").exit_code == 0);
  Result blocked = sh(work, "git push -q origin main");
  INFO(blocked.out);
  CHECK(blocked.exit_code != 0);
  CHECK(has(blocked.out, "missing from the cache"));
  CHECK(has(blocked.out, "gate run --config gate.yaml --mode replay"));

  // Recorded as the hook says and committed: the push goes through, and the
  // hook's verdict names the prompt and the tasks it changed.
  Result rec = run_gate({"run", "--config", "gate.yaml", "--mode", "replay", "--quiet"}, work, env);
  INFO(rec.out << rec.err);
  REQUIRE(rec.exit_code == 0);
  CHECK(upstream.requests() == 36);
  CHECK(has(upstream.log().back().body, "Always thank the customer."));
  REQUIRE(sh(work, std::string(k_git) + "add evals && " + k_git + "commit -q -m 'Record'").exit_code == 0);
  Result pass = sh(work, "git push -q origin main");
  INFO(pass.out);
  CHECK(pass.exit_code == 0);
  const std::string head = sh(work, "git rev-parse --short=12 HEAD").out.substr(0, 12);
  CHECK(has(slurp(work / ".git" / "gate-hook" / head / "verdict.md"),
            "prompt changed: prompts/support.md (system); 6 of 6 paired tasks sent another input"));

  // The key went nowhere but the environment.
  CHECK(no_canary_in(tmp.path(), printed + init.out + push.out + blocked.out + pass.out, k_canary));
}

namespace {

// Issue 27: each answer is right only while the system prompt still says
// what it needs ("Policy:", and for returns its own line), so an edit of
// prompts/support.md breaks exactly the tasks it takes the policy from.
// The one-word intent answer needs no policy.
const char* k_policy_answers = R"({"rules": [
  {"match": "return a jacket", "body": "within 30 days of delivery", "answers": ["Hi Ann! You can return it within 30 days of delivery, with the receipt."]},
  {"match": "see my refund", "body": "Policy:", "answers": ["Hi Ben, refunds reach your original payment method within 5-7 business days."]},
  {"match": "thirty dollars", "body": "Policy:", "answers": ["$4.95"]},
  {"match": "money back for order", "body": "Policy:", "answers": ["{\"intent\": \"refund\", \"order\": \"A-1001\"}"]},
  {"match": "Where is my parcel", "answers": ["Shipping"]},
  {"match": "ship to Canada", "body": "Policy:", "answers": ["Hi Femi! Yes: international orders arrive in 10-14 business days."]},
  {"match": "", "answers": ["I am not sure, sorry."]}
]})";

// gate init (answered by k_policy_answers) in an empty repository at
// tmp/work, then its printed commands as printed: the key in `env`, what
// they printed in `printed`.
struct Initialized {
  gate::testing::FakeUpstream upstream{gate::testing::parse_script(k_policy_answers)};
  TempDir tmp;
  std::map<std::string, std::string> env;
  std::string printed;
  fs::path work;

  Initialized() {
    upstream.start();
    work = git_repo(tmp);
    Result init = run_gate({"init", "--base-url", upstream.base_url()}, work);
    INFO(init.out << init.err);
    REQUIRE(init.exit_code == 0);
    printed = follow(printed_commands(init.out), work, env);
  }
};

} // namespace

TEST_CASE("gate init's own suite closes: a prompt that breaks 5 of 6 tasks, or 1, fails gate check by "
          "default, with the extra calls reported") {
  Initialized init;
  auto& [upstream, tmp, env, printed, work] = init;
  CHECK(has(slurp(work / "gate.yaml"), "confirm:\n"));
  CHECK(has(printed, "support v1: success 100.0%"));
  REQUIRE(upstream.requests() == 18);

  // Gutted, as in the issue: the policy is gone, 5 of 6 tasks go 3/3 -> 0/3.
  const fs::path prompt = work / "prompts" / "support.md";
  const std::string original = slurp(prompt);
  spit(prompt, "You are a helpful assistant talking to {{customer}}.\n");
  // Without confirmation the first comparison cannot decide (what the issue saw).
  Result plain = run_gate({"check", "--config", "gate.yaml", "--out", "plain", "--confirm", "0"}, work, env);
  INFO(plain.out << plain.err);
  CHECK(plain.exit_code == 0);
  CHECK(has(plain.out, "⚠ gate inconclusive"));
  CHECK(upstream.requests() == 18 + 18);
  // By default: 5 tasks x 3 fresh runs x 2 sides, and the gate fails.
  Result gutted =
      run_gate({"check", "--config", "gate.yaml", "--out", "gutted", "--json", "gutted/v.json"}, work, env);
  INFO(gutted.out << gutted.err);
  CHECK(gutted.exit_code == 1);
  CHECK(has(gutted.out, "❌ gate failed"));
  CHECK(has(gutted.out, "confirmed by 5 tasks × 3 fresh runs per side"));
  CHECK(upstream.requests() == 36 + 30);
  const auto c = read_json(work / "gutted" / "v.json").at("confirmation");
  CHECK(c.at("state") == "confirmed");
  CHECK(c.at("calls") == 30);
  CHECK(c.at("max_calls") == 200);
  CHECK(c.at("errored") == 0);

  // One task broken: the returns line is gone. One task cannot decide at 3
  // runs a side; the default takes 6, still within its budget.
  std::string one = original;
  const std::size_t line = one.find("- Returns are accepted");
  REQUIRE(line != std::string::npos);
  one.erase(line, one.find('\n', line) + 1 - line);
  spit(prompt, one);
  Result single =
      run_gate({"check", "--config", "gate.yaml", "--out", "one", "--json", "one/v.json"}, work, env);
  INFO(single.out << single.err);
  CHECK(single.exit_code == 1);
  CHECK(has(single.out, "confirmed by 1 task × 6 fresh runs per side"));
  CHECK(has(single.out, "worse on return-window"));
  const auto c1 = read_json(work / "one" / "v.json").at("confirmation");
  // 12 runs, 9 of them fresh: the baseline side's first 3 (same request,
  // same replica indexes) were recorded by the check above and replay.
  CHECK(c1.at("calls") == 9);
  CHECK(c1.at("runs") == 6);
  CHECK(no_canary_in(tmp.path(), printed + gutted.out + single.out, k_canary));
}

TEST_CASE("without a key the hook calls an undecided verdict inconclusive, never passed, and names the "
          "command that decides it") {
  Initialized init;
  auto& [upstream, tmp, env, printed, work] = init;

  // The gutted prompt, its answers recorded and committed: the main runs
  // replay, but no key means no confirmation runs.
  spit(work / "prompts" / "support.md", "You are a helpful assistant talking to {{customer}}.\n");
  Result rec = run_gate({"run", "--config", "gate.yaml", "--mode", "replay", "--quiet"}, work, env);
  INFO(rec.out << rec.err);
  REQUIRE(rec.exit_code == 0);
  REQUIRE(sh(work, std::string(k_git) + "commit -q -am 'Shorter prompt' && " + k_git + "add evals && " +
                       k_git + "commit -q -m Record")
              .exit_code == 0);
  const auto calls = upstream.requests();
  Result push = sh(work, "git push -q origin main");
  INFO(push.out);
  CHECK(push.exit_code == 0); // on_inconclusive: warn
  CHECK(has(push.out, ": inconclusive, not decided (the push goes on)"));
  CHECK(push.out.find(": passed") == std::string::npos);
  CHECK(has(push.out, "⚠ gate inconclusive"));
  const std::string marker = "decide it with your key exported: ";
  const std::size_t at = push.out.find(marker);
  REQUIRE(at != std::string::npos);
  std::string command = push.out.substr(at + marker.size());
  command = command.substr(0, command.find('\n'));
  CHECK(upstream.requests() == calls);

  // The command as printed (its "KEY=… " part is the exported key) decides it.
  std::vector<std::string> w = words(command);
  if (!w.empty() && w.front().find('=') != std::string::npos) w.erase(w.begin());
  REQUIRE(w.size() > 2);
  CHECK(w.front() == "gate");
  Result decided = run_gate(std::vector<std::string>(w.begin() + 1, w.end()), work, env);
  INFO(decided.out << decided.err);
  CHECK(decided.exit_code == 1);
  CHECK(has(decided.out, "❌ gate failed"));
  CHECK(upstream.requests() == calls + 30);
  CHECK(no_canary_in(tmp.path(), push.out + decided.out, k_canary));
}

TEST_CASE("gate init --provider anthropic writes that provider's key variable and a config that loads") {
  TempDir tmp;
  Result r =
      run_gate({"init", tmp.path().string(), "--provider", "anthropic", "--model", "claude-x"}, tmp.path());
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "cd " + tmp.path().string()));
  CHECK(has(r.out, "export ANTHROPIC_API_KEY="));
  CHECK(has(slurp(tmp.path() / ".github" / "workflows" / "gate.yml"),
            "ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}"));
  Result show = run_gate({"config", "show", "--config", "gate.yaml"}, tmp.path());
  INFO(show.out << show.err);
  CHECK(show.exit_code == 0);
  CHECK(has(show.out, "model.name: claude-x"));
  CHECK(has(show.out, "model.base_url: https://api.anthropic.com"));
  CHECK(run_gate({"suite", "verify", "evals/support"}, tmp.path()).exit_code == 0);
}

TEST_CASE("gate init refuses to overwrite: one file in the way, and nothing at all is written") {
  TempDir tmp;
  spit(tmp.path() / "prompts" / "support.md", "my own prompt\n");
  Result r = run_gate({"init"}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "prompts/support.md exists"));
  CHECK(has(r.err, "nothing written"));
  CHECK(r.err.find("gate.yaml") == std::string::npos);
  CHECK(slurp(tmp.path() / "prompts" / "support.md") == "my own prompt\n");
  CHECK(files_below(tmp.path()).size() == 1);
  CHECK_FALSE(fs::exists(tmp.path() / "evals"));
}

TEST_CASE("gate init writes nothing through a symlinked directory, nor a key in --base-url") {
  TempDir tmp;
  const fs::path dir = tmp.path() / "repo", outside = tmp.path() / "outside";
  fs::create_directories(dir);
  fs::create_directories(outside);
  fs::create_directory_symlink(outside, dir / "evals");
  Result r = run_gate({"init", dir.string()}, tmp.path());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, (dir / "evals").string() + " is a symlink (no file is written through one"));
  CHECK(has(r.err, "nothing written"));
  CHECK(files_below(outside).empty());
  CHECK_FALSE(fs::exists(dir / "gate.yaml"));

  const std::string canary = "sk-init-url-canary-0001";
  fs::remove(dir / "evals");
  r = run_gate({"init", dir.string(), "--base-url", "https://api.example.com/v1?key=" + canary}, tmp.path());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "--base-url carries the query parameter key=, which would be written to gate.yaml"));
  CHECK(has(r.err, "put the key in $OPENAI_API_KEY"));
  CHECK(r.err.find(canary) == std::string::npos);
  CHECK_FALSE(fs::exists(dir / "gate.yaml"));
}

TEST_CASE("gate init --help prints no empty default: a provider without one is said so") {
  TempDir tmp;
  Result r = run_gate({"init", "--help"}, tmp.path());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find(", for azure") == std::string::npos);
  CHECK(r.out.find(" for azure") == r.out.find("none for azure") + 4);
  CHECK(has(r.out, "none for azure"));
}

TEST_CASE("gate init writes a .gitignore for .gate/, and leaves a repository's own .gitignore as it is") {
  TempDir tmp;
  fs::create_directories(tmp.path() / "fresh");
  Result fresh = run_gate({"init", "fresh"}, tmp.path());
  INFO(fresh.out << fresh.err);
  REQUIRE(fresh.exit_code == 0);
  CHECK(has(slurp(tmp.path() / "fresh" / ".gitignore"), "\n.gate/\n"));
  CHECK(has(fresh.out, ".gitignore"));

  fs::create_directories(tmp.path() / "own");
  spit(tmp.path() / "own" / ".gitignore", "build/\n");
  Result own = run_gate({"init", "own"}, tmp.path());
  INFO(own.out << own.err);
  REQUIRE(own.exit_code == 0);
  CHECK(slurp(tmp.path() / "own" / ".gitignore") == "build/\n");
  CHECK(has(own.out, ".gitignore exists and is left as it is: add .gate/ to it"));
  CHECK(fs::exists(tmp.path() / "own" / "gate.yaml"));
}

TEST_CASE("gate init: an unknown provider, a missing directory and an empty model are usage errors") {
  TempDir tmp;
  Result bad = run_gate({"init", "--provider", "openia"}, tmp.path());
  CHECK(bad.exit_code == 2);
  CHECK(has(bad.err, "unknown provider \"openia\"; expected one of openai, anthropic"));
  Result missing = run_gate({"init", "no-such-dir"}, tmp.path());
  CHECK(missing.exit_code == 2);
  CHECK(has(missing.err, "no-such-dir is not a directory"));
  Result empty = run_gate({"init", "--model", ""}, tmp.path());
  CHECK(empty.exit_code == 2);
  CHECK(has(empty.err, "--model must be a non-empty model id"));
  CHECK(files_below(tmp.path()).empty());
  // A full disk is "could not run", and leaves nothing behind.
  Result full = run_gate({"init"}, tmp.path(), {{"GATE_TEST_FAULT_WRITE", "enospc"}});
  CHECK(full.exit_code == 3);
  CHECK(has(full.err, "cannot write"));
  CHECK(files_below(tmp.path()).empty());
}

TEST_CASE("README's \"Start your own suite\" shows gate init's output as it is") {
  const std::string readme = slurp(source_dir() / "README.md");
  const std::string start = "$ gate init --provider openai --model gpt-4o-mini";
  const std::size_t at = readme.find(start);
  REQUIRE(at != std::string::npos);
  const std::size_t from = readme.find('\n', at) + 1;
  const std::string shown = readme.substr(from, readme.find("```", from) - from);
  TempDir tmp;
  Result r = run_gate({"init", "--provider", "openai", "--model", "gpt-4o-mini"}, tmp.path());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == shown);
}

TEST_CASE("gate init --model gpt-5-mini works as printed against a server that refuses what reasoning models "
          "refuse; the same model as a sampling one gets every call refused, with the key to change") {
  gate::testing::Script script = gate::testing::parse_script(k_answers);
  script.enforce = "openai-reasoning"; // OpenAI's documented 400s for gpt-5 and o-series
  gate::testing::FakeUpstream upstream(script);
  upstream.start();
  TempDir tmp;
  const fs::path work = git_repo(tmp);
  Result init = run_gate({"init", "--model", "gpt-5-mini", "--base-url", upstream.base_url()}, work);
  INFO(init.out << init.err);
  REQUIRE(init.exit_code == 0);
  std::map<std::string, std::string> env;
  const std::string printed = follow(printed_commands(init.out), work, env);
  CHECK(upstream.requests() == 18);
  CHECK(has(printed, "support v1: success 100.0%"));
  CHECK(has(printed, "0 errored"));
  // What went on the wire: no temperature, max_completion_tokens.
  const std::string sent = upstream.log().front().body;
  CHECK(has(sent, "\"max_completion_tokens\":"));
  CHECK(sent.find("\"temperature\"") == std::string::npos);
  CHECK(sent.find("\"max_tokens\"") == std::string::npos);

  // Sent as gate sends to a sampling model (what every call got before):
  // each call is OpenAI's 400, and the run's error names the key.
  spit(work / "gate.yaml", slurp(work / "gate.yaml") + "\n");
  set_yaml(work / "gate.yaml", "name", "gpt-5-mini\n  family: sampling");
  Result refused =
      run_gate({"run", "--config", "gate.yaml", "--mode", "record", "--out", "refused"}, work, env);
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 3); // nothing measured
  const std::string report = slurp(work / "refused" / "report.json");
  CHECK(has(report, "HTTP 400: the model does not take max_tokens: set model.max_tokens: null in gate.yaml, "
                    "or model.family: reasoning (gpt-5, o-series) — Unsupported parameter: 'max_tokens'"));
  Result doctor = run_gate({"doctor", "--config", "gate.yaml"}, work, env);
  CHECK(has(doctor.out + doctor.err, "model.family: reasoning"));
  CHECK(no_canary_in(tmp.path(), printed + refused.out + refused.err + doctor.out + doctor.err, k_canary));
}

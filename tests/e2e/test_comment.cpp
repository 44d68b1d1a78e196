// End-to-end: `gate comment` against a fake GitHub API on 127.0.0.1.
#include <doctest.h>

#include <filesystem>

#include "../support/fake_github.hpp"
#include "harness.hpp"

namespace fs = std::filesystem;
using namespace gate::e2e;

namespace {

constexpr const char* k_token = "ghs_canary7f3a9b1c2d4e5f60aa";
constexpr const char* k_marker = "<!-- gate:verdict -->";

// A failing verdict (verdict.json + verdict.md) from the committed demo
// baseline and regressed report.
fs::path make_verdict(const fs::path& dir) {
  Result r = run_gate({"compare", "--baseline", (source_dir() / "baselines" / "demo.json").string(),
                       "--current", (source_dir() / "fixtures" / "compare" / "regressed.json").string(),
                       "--json", "verdict.json", "--markdown", "verdict.md"},
                      dir);
  REQUIRE(r.exit_code == 1);
  return dir / "verdict.json";
}

std::map<std::string, std::string> github_env(const gate::testing::FakeGithub& api,
                                              const std::string& token = k_token) {
  return {{"GITHUB_TOKEN", token},
          {"GITHUB_API_URL", api.api_url()},
          {"GITHUB_REPOSITORY", "octo/gate-demo"},
          {"GITHUB_EVENT_PATH", (source_dir() / "fixtures" / "github" / "pull_request.json").string()},
          {"GITHUB_SERVER_URL", "https://github.example"},
          {"GITHUB_RUN_ID", "777"}};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The canary token, its last 8 characters or its base64 form appear nowhere.
void check_no_token(const Result& r, const gate::testing::FakeGithub& api) {
  const std::string token = k_token;
  for (const std::string& needle : {token, token.substr(token.size() - 8), std::string("Z2hzX2NhbmFyeT")}) {
    CHECK_FALSE(has(r.out, needle));
    CHECK_FALSE(has(r.err, needle));
    for (const auto& c : api.comments())
      CHECK_FALSE(has(c.body, needle));
  }
}

std::vector<gate::testing::GithubComment> ours(const gate::testing::FakeGithub& api) {
  std::vector<gate::testing::GithubComment> out;
  for (const auto& c : api.comments())
    if (c.body.rfind(k_marker, 0) == 0) out.push_back(c);
  return out;
}

} // namespace

TEST_CASE("creates one comment, then edits the same one, paging to find its marker") {
  TempDir tmp;
  const fs::path verdict = make_verdict(tmp.path());
  gate::testing::FakeGithub api({k_token, 2});
  api.start();
  for (int i = 0; i < 5; ++i)
    api.add_comment(42, "review comment " + std::to_string(i));
  api.add_comment(41, std::string(k_marker) + "\nanother PR's verdict");

  Result first = run_gate({"comment", "--report", verdict.string()}, tmp.path(), github_env(api));
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(has(first.out, "commented on octo/gate-demo#42"));
  auto mine = ours(api);
  REQUIRE(mine.size() == 2); // PR 41's and the new one
  CHECK(mine[1].pr == 42);
  CHECK(mine[1].body == std::string(k_marker) + "\n" + slurp(tmp.path() / "verdict.md"));

  Result second = run_gate({"comment", "--report", verdict.string()}, tmp.path(), github_env(api));
  INFO(second.out << second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(has(second.out, "updated gate's comment " + std::to_string(mine[1].id)));
  CHECK(api.comments().size() == 7); // no second comment
  // 6 comments on PR 42 at 2 a page: the marker is on page 3.
  const auto log = api.log();
  REQUIRE(log.size() >= 4);
  CHECK(has(log[log.size() - 2].target, "page=3"));
  CHECK(log.back().method == "PATCH");
  CHECK(log.back().target == "/repos/octo/gate-demo/issues/comments/" + std::to_string(mine[1].id));
  for (const auto& r : log)
    CHECK(r.headers.at("authorization") == std::string("Bearer ") + k_token);
  check_no_token(first, api);
  check_no_token(second, api);
}

TEST_CASE("a 403 (a fork PR's read-only token) is a warning and exit 0") {
  TempDir tmp;
  const fs::path verdict = make_verdict(tmp.path());
  gate::testing::FakeGithub api({k_token});
  api.set_write_status(403);
  api.start();
  Result r = run_gate({"comment", "--report", verdict.string()}, tmp.path(), github_env(api));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(has(r.err, "warning"));
  CHECK(has(r.err, "403"));
  CHECK(api.comments().empty());
  check_no_token(r, api);
}

TEST_CASE("a 422 body too long posts the truncated form") {
  TempDir tmp;
  const fs::path verdict = make_verdict(tmp.path());
  gate::testing::FakeGithubOptions o{k_token};
  o.max_body_chars = 2000; // the regressed verdict's Markdown is longer
  gate::testing::FakeGithub api(o);
  api.start();
  REQUIRE(slurp(tmp.path() / "verdict.md").size() > 2000);
  Result r = run_gate({"comment", "--report", verdict.string()}, tmp.path(), github_env(api));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "truncated form"));
  auto mine = ours(api);
  REQUIRE(mine.size() == 1);
  CHECK(has(mine[0].body, "gate failed"));
  CHECK(has(mine[0].body, "Truncated"));
  CHECK(has(mine[0].body, "https://github.example/octo/gate-demo/actions/runs/777"));
  CHECK(mine[0].body.size() <= 2000);
  const auto log = api.log();
  REQUIRE(log.size() == 3); // list, the full body (422), the short form
  CHECK(log[1].method == "POST");
  CHECK(log[2].method == "POST");
  check_no_token(r, api);
}

TEST_CASE("a rejected token, a missing token or no PR number fail clearly without printing the token") {
  TempDir tmp;
  const fs::path verdict = make_verdict(tmp.path());
  gate::testing::FakeGithub api({"the-right-token"});
  api.start();
  Result rejected = run_gate({"comment", "--report", verdict.string()}, tmp.path(), github_env(api));
  CHECK(rejected.exit_code == 3);
  CHECK(has(rejected.err, "401"));
  check_no_token(rejected, api);

  auto no_token = github_env(api);
  no_token["GITHUB_TOKEN"] = "";
  Result missing = run_gate({"comment", "--report", verdict.string()}, tmp.path(), no_token);
  CHECK(missing.exit_code == 2);
  CHECK(has(missing.err, "GITHUB_TOKEN"));

  auto push_event = github_env(api);
  push_event["GITHUB_EVENT_PATH"] = (source_dir() / "fixtures" / "github" / "push.json").string();
  Result no_pr = run_gate({"comment", "--report", verdict.string()}, tmp.path(), push_event);
  CHECK(no_pr.exit_code == 2);
  CHECK(has(no_pr.err, "--pr"));
  check_no_token(no_pr, api);
}

TEST_CASE(
    "the fork commenter (workflow_run): the artifact's PR number is believed only when that PR's head is "
    "the run's commit") {
  TempDir tmp;
  const fs::path verdict = make_verdict(tmp.path());
  const std::string run_sha = "0123456789abcdef0123456789abcdef01234567";
  spit(tmp.path() / "event.json",
       R"({"action":"completed","workflow_run":{"id":42,"event":"pull_request","head_sha":")" + run_sha +
           R"(","pull_requests":[]}})");
  gate::testing::FakeGithub api({k_token});
  api.set_pr_head(7, run_sha);
  api.set_pr_head(8, "fedcba9876543210fedcba9876543210fedcba98");
  api.start();
  auto env = github_env(api);
  env["GITHUB_EVENT_PATH"] = (tmp.path() / "event.json").string();

  // The run's own PR: commented.
  Result ok = run_gate({"comment", "--report", verdict.string(), "--pr", "7"}, tmp.path(), env);
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  REQUIRE(ours(api).size() == 1);
  CHECK(ours(api)[0].pr == 7);

  // A forged number (another PR, whose head is another commit): not posted,
  // and said why.
  Result forged = run_gate({"comment", "--report", verdict.string(), "--pr", "8"}, tmp.path(), env);
  INFO(forged.out << forged.err);
  CHECK(forged.exit_code == 0);
  CHECK(has(forged.err, "warning: not commenting on octo/gate-demo#8: its head is fedcba987654, but the run "
                        "that made this verdict was for 0123456789ab"));
  CHECK(ours(api).size() == 1);

  // A PR that does not exist: GitHub's 404, exit 3, nothing posted.
  Result missing = run_gate({"comment", "--report", verdict.string(), "--pr", "9"}, tmp.path(), env);
  CHECK(missing.exit_code == 3);
  CHECK(has(missing.err, "GitHub answered 404 while reading pull request #9"));
  CHECK(ours(api).size() == 1);
  check_no_token(forged, api);
}

#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fake_upstream.hpp"

// A fake GitHub REST API on 127.0.0.1 (plain HTTP, a port it picks) with the
// three endpoints `gate comment` uses, for one repository's pull requests:
//   GET   /repos/{owner}/{repo}/issues/{n}/comments   (paginated, Link rel="next")
//   POST  /repos/{owner}/{repo}/issues/{n}/comments
//   PATCH /repos/{owner}/{repo}/issues/comments/{id}
//   GET   /repos/{owner}/{repo}/pulls/{n}                (head.sha, set by set_pr_head)
// A request without "Authorization: Bearer <token>" gets 401.
namespace gate::testing {

struct GithubComment {
  std::int64_t id = 0;
  std::int64_t pr = 0;
  std::string body;
};

struct FakeGithubOptions {
  std::string token;                  // the one accepted
  std::size_t page_size = 30;         // comments per page, whatever per_page says
  int write_status = 0;               // answer every POST/PATCH with this status (e.g. 403); 0 = behave
  std::size_t max_body_chars = 65536; // longer bodies get 422 "Body is too long"
};

class FakeGithub {
public:
  explicit FakeGithub(FakeGithubOptions options);
  ~FakeGithub(); // stops
  FakeGithub(const FakeGithub&) = delete;
  FakeGithub& operator=(const FakeGithub&) = delete;

  void start();
  void stop();
  std::string api_url() const; // "http://127.0.0.1:<port>"

  void set_write_status(int status);
  void set_pr_head(std::int64_t pr, const std::string& sha);  // a PR without one is 404
  void add_comment(std::int64_t pr, const std::string& body); // someone else's comment
  std::vector<GithubComment> comments() const;
  std::vector<RequestLog> log() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace gate::testing

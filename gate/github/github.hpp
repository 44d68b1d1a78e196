#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <gate/model/api.hpp>
#include <gate/net/fetch.hpp>

// The one GitHub REST conversation gate has: keep one comment of its own on
// a pull request up to date.
namespace gate::github {

// GitHub's limit on an issue or PR comment body, in characters.
inline constexpr std::size_t k_comment_limit_chars = 65536;

struct Target {
  std::string api_url; // no trailing slash, e.g. https://api.github.com
  std::string repo;    // owner/name
  std::int64_t pr = 0;
  std::string token;
};

// From `env`: GITHUB_API_URL (default https://api.github.com),
// GITHUB_REPOSITORY, GITHUB_TOKEN, and the PR number from `pr` or else
// GITHUB_EVENT_PATH's pull_request.number. The token is registered for
// redaction. Anything missing or malformed is Error(bad_input) saying what.
Target target_from_env(const Environment& env, std::optional<std::int64_t> pr);

// pull_request.number (or number) of a webhook event; Error(bad_input)
// naming `where` when absent.
std::int64_t pr_from_event(std::string_view event_json, const std::string& where);

// workflow_run.head_sha of a workflow_run event: the commit the run that
// made the artifacts was for; nullopt for any other event.
std::optional<std::string> run_head_sha(std::string_view event_json, const std::string& where);

// The hidden first line that identifies gate's comment: "<!-- gate:ID -->";
// ID keeps [A-Za-z0-9._-] only.
std::string marker(std::string_view id);

// The URL of the Link header's rel="next", if any.
std::optional<std::string> next_link(const net::Headers& headers);

// Unicode code points in UTF-8 text (GitHub counts characters).
std::size_t char_count(std::string_view utf8);

// One HTTP exchange; net::fetch in production, a fake in unit tests.
using Send = std::function<model::ApiResponse(const net::FetchRequest&)>;

// The head commit of pull request t.pr (GET /repos/{repo}/pulls/{n}):
// head.sha. Failures are Error(cannot_run), as for the comment.
std::string pr_head_sha(const Target& t, const Send& send);

enum class Outcome { created, updated, forbidden };

struct Posted {
  Outcome outcome = Outcome::created;
  std::int64_t comment_id = 0;
  bool truncated = false; // the short form was posted
  int pages = 0;          // comment pages read looking for the marker
  std::string warning;    // for forbidden: what GitHub said
};

// Finds the comment whose body starts with `mark` (following pagination on
// the API's own origin only), edits it, or creates one. `body` and
// `short_body` must already start with `mark`. The short form is posted when
// the body exceeds GitHub's limit or GitHub answers 422 "too long". A 403
// (a fork PR's read-only token) is Outcome::forbidden, not an error; no
// answer, 401, 404 and other failures are Error(cannot_run).
Posted upsert_comment(const Target& t, std::string_view mark, const std::string& body,
                      const std::string& short_body, const Send& send);

} // namespace gate::github

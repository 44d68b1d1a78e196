#include <gate/github/github.hpp>

#include <boost/json.hpp>
#include <cctype>

#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::github {

namespace {

constexpr int k_max_pages = 100; // 10,000 comments: far past any real PR

net::FetchRequest request(const Target& t, std::string method, std::string url, std::string body = {}) {
  net::FetchRequest r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.headers = {{"authorization", "Bearer " + t.token},
               {"accept", "application/vnd.github+json"},
               {"x-github-api-version", "2022-11-28"}};
  if (!body.empty()) r.headers.emplace_back("content-type", "application/json");
  r.body = std::move(body);
  return r;
}

// GitHub's own explanation, short and redacted.
std::string message_of(const model::ApiResponse& r) {
  std::string text = r.body;
  try {
    const auto v = boost::json::parse(r.body);
    if (const auto* o = v.if_object())
      if (const auto* m = o->if_contains("message"); m != nullptr && m->is_string()) {
        text = std::string(m->as_string());
        if (const auto* errors = o->if_contains("errors"); errors != nullptr && errors->is_array())
          for (const auto& e : errors->as_array())
            if (const auto* eo = e.if_object())
              if (const auto* em = eo->if_contains("message"); em != nullptr && em->is_string())
                text += "; " + std::string(em->as_string());
      }
  } catch (const std::exception&) {
    // not JSON: the raw text, shortened below
  }
  return redact(std::string(utf8_prefix(text, 300)));
}

[[noreturn]] void fail(const model::ApiResponse& r, const std::string& what) {
  if (r.status == 0)
    throw Error(Exit::cannot_run, "GitHub API unreachable while " + what + ": " + message_of(r));
  std::string hint;
  if (r.status == 401) hint = " (GITHUB_TOKEN was rejected)";
  if (r.status == 404) hint = " (no such repository or pull request, or the token cannot see it)";
  throw Error(Exit::cannot_run,
              "GitHub answered " + std::to_string(r.status) + " while " + what + hint + ": " + message_of(r));
}

bool ok(const model::ApiResponse& r) { return r.status >= 200 && r.status < 300; }

// The id of the first comment on the page whose body starts with `mark`.
std::optional<std::int64_t> find_on_page(const std::string& page, std::string_view mark) {
  const boost::json::value v = json::parse_strict(page, "GitHub's comment list");
  const auto* list = v.if_array();
  if (list == nullptr) throw Error(Exit::cannot_run, "GitHub's comment list is not a JSON array");
  for (const auto& item : *list) {
    const auto* c = item.if_object();
    if (c == nullptr) continue;
    const auto* body = c->if_contains("body");
    const auto* id = c->if_contains("id");
    if (body != nullptr && body->is_string() && id != nullptr && id->is_int64() &&
        std::string_view(body->as_string()).substr(0, mark.size()) == mark)
      return id->as_int64();
  }
  return std::nullopt;
}

bool too_long(const model::ApiResponse& r) {
  if (r.status != 422) return false;
  std::string m = message_of(r);
  for (auto& c : m)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return m.find("too long") != std::string::npos;
}

} // namespace

std::string pr_head_sha(const Target& t, const Send& send) {
  const std::string what = "reading pull request #" + std::to_string(t.pr);
  const model::ApiResponse r =
      send(request(t, "GET", t.api_url + "/repos/" + t.repo + "/pulls/" + std::to_string(t.pr)));
  if (!ok(r)) fail(r, what);
  const boost::json::value v = json::parse_strict(r.body, "GitHub's pull request");
  const auto* o = v.if_object();
  const auto* head = o != nullptr ? o->if_contains("head") : nullptr;
  const auto* sha = head != nullptr && head->is_object() ? head->as_object().if_contains("sha") : nullptr;
  if (sha == nullptr || !sha->is_string())
    throw Error(Exit::cannot_run, "GitHub's pull request #" + std::to_string(t.pr) + " has no head.sha");
  return std::string(sha->as_string());
}

Posted upsert_comment(const Target& t, std::string_view mark, const std::string& body,
                      const std::string& short_body, const Send& send) {
  Posted out;
  const std::string base = t.api_url + "/repos/" + t.repo;
  std::optional<std::int64_t> existing;
  std::string url = base + "/issues/" + std::to_string(t.pr) + "/comments?per_page=100";
  while (!existing && out.pages < k_max_pages) {
    const model::ApiResponse page = send(request(t, "GET", url));
    ++out.pages;
    if (page.status == 403) {
      out.outcome = Outcome::forbidden;
      out.warning = message_of(page);
      return out;
    }
    if (!ok(page)) fail(page, "listing the PR's comments");
    existing = find_on_page(page.body, mark);
    auto next = next_link(page.headers);
    // The token goes to the API's own origin only, whatever a Link says.
    if (!next || next->rfind(t.api_url + "/", 0) != 0) break;
    url = *next;
  }

  auto post = [&](const std::string& text) {
    const std::string payload = boost::json::serialize(boost::json::object{{"body", text}});
    return existing
               ? send(request(t, "PATCH", base + "/issues/comments/" + std::to_string(*existing), payload))
               : send(request(t, "POST", base + "/issues/" + std::to_string(t.pr) + "/comments", payload));
  };
  out.truncated = char_count(body) > k_comment_limit_chars;
  model::ApiResponse r = post(out.truncated ? short_body : body);
  if (too_long(r) && !out.truncated) {
    out.truncated = true;
    r = post(short_body);
  }
  if (r.status == 403) {
    out.outcome = Outcome::forbidden;
    out.warning = message_of(r);
    return out;
  }
  if (!ok(r)) fail(r, existing ? "editing gate's comment" : "creating the comment");
  out.outcome = existing ? Outcome::updated : Outcome::created;
  out.comment_id = existing.value_or(0);
  try {
    const auto v = boost::json::parse(r.body);
    if (const auto* o = v.if_object())
      if (const auto* id = o->if_contains("id"); id != nullptr && id->is_int64())
        out.comment_id = id->as_int64();
  } catch (const std::exception&) {
    // the comment is posted; only its id is unknown
  }
  return out;
}

} // namespace gate::github

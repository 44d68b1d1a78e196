#include <gate/github/github.hpp>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>

#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <gate/util/json.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::github {

namespace {

std::optional<std::int64_t> positive_int(const boost::json::value* v) {
  if (v == nullptr || !v->is_int64() || v->as_int64() < 1) return std::nullopt;
  return v->as_int64();
}

} // namespace

std::int64_t pr_from_event(std::string_view event_json, const std::string& where) {
  const boost::json::value event = json::parse_strict(event_json, where);
  const auto* o = event.if_object();
  if (o != nullptr) {
    if (const auto* pr = o->if_contains("pull_request"); pr != nullptr && pr->is_object())
      if (auto n = positive_int(pr->as_object().if_contains("number"))) return *n;
    if (auto n = positive_int(o->if_contains("number"))) return *n;
  }
  throw Error(Exit::bad_input, where + ": no pull_request.number (not a pull_request event? pass --pr N)");
}

std::optional<std::string> run_head_sha(std::string_view event_json, const std::string& where) {
  const boost::json::value event = json::parse_strict(event_json, where);
  const auto* o = event.if_object();
  const auto* run = o != nullptr ? o->if_contains("workflow_run") : nullptr;
  if (run == nullptr || !run->is_object()) return std::nullopt;
  const auto* sha = run->as_object().if_contains("head_sha");
  if (sha == nullptr || !sha->is_string() || sha->as_string().empty())
    throw Error(Exit::bad_input, where + ": a workflow_run event without workflow_run.head_sha");
  return std::string(sha->as_string());
}

Target target_from_env(const Environment& env, std::optional<std::int64_t> pr) {
  Target t;
  t.token = env.get("GITHUB_TOKEN");
  if (t.token.empty()) throw Error(Exit::bad_input, "gate comment: GITHUB_TOKEN is not set");
  register_secret(t.token);
  t.api_url = env.get("GITHUB_API_URL");
  if (t.api_url.empty()) t.api_url = "https://api.github.com";
  while (!t.api_url.empty() && t.api_url.back() == '/')
    t.api_url.pop_back();
  t.repo = env.get("GITHUB_REPOSITORY");
  const std::size_t slash = t.repo.find('/');
  bool repo_ok = slash != std::string::npos && slash > 0 && slash + 1 < t.repo.size() &&
                 t.repo.find('/', slash + 1) == std::string::npos;
  for (char c : t.repo)
    repo_ok = repo_ok &&
              (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/');
  if (!repo_ok)
    throw Error(Exit::bad_input,
                "gate comment: GITHUB_REPOSITORY must be owner/name, got \"" + redact(t.repo) + "\"");
  if (pr) {
    if (*pr < 1) throw Error(Exit::bad_input, "gate comment: --pr must be a positive number");
    t.pr = *pr;
  } else {
    const std::string path = env.get("GITHUB_EVENT_PATH");
    if (path.empty())
      throw Error(Exit::bad_input,
                  "gate comment: no PR number (pass --pr N, or run in a pull_request workflow)");
    t.pr = pr_from_event(read_file(path), path);
  }
  return t;
}

std::string marker(std::string_view id) {
  std::string clean;
  for (char c : id)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') clean += c;
  return "<!-- gate:" + (clean.empty() ? std::string("verdict") : clean) + " -->";
}

std::optional<std::string> next_link(const net::Headers& headers) {
  for (const auto& [name, value] : headers) {
    if (name != "link") continue;
    // <url>; rel="next", <url>; rel="last"
    std::size_t at = 0;
    while ((at = value.find('<', at)) != std::string::npos) {
      const std::size_t close = value.find('>', at);
      if (close == std::string::npos) break;
      const std::size_t end = std::min(value.find('<', close), value.size());
      const std::string params = value.substr(close + 1, end - close - 1);
      if (params.find("rel=\"next\"") != std::string::npos || params.find("rel=next") != std::string::npos)
        return value.substr(at + 1, close - at - 1);
      at = close;
    }
  }
  return std::nullopt;
}

std::size_t char_count(std::string_view utf8) {
  std::size_t n = 0;
  for (unsigned char c : utf8)
    n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

} // namespace gate::github

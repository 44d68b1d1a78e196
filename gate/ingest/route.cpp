#include <gate/ingest/route.hpp>

#include <cctype>

#include <gate/ingest/ingest.hpp>
#include <gate/util/redact.hpp>

namespace gate::ingest {

namespace {

// Prefixes of API keys and tokens from the common providers and forges.
constexpr std::string_view k_prefixes[] = {"sk-",   "sk_",   "rk-",  "pk-",  "xai-",        "gsk_",
                                           "hf_",   "ghp_",  "gho_", "ghs_", "github_pat_", "glpat-",
                                           "xoxb-", "xoxp-", "AIza", "AKIA", "Bearer ",     "bearer "};

std::string safe(std::string_view s) { return looks_like_secret(s) ? std::string(k_redacted) : redact(s); }

// Host and path of a URL; the user info and the query are never kept.
void split_url(std::string_view url, results::Route& r) {
  std::string_view scheme;
  if (auto p = url.find("://"); p != std::string_view::npos) {
    scheme = url.substr(0, p);
    url.remove_prefix(p + 3);
  }
  if (auto q = url.find_first_of("?#"); q != std::string_view::npos) url = url.substr(0, q);
  auto slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : url.substr(slash);
  if (auto at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  std::string host(authority);
  // Without a port the scheme's default: the same endpoint gives the same
  // host whether a harness wrote the port or not (as `gate run` records it).
  bool has_port = !host.empty() && host.front() == '[' ? host.find("]:") != std::string::npos
                                                       : host.find(':') != std::string::npos;
  if (!host.empty() && !has_port) host += scheme == "http" ? ":80" : ":443";
  r["base_url_host"] = safe(host);
  std::string kept;
  std::size_t pos = 0;
  while (pos < path.size()) {
    auto next = path.find('/', pos + 1);
    std::string_view part =
        path.substr(pos + 1, next == std::string_view::npos ? std::string_view::npos : next - pos - 1);
    if (!part.empty()) kept += "/" + safe(part);
    if (next == std::string_view::npos) break;
    pos = next;
  }
  r["base_url_path"] = kept;
}

} // namespace

bool looks_like_secret(std::string_view text) {
  for (auto p : k_prefixes)
    if (text.substr(0, p.size()) == p && text.size() > p.size() + 8) return true;
  // A long unbroken run of letters and digits that mixes both is a token,
  // not a name a person chose ("prod-team-2" has no such run).
  std::size_t run = 0;
  bool letter = false, digit = false;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    unsigned char ch = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
    if (std::isalnum(ch)) {
      ++run;
      letter = letter || std::isalpha(ch);
      digit = digit || std::isdigit(ch);
      continue;
    }
    if (run >= 20 && letter && digit) return true;
    run = 0;
    letter = digit = false;
  }
  return false;
}

results::Route route_of_record(const RouteFields& f) {
  results::Route r;
  if (f.model) r["model"] = redact(*f.model);
  // A simulated user's model changes what the agent is asked: a route field.
  if (f.user_model) r["user_model"] = redact(*f.user_model);
  if (f.base_url) split_url(*f.base_url, r);
  if (f.key_alias) r["key_alias"] = safe(*f.key_alias);
  if (f.temperature) r["temperature"] = *f.temperature;
  if (f.top_p) r["top_p"] = *f.top_p;
  if (f.seed) r["seed"] = redact(*f.seed);
  if (f.concurrency) r["concurrency"] = *f.concurrency;
  // Beside the other fields always; alone only when there were some, so a
  // log that records no route field has no route, and its route hygiene
  // reads n/a instead of "one route".
  if (!r.empty() || f.retries > 0) r["retries"] = std::to_string(f.retries);
  return r;
}

} // namespace gate::ingest

#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gate::proxy {

// Where a request goes and which recording it belongs to. A path
// "/t/<task>/r/<run>/rest" is scoped to that task and run; any other path
// belongs to the session. `upstream_path` is what follows the scope and is
// appended to model.base_url.
struct Target {
  std::string task, run;     // both empty for the session scope
  std::string upstream_path; // "/chat/completions", "/v1/messages", "/models", ...
  std::string scope_path;    // "/t/<task>/r/<run>" + upstream_path, or upstream_path
};

// nullopt when the path is not absolute, has a query or fragment, contains
// a "." or ".." segment (also percent-encoded: "%2e%2e", ".%2E"), a
// backslash or an encoded '/', '\' or '%', or has an empty task or run. Dot
// segments are refused, not resolved: an SDK never sends one, and refusing
// leaves nothing that could resolve outside model.base_url's path. The
// target's paths are the decoded ones.
std::optional<Target> parse_target(std::string_view path);

// `path` with percent-escapes of unreserved characters (letters, digits,
// "-._~") decoded, as RFC 3986 6.2.2.2 normalises them; other escapes kept.
// nullopt for a malformed escape, a backslash, or an encoded '/', '\' or
// '%', which some servers decode into separators or decode twice.
std::optional<std::string> decode_unreserved(std::string_view path);

// True when a Host header names this proxy: 127.0.0.1 or localhost with
// `port` (or no port). Anything else (another name, another port, empty) is
// a request meant for someone else, or DNS rebinding, and gets a 403.
bool host_allowed(std::string_view host, unsigned short port);

// The origin-form path of a request target. An absolute-form target
// ("http://host:port/path") is accepted only when its authority passes
// host_allowed(); nullopt means 403.
std::optional<std::string> origin_form(std::string_view request_target, unsigned short port);

// The cache key of the `occurrence`-th (0-based) identical request body in
// one scope: cache::make_call_key over the provider, "/t/<task>" and the
// upstream path (the upstream path alone for the session scope), the
// canonical body, the run ("" for the session scope) and the occurrence.
std::string request_key(std::string_view provider, const Target& t, std::string_view canonical_body,
                        int occurrence);

} // namespace gate::proxy

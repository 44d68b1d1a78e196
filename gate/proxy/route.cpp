#include <gate/proxy/route.hpp>

#include <cctype>

#include <gate/cache/store.hpp>
#include <gate/util/text.hpp>

namespace gate::proxy {

namespace {

// One path segment after `pos` (which points at a '/'); npos-safe.
std::string_view segment(std::string_view path, std::size_t pos) {
  std::size_t end = path.find('/', pos + 1);
  return path.substr(pos + 1, end == std::string_view::npos ? std::string_view::npos : end - pos - 1);
}

bool has_dot_dot(std::string_view path) {
  for (std::size_t pos = 0; pos < path.size(); pos += segment(path, pos).size() + 1)
    if (segment(path, pos) == ".." || segment(path, pos) == ".") return true;
  return false;
}

bool unreserved(unsigned char c) {
  return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~';
}

} // namespace

std::optional<std::string> decode_unreserved(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '\\') return std::nullopt;
    if (path[i] != '%') {
      out += path[i];
      continue;
    }
    int hi = i + 2 < path.size() ? hex_digit(path[i + 1]) : -1;
    int lo = hi >= 0 ? hex_digit(path[i + 2]) : -1;
    if (lo < 0) return std::nullopt;
    const auto c = static_cast<unsigned char>(hi * 16 + lo);
    if (c == '/' || c == '\\' || c == '%') return std::nullopt;
    if (unreserved(c))
      out += static_cast<char>(c);
    else
      out.append(path.substr(i, 3));
    i += 2;
  }
  return out;
}

std::optional<Target> parse_target(std::string_view raw) {
  if (raw.empty() || raw.front() != '/') return std::nullopt;
  if (raw.find_first_of("?#") != std::string_view::npos) return std::nullopt;
  // Checked decoded: "%2e%2e" is ".." to the upstream.
  std::optional<std::string> decoded = decode_unreserved(raw);
  if (!decoded || has_dot_dot(*decoded)) return std::nullopt;
  std::string_view path = *decoded;
  Target t;
  if (path.substr(0, 3) == "/t/") {
    std::string_view task = segment(path, 2);
    std::size_t after_task = 3 + task.size();
    if (task.empty() || path.substr(after_task, 3) != "/r/") return std::nullopt;
    std::string_view run = segment(path, after_task + 2);
    if (run.empty()) return std::nullopt;
    t.task = std::string(task);
    t.run = std::string(run);
    t.upstream_path = std::string(path.substr(after_task + 3 + run.size()));
    if (t.upstream_path.empty()) t.upstream_path = "/";
    // The scope prefix as it came ("/t/<task>/r/<run>"), then the rest.
    t.scope_path.assign(path.data(), after_task + 3 + run.size());
    t.scope_path.append(t.upstream_path);
    return t;
  }
  t.upstream_path = std::string(path);
  t.scope_path = t.upstream_path;
  return t;
}

bool host_allowed(std::string_view host, unsigned short port) {
  std::string_view name = host;
  std::size_t colon = host.rfind(':');
  if (colon != std::string_view::npos) {
    if (host.substr(colon + 1) != std::to_string(port)) return false;
    name = host.substr(0, colon);
  }
  return name == "127.0.0.1" || name == "localhost";
}

std::optional<std::string> origin_form(std::string_view target, unsigned short port) {
  if (!target.empty() && target.front() == '/') return std::string(target);
  constexpr std::string_view k_http = "http://";
  if (target.substr(0, k_http.size()) != k_http) return std::nullopt; // https://, CONNECT authority, "*"
  std::string_view rest = target.substr(k_http.size());
  std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (authority.find('@') != std::string_view::npos || !host_allowed(authority, port)) return std::nullopt;
  return slash == std::string_view::npos ? std::string("/") : std::string(rest.substr(slash));
}

std::string request_key(std::string_view provider, const Target& t, std::string_view canonical_body,
                        int occurrence) {
  const std::string path = t.task.empty() ? t.upstream_path : "/t/" + t.task + t.upstream_path;
  return cache::make_call_key(provider, path, canonical_body, t.run, occurrence);
}

} // namespace gate::proxy

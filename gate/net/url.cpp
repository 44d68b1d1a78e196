#include <gate/net/http_client.hpp>

#include <algorithm>
#include <cctype>

#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>

namespace gate::net {

namespace {

[[noreturn]] void bad_url(const std::string& url, const std::string& why) {
  throw_bad_input("base URL \"" + redact(url) + "\": " + why +
                  " (expected http://host[:port][/path] or https://...)");
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool valid_host_char(unsigned char c) { return std::isalnum(c) || c == '-' || c == '.' || c == '_'; }

} // namespace

Url parse_url(const std::string& url) {
  Url u;
  auto sep = url.find("://");
  if (sep == std::string::npos || sep == 0) bad_url(url, "no scheme");
  u.scheme = url.substr(0, sep);
  std::transform(u.scheme.begin(), u.scheme.end(), u.scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (u.scheme != "http" && u.scheme != "https")
    bad_url(url, "scheme \"" + u.scheme + "\" is not http or https");

  std::string rest = url.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string::npos) bad_url(url, "a query or fragment is not allowed");
  auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  // Credentials in a URL end up in logs and reports; keys belong in the
  // environment variable.
  if (authority.find('@') != std::string::npos) bad_url(url, "user info in the URL is not allowed");

  std::string port;
  if (!authority.empty() && authority[0] == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) bad_url(url, "unclosed '[' in the IPv6 host");
    u.host = authority.substr(0, close + 1);
    std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') bad_url(url, "unexpected text after the IPv6 host");
      port = after.substr(1);
      if (port.empty()) bad_url(url, "empty port");
    }
  } else {
    auto colon = authority.find(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) bad_url(url, "empty port");
    }
    if (!std::all_of(u.host.begin(), u.host.end(), valid_host_char)) bad_url(url, "invalid host name");
  }
  if (u.host.empty() || u.host == "[]") bad_url(url, "no host");
  if (!port.empty()) {
    if (!all_digits(port) || port.size() > 5 || std::stoi(port) < 1 || std::stoi(port) > 65535)
      bad_url(url, "port \"" + port + "\" is not a number from 1 to 65535");
    u.port = port;
  } else {
    u.port = u.scheme == "https" ? "443" : "80";
  }
  while (!path.empty() && path.back() == '/')
    path.pop_back();
  for (unsigned char c : path)
    if (c <= 0x20 || c >= 0x7f) bad_url(url, "the path has a space or a non-ASCII character");
  u.path_prefix = path;
  return u;
}

} // namespace gate::net

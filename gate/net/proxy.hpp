#pragma once

#include <optional>
#include <string>

namespace gate::net {

struct Settings;

// An HTTP proxy from HTTPS_PROXY / HTTP_PROXY: https origins go through a
// CONNECT tunnel, http origins in absolute form. `authorization` is the
// Proxy-Authorization value ("Basic ...") or empty; it goes to the proxy
// only and is registered for redaction, as are the user info's parts.
struct Proxy {
  std::string host, port; // host may be a bracketed IPv6 literal
  std::string authorization;
  std::string setting; // the variable it came from, for messages
};

// "http://[user:pass@]host[:port][/]" or "host[:port]" (port defaults to
// 80); user and password are percent-decoded. Throws Error(cannot_run)
// naming `setting` (never the credentials) on anything else, including an
// https:// proxy, which this client does not speak.
Proxy parse_proxy(const std::string& value, const std::string& setting);

// True when NO_PROXY-style `list` exempts `host`: a comma list of "*",
// host names (matching the host and its subdomains; a leading dot is the
// same), and IP literals; entries' ports and case are ignored.
bool no_proxy_matches(const std::string& list, const std::string& host);

// The proxy for an origin, from `settings` (settings.hpp: https_proxy /
// HTTPS_PROXY for https, http_proxy / HTTP_PROXY for http); nullopt when
// none is set, NO_PROXY exempts the host, or the host is loopback (a proxy
// cannot reach this machine's own loopback).
std::optional<Proxy> proxy_for(const std::string& scheme, const std::string& host, const Settings& settings);

// Loopback: localhost, 127.0.0.0/8, ::1 (bracketed or not).
bool is_loopback_host(const std::string& host);

} // namespace gate::net

#pragma once

#include <string>

#include <gate/util/environment.hpp>

namespace gate::net {

// What the network code takes from the process environment: proxies, extra
// trust, hosts allowed over plain http. cli/ makes it once from the
// environment it read at start-up and passes it to every client and fetch;
// nothing in net/ reads the environment itself.
struct Settings {
  // The proxy variable used for each scheme (lowercase names first, as curl
  // does), its name kept for messages: a value may hold a password.
  std::string http_proxy, http_proxy_name;
  std::string https_proxy, https_proxy_name;
  std::string no_proxy;   // no_proxy, else NO_PROXY
  std::string cert_file;  // SSL_CERT_FILE: replaces the system bundle
  std::string cert_dir;   // SSL_CERT_DIR: replaces the system directory
  std::string allow_http; // GATE_ALLOW_HTTP: comma list of hosts plain http may reach
};

Settings settings_from(const Environment& env);

} // namespace gate::net

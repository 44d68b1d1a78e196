#include <gate/net/proxy.hpp>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <cctype>
#include <openssl/evp.h>

#include <gate/net/settings.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <gate/util/text.hpp>

namespace gate::net {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string unbracket(const std::string& host) {
  return host.size() > 2 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2)
                                                                      : host;
}

std::optional<std::string> percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string base64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

} // namespace

bool is_loopback_host(const std::string& host) {
  std::string h = lower(unbracket(host));
  if (h == "localhost" || h.ends_with(".localhost")) return true;
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(h, ec);
  return !ec && a.is_loopback();
}

Proxy parse_proxy(const std::string& value, const std::string& setting) {
  // The value may hold a password: messages name the setting only.
  auto bad = [&](const std::string& why) -> Proxy {
    throw_cannot_run(setting + " is not a usable proxy URL: " + why +
                     " (expected http://[user:password@]host:port)");
  };
  std::string rest(trim_space(value));
  if (auto sep = rest.find("://"); sep != std::string::npos) {
    std::string scheme = lower(rest.substr(0, sep));
    if (scheme == "https") return bad("https:// proxies are not supported");
    if (scheme != "http") return bad("scheme \"" + scheme + "\" is not http");
    rest = rest.substr(sep + 3);
  }
  while (!rest.empty() && rest.back() == '/')
    rest.pop_back();
  if (rest.find('/') != std::string::npos) return bad("a path is not allowed");
  Proxy p;
  p.setting = setting;
  if (auto at = rest.rfind('@'); at != std::string::npos) {
    std::string info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    auto colon = info.find(':');
    auto user = percent_decode(info.substr(0, colon));
    auto pass = percent_decode(colon == std::string::npos ? "" : info.substr(colon + 1));
    if (!user || !pass) return bad("bad percent-encoding in the user info");
    std::string credentials = *user + ":" + *pass;
    for (unsigned char c : credentials)
      if (c < 0x20 || c == 0x7f) return bad("a control character in the user info");
    p.authorization = "Basic " + base64(credentials);
    register_secret(p.authorization.substr(6));
    register_secret(credentials);
    if (!pass->empty()) register_secret(*pass);
    register_secret(info);
  }
  std::string port;
  if (!rest.empty() && rest.front() == '[') {
    auto close = rest.find(']');
    if (close == std::string::npos) return bad("unclosed '['");
    p.host = rest.substr(0, close + 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return bad("unexpected text after the host");
      port = rest.substr(close + 2);
    }
  } else {
    auto colon = rest.find(':');
    p.host = rest.substr(0, colon);
    if (colon != std::string::npos) port = rest.substr(colon + 1);
  }
  if (p.host.empty()) return bad("no host");
  for (unsigned char c : p.host)
    if (!(std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '[' || c == ']' || c == ':'))
      return bad("invalid host name");
  if (port.empty()) port = "80";
  if (port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); }) ||
      std::stoi(port) < 1 || std::stoi(port) > 65535)
    return bad("the port is not a number from 1 to 65535");
  p.port = port;
  return p;
}

bool no_proxy_matches(const std::string& list, const std::string& host_in) {
  std::string host = lower(unbracket(host_in));
  std::size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    std::string entry = lower(std::string(
        trim_space(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start))));
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (entry.empty()) continue;
    if (entry == "*") return true;
    // Ports are ignored: "host:8080" exempts the host on every port.
    if (entry.front() == '[') {
      entry = entry.substr(1, entry.find(']') - 1);
    } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
      entry = entry.substr(0, entry.find(':'));
    }
    if (!entry.empty() && entry.front() == '.') entry = entry.substr(1);
    if (entry.empty()) continue;
    if (host == entry) return true;
    if (host.size() > entry.size() && host.ends_with(entry) && host[host.size() - entry.size() - 1] == '.')
      return true;
  }
  return false;
}

std::optional<Proxy> proxy_for(const std::string& scheme, const std::string& host, const Settings& settings) {
  if (is_loopback_host(host)) return std::nullopt;
  if (no_proxy_matches(settings.no_proxy, host)) return std::nullopt;
  const bool https = scheme == "https";
  const std::string& value = https ? settings.https_proxy : settings.http_proxy;
  if (trim_space(value).empty()) return std::nullopt;
  return parse_proxy(value, https ? settings.https_proxy_name : settings.http_proxy_name);
}

} // namespace gate::net

#include <gate/net/settings.hpp>

#include <openssl/x509.h>

namespace gate::net {

namespace {

// The first of the two names that is set and not empty.
void pick(const Environment& env, const char* lower, const char* upper, std::string& value,
          std::string& name) {
  value = env.get(lower);
  name = lower;
  if (value.empty()) {
    value = env.get(upper);
    name = upper;
  }
}

} // namespace

Settings settings_from(const Environment& env) {
  Settings s;
  pick(env, "http_proxy", "HTTP_PROXY", s.http_proxy, s.http_proxy_name);
  pick(env, "https_proxy", "HTTPS_PROXY", s.https_proxy, s.https_proxy_name);
  std::string unused;
  pick(env, "no_proxy", "NO_PROXY", s.no_proxy, unused);
  // OpenSSL's own names for them, which it would otherwise read itself.
  s.cert_file = env.get(X509_get_default_cert_file_env());
  s.cert_dir = env.get(X509_get_default_cert_dir_env());
  s.allow_http = env.get("GATE_ALLOW_HTTP");
  return s;
}

} // namespace gate::net

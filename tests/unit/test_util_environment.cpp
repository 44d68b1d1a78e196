// util/environment and net/settings: the environment cli reads once and
// passes down, and what the network code takes from it.
#include <doctest.h>

#include <gate/net/settings.hpp>
#include <gate/util/environment.hpp>

TEST_CASE("environment: NAME=value entries, the first of a name wins, others skipped") {
  const char* raw[] = {"A=1", "B=", "noequals", "=nameless", "A=2", "C=x=y", nullptr};
  const gate::Environment env = gate::environment_from(raw);
  CHECK(env.entries == std::vector<std::string>{"A=1", "B=", "A=2", "C=x=y"});
  CHECK(env.get("A") == "1");
  CHECK(env.get("C") == "x=y");
  CHECK(env.has("B"));
  CHECK(env.get("B").empty());
  CHECK_FALSE(env.has("noequals"));
  CHECK_FALSE(env.has("D"));
  CHECK(env.get("D").empty());
  CHECK(gate::environment_from(nullptr).entries.empty());
}

TEST_CASE("net settings: proxies lowercase first, trust and plain-http hosts as given") {
  const auto s = gate::net::settings_from(gate::environment_of({{"HTTP_PROXY", "http://upper:1"},
                                                                {"https_proxy", ""},
                                                                {"HTTPS_PROXY", "http://tls:2"},
                                                                {"no_proxy", "a.example"},
                                                                {"NO_PROXY", "b.example"},
                                                                {"SSL_CERT_FILE", "/etc/ca.pem"},
                                                                {"SSL_CERT_DIR", "/etc/certs"},
                                                                {"GATE_ALLOW_HTTP", "gw.internal"}}));
  CHECK(s.http_proxy == "http://upper:1");
  CHECK(s.http_proxy_name == "HTTP_PROXY");
  // An empty lowercase variable does not hide the uppercase one.
  CHECK(s.https_proxy == "http://tls:2");
  CHECK(s.https_proxy_name == "HTTPS_PROXY");
  CHECK(s.no_proxy == "a.example");
  CHECK(s.cert_file == "/etc/ca.pem");
  CHECK(s.cert_dir == "/etc/certs");
  CHECK(s.allow_http == "gw.internal");
  const auto none = gate::net::settings_from(gate::Environment{});
  CHECK(none.https_proxy.empty());
  CHECK(none.cert_file.empty());
  CHECK(none.allow_http.empty());
}

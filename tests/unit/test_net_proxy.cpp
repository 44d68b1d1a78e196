#include <doctest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <cstdlib>
#include <thread>

#include <gate/model/api.hpp>
#include <gate/net/http_client.hpp>
#include <gate/net/proxy.hpp>
#include <gate/net/settings.hpp>
#include <gate/util/error.hpp>
#include <gate/util/redact.hpp>
#include <tests/support/fake_upstream.hpp>

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr const char* k_canary = "sk-canary-7f3a9b1c2d4e5f60";

} // namespace

TEST_CASE("NO_PROXY: host suffixes, a leading dot, '*', ports and case ignored") {
  using gate::net::no_proxy_matches;
  CHECK(no_proxy_matches("example.com", "example.com"));
  CHECK(no_proxy_matches("example.com", "api.example.com"));
  CHECK(no_proxy_matches(" .Example.COM ", "api.example.com"));
  CHECK_FALSE(no_proxy_matches("example.com", "badexample.com"));
  CHECK(no_proxy_matches("a.org,example.com:8443", "example.com"));
  CHECK(no_proxy_matches("*", "anything.net"));
  CHECK(no_proxy_matches("10.0.0.1", "10.0.0.1"));
  CHECK(no_proxy_matches("[::2]", "[::2]"));
  CHECK_FALSE(no_proxy_matches("", "example.com"));
  CHECK_FALSE(no_proxy_matches(",,", "example.com"));
}

TEST_CASE("proxy URLs: credentials become a redacted Basic header, errors never show them") {
  auto p = gate::net::parse_proxy("http://alice:s%40cret-pw@proxy.corp:3128/", "HTTPS_PROXY");
  CHECK(p.host == "proxy.corp");
  CHECK(p.port == "3128");
  // base64("alice:s@cret-pw") = YWxpY2U6c0BjcmV0LXB3
  CHECK(p.authorization == "Basic YWxpY2U6c0BjcmV0LXB3");
  CHECK(gate::redact("pw is s@cret-pw") == "pw is [REDACTED]");
  CHECK(gate::contains_secret("YWxpY2U6c0BjcmV0LXB3"));
  auto bare = gate::net::parse_proxy("proxy.corp", "http_proxy");
  CHECK(bare.port == "80");
  CHECK(bare.authorization.empty());
  for (const char* bad : {"https://u:hunter2x@p:1", "socks5://u:hunter2x@p:1", "http://u:hunter2x@p:99999",
                          "http://u:hunter2x@:80", "http://u:hunter2x@p:1/path"}) {
    CAPTURE(bad);
    try {
      gate::net::parse_proxy(bad, "HTTPS_PROXY");
      FAIL("accepted");
    } catch (const gate::Error& e) {
      CHECK(e.code() == gate::Exit::cannot_run);
      std::string what = e.what();
      CHECK(what.rfind("HTTPS_PROXY is not a usable proxy URL", 0) == 0);
      CHECK(what.find("hunter2x") == std::string::npos);
    }
  }
}

TEST_CASE("the proxy from the environment: lowercase first, NO_PROXY, never for loopback") {
  using gate::net::proxy_for;
  using gate::net::settings_from;
  auto env = [](std::vector<std::pair<std::string, std::string>> vars) {
    return settings_from(gate::environment_of(vars));
  };
  CHECK_FALSE(proxy_for("https", "api.example.com", env({})).has_value());
  const auto both = env({{"HTTPS_PROXY", "http://upper:8080"}, {"https_proxy", "http://lower:8081"}});
  auto p = proxy_for("https", "api.example.com", both);
  REQUIRE(p.has_value());
  CHECK(p->host == "lower");
  CHECK(p->setting == "https_proxy");
  CHECK_FALSE(proxy_for("http", "api.example.com", both).has_value());
  auto plain = env({{"HTTPS_PROXY", "http://upper:8080"},
                    {"https_proxy", "http://lower:8081"},
                    {"HTTP_PROXY", "http://plain:3128"}});
  CHECK(proxy_for("http", "api.example.com", plain)->host == "plain");
  auto exempt = env({{"HTTPS_PROXY", "http://upper:8080"},
                     {"https_proxy", "http://lower:8081"},
                     {"HTTP_PROXY", "http://plain:3128"},
                     {"NO_PROXY", ".example.com"}});
  CHECK_FALSE(proxy_for("https", "api.example.com", exempt).has_value());
  CHECK(proxy_for("https", "api.other.com", exempt).has_value());
  for (const char* host : {"localhost", "127.0.0.1", "127.3.2.1", "[::1]"})
    CHECK_FALSE(proxy_for("https", host, exempt).has_value());
}

TEST_CASE("a proxy answering 407 is a clear error naming the proxy, not the credentials; not retried") {
  asio::io_context ioc;
  tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0});
  unsigned short port = acceptor.local_endpoint().port();
  std::string seen;
  int connections = 0;
  std::thread proxy([&] {
    tcp::socket s(ioc);
    boost::system::error_code ec;
    acceptor.accept(s, ec);
    if (ec) return;
    ++connections;
    asio::read_until(s, asio::dynamic_buffer(seen), "\r\n\r\n", ec);
    asio::write(s,
                asio::buffer(std::string("HTTP/1.1 407 Proxy Authentication Required\r\n"
                                         "Content-Length: 0\r\nConnection: close\r\n\r\n")),
                ec);
  });
  const gate::Environment env =
      gate::environment_of({{"HTTPS_PROXY", "http://bob:pr0xy-pass@127.0.0.1:" + std::to_string(port)},
                            {"GATE_TEST_PROXY_KEY", k_canary}});
  gate::config::ModelConfig m;
  m.name = "fake-model";
  m.api_key_env = "GATE_TEST_PROXY_KEY";
  m.base_url = "https://api.example.com/v1";
  m.max_retries = 3;
  m.timeout_s = 2;
  gate::net::HttpOptions o;
  o.backoff_base_s = 0.001;
  auto client = gate::net::make_http_client(m, env, o);
  int attempts = 0;
  auto r = client->send({"openai", "/chat/completions", "{}"}, attempts);
  proxy.join();
  CHECK(attempts == 1);
  CHECK(connections == 1);
  CHECK(r.status == 0);
  CHECK(r.body == "proxy: proxy 127.0.0.1:" + std::to_string(port) +
                      " (from HTTPS_PROXY) answered 407 Proxy Authentication Required; check the user and "
                      "password in HTTPS_PROXY");
  CHECK(r.body.find("pr0xy-pass") == std::string::npos);
  CHECK(r.body.find(k_canary) == std::string::npos);
  // The tunnel request went to the proxy with its credentials, and no key.
  CHECK(seen.rfind("CONNECT api.example.com:443 HTTP/1.1\r\n", 0) == 0);
  CHECK(seen.find("Proxy-Authorization: Basic Ym9iOnByMHh5LXBhc3M=") != std::string::npos); // bob:pr0xy-pass
  CHECK(seen.find(k_canary) == std::string::npos);
  CHECK(gate::model::parse_response("openai", r).bucket == gate::model::Bucket::connection);
}

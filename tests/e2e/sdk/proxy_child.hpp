#pragma once

// Drives `gate proxy` as a child process for the end-to-end tests
// (test_proxy.cpp, test_sdk.cpp).
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <poll.h>
#include <string>
#include <unistd.h>
#include <vector>

#include "../harness.hpp"

namespace gate::e2e {

// Reads the child's stdout up to the "listening on" line and returns the port.
inline unsigned short read_port(Child& c, std::string& seen) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{c.out_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char chunk[256];
    ssize_t n = ::read(c.out_fd, chunk, sizeof chunk);
    if (n <= 0) break;
    seen.append(chunk, static_cast<std::size_t>(n));
    const std::string marker = "listening on http://127.0.0.1:";
    std::size_t at = seen.find(marker);
    if (at != std::string::npos && seen.find('\n', at) != std::string::npos)
      return static_cast<unsigned short>(std::stoi(seen.substr(at + marker.size())));
  }
  return 0;
}

// `gate proxy` on a free port in `mode`, with `extra` arguments; `port` is 0
// when it never said where.
inline Child start_proxy(const std::filesystem::path& dir, const std::string& mode,
                         const std::map<std::string, std::string>& env, std::string& out,
                         unsigned short& port, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"proxy", "--config", "gate.yaml", "--port", "0", "--mode", mode};
  args.insert(args.end(), extra.begin(), extra.end());
  Child c = spawn_gate(args, dir, env);
  port = read_port(c, out);
  return c;
}

struct ProxyAnswer {
  int status = 0;
  std::string content_type, body;
};

// One raw HTTP/1.1 exchange with the proxy, so the test controls Host and
// the target form. The agent's own key goes along, as an SDK's would.
inline ProxyAnswer send_to_proxy(unsigned short port, const std::string& method, const std::string& target,
                                 const std::string& host, const std::string& body) {
  namespace http = boost::beast::http;
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket sock(io);
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> req{method == "GET" ? http::verb::get : http::verb::post, target, 11};
  req.set(http::field::host, host);
  req.set(http::field::authorization, "Bearer dummy-agent-key");
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  http::write(sock, req);
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(sock, buf, res);
  return {static_cast<int>(res.result_int()), std::string(res[http::field::content_type]), res.body()};
}

inline Result stop(Child& c) {
  ::kill(c.pid, SIGTERM);
  return finish(c);
}

// A gate.yaml for the proxy: `provider` upstream at `base_url`, its key in
// $`key_env`, the cache in proxy-cache/.
inline void write_config(const std::filesystem::path& dir, const std::string& base_url,
                         const std::string& provider = "openai",
                         const std::string& key_env = "GATE_PROXY_TEST_KEY") {
  spit(dir / "gate.yaml", "suite:\n  path: suite\n  version: v1\nmodel:\n  provider: " + provider +
                              "\n  base_url: " + base_url + "\n  api_key_env: " + key_env +
                              "\n  name: m\ncache:\n  dir: proxy-cache\n");
}

} // namespace gate::e2e

// gate-bench-proxy: what `gate proxy` adds to a replayed request
// (bench/README.md, "proxy"). Starts the fake upstream and a proxy::Server
// in process, with a cache pre-recorded from the upstream's own answer, and
// prints figures; asserts nothing.
//
//   gate-bench-proxy [--latency-calls N] [--calls N] [--concurrency C] [--threads T]
#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gate/cache/store.hpp>
#include <gate/proxy/route.hpp>
#include <gate/proxy/server.hpp>
#include <gate/util/error.hpp>
#include <gate/util/json.hpp>
#include <tests/support/fake_upstream.hpp>

namespace {

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using Clock = std::chrono::steady_clock;

const std::string k_body =
    R"({"model":"bench-model","messages":[{"role":"system","content":"You are terse."},)"
    R"({"role":"user","content":"one benchmark question about the proxy"}],"temperature":0})";

// One keep-alive connection, as an SDK holds it.
struct Connection {
  boost::asio::io_context io;
  tcp::socket sock{io};
  boost::beast::flat_buffer buf;
  std::string host;

  explicit Connection(unsigned short port) : host("127.0.0.1:" + std::to_string(port)) {
    sock.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    sock.set_option(tcp::no_delay(true));
  }
  // The answer's body; throws on a status other than 200.
  std::string post(const std::string& target) {
    http::request<http::string_body> req{http::verb::post, target, 11};
    req.set(http::field::host, host);
    req.set(http::field::content_type, "application/json");
    req.keep_alive(true);
    req.body() = k_body;
    req.prepare_payload();
    http::write(sock, req);
    http::response<http::string_body> res;
    http::read(sock, buf, res);
    if (res.result_int() != 200)
      throw gate::Error(gate::Exit::cannot_run,
                        "HTTP " + std::to_string(res.result_int()) + ": " + res.body());
    return std::move(res.body());
  }
};

// Writes the entries a recording run of `count` identical requests in
// `scope` would have written, each with `answer`.
void prerecord(gate::cache::Store& store, const std::string& scope, int count, const std::string& answer) {
  const gate::proxy::Target t = *gate::proxy::parse_target(scope + "/chat/completions");
  const std::string canonical = gate::json::canonical(boost::json::parse(k_body));
  for (int i = 0; i < count; ++i) {
    gate::cache::Entry e;
    e.key = gate::proxy::request_key("openai", t, canonical, i);
    e.provider = "openai";
    e.path = t.scope_path;
    e.replica = i;
    e.request = canonical;
    e.headers = {{"content-type", "application/json"}};
    e.body = answer;
    e.recorded_at = "2026-01-01T00:00:00Z";
    store.put(e);
  }
}

// Seconds per request of `n` sequential requests on one connection.
std::vector<double> latencies(unsigned short port, const std::string& target, int n) {
  Connection c(port);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto start = Clock::now();
    c.post(target);
    out.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(out.begin(), out.end());
  return out;
}

double pct(const std::vector<double>& sorted, double p) {
  return sorted[std::min(sorted.size() - 1,
                         static_cast<std::size_t>(p * static_cast<double>(sorted.size())))];
}

struct Options {
  int latency_calls = 5000, calls = 40000, concurrency = 16, threads = 4;
};

// The options above as "--name N" pairs; nullopt on anything else.
std::optional<Options> parse_options(int argc, char** argv) {
  Options o;
  const std::pair<std::string_view, int*> known[] = {{"--latency-calls", &o.latency_calls},
                                                     {"--calls", &o.calls},
                                                     {"--concurrency", &o.concurrency},
                                                     {"--threads", &o.threads}};
  for (int i = 1; i < argc; i += 2) {
    auto it =
        std::find_if(std::begin(known), std::end(known), [&](const auto& k) { return k.first == argv[i]; });
    if (it == std::end(known) || i + 1 >= argc) return std::nullopt;
    *it->second = std::atoi(argv[i + 1]);
  }
  if (o.latency_calls < 1 || o.concurrency < 1 || o.calls < o.concurrency || o.threads < 1)
    return std::nullopt;
  return o;
}

} // namespace

int main(int argc, char** argv) {
  try {
    const std::optional<Options> opt = parse_options(argc, argv);
    if (!opt) {
      std::fprintf(stderr, "usage: gate-bench-proxy [--latency-calls N] [--calls N] [--concurrency C] "
                           "[--threads T] (positive; calls >= concurrency)\n");
      return 2;
    }
    const int lat_calls = opt->latency_calls, calls = opt->calls, concurrency = opt->concurrency,
              threads = opt->threads;
    const int per_thread = calls / concurrency;

    gate::testing::clear_network_env();
    gate::testing::FakeUpstream upstream(gate::testing::Script{});
    upstream.start(0, 2);
    const fs::path dir = fs::temp_directory_path() / ("gate-bench-proxy-" + std::to_string(::getpid()));
    gate::cache::Store store(dir);
    // The recorded answer is the upstream's own, so both sides send the same bytes.
    const std::string answer = Connection(upstream.port()).post("/v1/chat/completions");
    prerecord(store, "/t/latency/r/0", lat_calls, answer);
    for (int t = 0; t < concurrency; ++t)
      prerecord(store, "/t/load/r/" + std::to_string(t), per_thread, answer);

    gate::config::Config cfg;
    cfg.model.base_url = upstream.base_url();
    cfg.model.api_key_env = "GATE_BENCH_PROXY_UNSET_KEY"; // replay-only never calls it
    cfg.cache.dir = dir;
    cfg.cache.mode = gate::config::CacheMode::replay_only;
    gate::proxy::Server proxy(cfg, gate::Environment{});
    proxy.start(0, threads);

    std::vector<double> direct = latencies(upstream.port(), "/v1/chat/completions", lat_calls);
    std::vector<double> replayed = latencies(proxy.port(), "/t/latency/r/0/chat/completions", lat_calls);
    const double ms = 1000.0;
    std::printf("   latency, one keep-alive connection, %d sequential requests, %zu-byte answer:\n",
                lat_calls, answer.size());
    std::printf("     direct to the fake upstream: p50 %.3f ms  p99 %.3f ms\n", pct(direct, 0.5) * ms,
                pct(direct, 0.99) * ms);
    std::printf("     replayed by the proxy:       p50 %.3f ms  p99 %.3f ms\n", pct(replayed, 0.5) * ms,
                pct(replayed, 0.99) * ms);
    std::printf("     added by the proxy:          p50 %+.3f ms (target < 0.5 ms)  p99 %+.3f ms\n",
                (pct(replayed, 0.5) - pct(direct, 0.5)) * ms, (pct(replayed, 0.99) - pct(direct, 0.99)) * ms);

    std::atomic<int> ready{0}, failed{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> clients;
    for (int t = 0; t < concurrency; ++t)
      clients.emplace_back([&, t] {
        try {
          Connection c(proxy.port());
          const std::string target = "/t/load/r/" + std::to_string(t) + "/chat/completions";
          ++ready;
          while (!go)
            std::this_thread::yield();
          for (int i = 0; i < per_thread; ++i)
            c.post(target);
        } catch (const std::exception& e) {
          ++failed;
          std::fprintf(stderr, "gate-bench-proxy: client %d: %s\n", t, e.what());
        }
      });
    while (ready + failed < concurrency)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const auto start = Clock::now();
    go = true;
    for (auto& c : clients)
      c.join();
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    const int done = per_thread * concurrency;
    std::printf(
        "   throughput, %d keep-alive connections, proxy on %d threads: %d replayed requests in %.2f s "
        "= %.0f requests/s (target >= 5000)%s\n",
        concurrency, threads, done, wall, done / wall, failed > 0 ? ", SOME CLIENTS FAILED" : "");
    proxy.stop();
    upstream.stop();
    std::error_code ec;
    fs::remove_all(dir, ec);
    return failed > 0 ? 3 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gate-bench-proxy: %s\n", e.what());
    return 3;
  }
}

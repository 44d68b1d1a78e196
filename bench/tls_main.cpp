// gate-bench-tls: fresh calls against the fake upstream over TLS with
// keep-alive (bench/README.md, "tls"). Prints figures; asserts nothing.
//
//   gate-bench-tls [--calls N] [--concurrency C] [--latency-calls N] [--latency-concurrency C]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gate/model/api.hpp>
#include <gate/net/http_client.hpp>
#include <gate/util/atomic_file.hpp>
#include <gate/util/error.hpp>
#include <tests/support/fake_upstream.hpp>
#include <tests/support/test_certs.hpp>

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Figures {
  double wall_s = 0;
  int ok = 0;
  std::uint64_t connections = 0;
};

// `calls` calls on `concurrency` threads sharing one client, after each
// thread made one warm-up call (its TLS handshake) that is not timed.
Figures measure(double latency_ms, int calls, int concurrency, const gate::testing::Pem& cert,
                const fs::path& ca_file) {
  gate::testing::Script script;
  script.latency_ms = latency_ms;
  gate::testing::FakeUpstream server(script);
  server.start_tls(0, 2, cert.cert, cert.key);
  gate::config::ModelConfig m;
  m.name = "bench-model";
  m.api_key_env = "GATE_BENCH_TLS_KEY";
  m.base_url = server.base_url();
  m.ca_file = ca_file;
  m.max_retries = 0;
  m.timeout_s = 60;
  auto client = gate::net::make_http_client(
      m, gate::environment_of({{"GATE_BENCH_TLS_KEY", "sk-bench-not-a-real-key"}}));
  client->expect_workers(concurrency);
  const gate::model::ApiCall call{"openai", gate::model::endpoint_path(m),
                                  gate::model::build_request(m, "", {{"user", "one benchmark question"}})};

  std::atomic<int> next{0}, ok{0}, ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < concurrency; ++t)
    threads.emplace_back([&] {
      int attempts = 0;
      client->send(call, attempts); // handshake and pool entry, untimed
      ++ready;
      while (!go)
        std::this_thread::yield();
      while (next.fetch_add(1) < calls)
        if (client->send(call, attempts).status == 200) ++ok;
    });
  while (ready < concurrency)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto start = Clock::now();
  go = true;
  for (auto& t : threads)
    t.join();
  Figures f;
  f.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  f.ok = ok;
  f.connections = server.connections();
  return f;
}

int arg(int argc, char** argv, const std::string& name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return std::atoi(argv[i + 1]);
  return fallback;
}

} // namespace

int main(int argc, char** argv) {
  try {
    const int calls = arg(argc, argv, "--calls", 20000);
    const int concurrency = arg(argc, argv, "--concurrency", 16);
    const int lat_calls = arg(argc, argv, "--latency-calls", 5000);
    const int lat_concurrency = arg(argc, argv, "--latency-concurrency", 64);

    auto ca = gate::testing::make_test_ca();
    auto cert = gate::testing::issue_server_cert(ca, {"localhost"}, {"127.0.0.1"});
    fs::path dir = fs::temp_directory_path() / ("gate-bench-tls-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    gate::write_file_atomically(dir / "ca.pem", ca.cert);

    Figures a = measure(0, calls, concurrency, cert, dir / "ca.pem");
    std::printf("   (a) 0 ms latency, concurrency %d: %d calls (%d ok) in %.2f s = %.0f calls/s "
                "(target >= 2000), %llu TLS connections\n",
                concurrency, calls, a.ok, a.wall_s, calls / a.wall_s,
                static_cast<unsigned long long>(a.connections));

    Figures b = measure(50, lat_calls, lat_concurrency, cert, dir / "ca.pem");
    double ideal = lat_calls * 0.050 / lat_concurrency;
    std::printf("   (b) 50 ms latency, concurrency %d: %d calls (%d ok) in %.2f s; ideal %.2f s; "
                "%+.1f%% over (target within 10%%), %llu TLS connections\n",
                lat_concurrency, lat_calls, b.ok, b.wall_s, ideal, 100.0 * (b.wall_s / ideal - 1.0),
                static_cast<unsigned long long>(b.connections));
    std::error_code ec;
    fs::remove_all(dir, ec);
    return 0;
  } catch (const gate::Error& e) {
    std::fprintf(stderr, "gate-bench-tls: %s\n", e.what());
    return 3;
  }
}

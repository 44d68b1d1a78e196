// fake-upstream [--script FILE] [--port N] [--threads N] [--stdin-close]
//               [--tls-cert FILE --tls-key FILE [--sni NAME]]
//
// Serves the fake OpenAI/Anthropic upstream on 127.0.0.1 until SIGINT or
// SIGTERM (or, with --stdin-close, until stdin reaches EOF, so a parent
// that dies takes the server with it). The first line on stdout is
// "listening on http://127.0.0.1:<port>/v1" (with TLS, "https://localhost:...").
// --tls-cert/--tls-key: PEM certificate chain and key; --sni: serve only
// handshakes that name this host.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <pthread.h>
#include <string>
#include <thread>
#include <unistd.h>

#include <gate/util/error.hpp>
#include <gate/util/input.hpp>
#include <tests/support/fake_upstream.hpp>

namespace {

constexpr const char* k_usage =
    "usage: fake-upstream [--script FILE] [--port N] [--threads N] [--stdin-close]\n"
    "                     [--tls-cert FILE --tls-key FILE [--sni NAME]]";

int usage_error(const std::string& message) {
  std::cerr << "fake-upstream: " << message << "\n" << k_usage << "\n";
  return 2;
}

bool parse_int(const std::string& s, int lo, int hi, int& out) {
  try {
    std::size_t used = 0;
    int v = std::stoi(s, &used);
    if (used != s.size() || v < lo || v > hi) return false;
    out = v;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

} // namespace

int main(int argc, char** argv) {
  std::string script_file;
  int port = 0;
  int threads = 2;
  bool stdin_close = false;
  std::string tls_cert, tls_key, sni;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--script" && has_value) {
      script_file = argv[++i];
    } else if (arg == "--port" && has_value) {
      if (!parse_int(argv[++i], 0, 65535, port))
        return usage_error("--port expects a number from 0 to 65535");
    } else if (arg == "--threads" && has_value) {
      if (!parse_int(argv[++i], 1, 256, threads))
        return usage_error("--threads expects a number from 1 to 256");
    } else if (arg == "--tls-cert" && has_value) {
      tls_cert = argv[++i];
    } else if (arg == "--tls-key" && has_value) {
      tls_key = argv[++i];
    } else if (arg == "--sni" && has_value) {
      sni = argv[++i];
    } else if (arg == "--stdin-close") {
      stdin_close = true;
    } else if (arg == "--help" || arg == "-h") {
      std::cout << k_usage << "\n";
      return 0;
    } else {
      return usage_error("unknown or incomplete argument \"" + arg + "\"");
    }
  }
  if (tls_cert.empty() != tls_key.empty()) return usage_error("--tls-cert and --tls-key go together");
  if (!sni.empty() && tls_cert.empty()) return usage_error("--sni needs --tls-cert and --tls-key");

  // Blocked before any thread starts, so every thread inherits the mask and
  // only sigwait below sees the signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  try {
    gate::testing::Script script;
    if (!script_file.empty()) script = gate::testing::parse_script(gate::read_file(script_file), script_file);
    gate::testing::FakeUpstream server(std::move(script));
    if (tls_cert.empty())
      server.start(static_cast<unsigned short>(port), threads);
    else
      server.start_tls(static_cast<unsigned short>(port), threads, gate::read_file(tls_cert),
                       gate::read_file(tls_key), sni);
    std::cout << "listening on " << server.base_url() << std::endl;

    if (stdin_close) {
      std::thread([] {
        char buf[4096];
        while (::read(STDIN_FILENO, buf, sizeof buf) > 0) {
        }
        // Pending on the process, picked up by the sigwait below.
        ::kill(::getpid(), SIGTERM);
      }).detach();
    }
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
    return 0;
  } catch (const gate::Error& e) {
    std::cerr << "fake-upstream: " << e.what() << "\n";
    return static_cast<int>(e.code());
  }
}

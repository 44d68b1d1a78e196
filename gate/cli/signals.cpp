#include <gate/cli/signals.hpp>

#include <csignal>

namespace gate::cli {

namespace {
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void on_signal(int sig) {
  if (g_stop.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_signal = sig;
}
} // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

const std::atomic<bool>& stop_requested() { return g_stop; }

int stop_exit_code() {
  int s = g_signal;
  return s == 0 ? 0 : 128 + s;
}

} // namespace gate::cli

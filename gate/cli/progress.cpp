#include <gate/cli/progress.hpp>

#include <cstdio>
#include <unistd.h>

namespace gate::cli {

ProgressPrinter::ProgressPrinter(bool quiet) : quiet_(quiet), tty_(::isatty(2) == 1) {}

ProgressPrinter::~ProgressPrinter() { finish(); }

run::Progress ProgressPrinter::callbacks() {
  run::Progress p;
  if (quiet_) return p;
  p.start = [this](std::size_t total) { start(total); };
  p.run_done = [this](bool hit, bool errored) {
    hits_ += hit ? 1 : 0;
    errors_ += errored ? 1 : 0;
    ++done_;
  };
  p.finish = [this] { finish(); };
  return p;
}

void ProgressPrinter::start(std::size_t total) {
  total_ = total;
  began_ = std::chrono::steady_clock::now();
  thread_ = std::thread([this] { loop(); });
}

void ProgressPrinter::finish() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  print(true);
}

void ProgressPrinter::loop() {
  // A TTY redraws often; a log gets a line every 5 s so it stays readable.
  const auto period = tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; }))
    print(false);
}

void ProgressPrinter::print(bool final) {
  const std::size_t done = done_, hits = hits_, errors = errors_;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began_).count();
  const double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : 0;
  const double share = total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 1;
  if (tty_) {
    char bar[31];
    int filled = static_cast<int>(share * 30);
    for (int i = 0; i < 30; ++i)
      bar[i] = i < filled ? '#' : '-';
    bar[30] = '\0';
    std::fprintf(stderr, "\r[%s] %zu/%zu runs  %zu cached  %zu errors  ETA %.0fs ", bar, done, total_, hits,
                 errors, eta);
    if (final) std::fprintf(stderr, "\n");
  } else if (!final || total_ > 0) {
    std::fprintf(stderr, "gate: %zu/%zu runs (%.0f%%), %zu cached, %zu errors, %.1fs elapsed\n", done, total_,
                 share * 100, hits, errors, elapsed);
  }
  std::fflush(stderr);
}

} // namespace gate::cli

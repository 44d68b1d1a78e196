#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <gate/run/runner.hpp>

namespace gate::cli {

// Progress on stderr: a live bar with counts, cache hits and ETA on a TTY;
// a plain line every few seconds otherwise (CI logs); nothing when quiet.
class ProgressPrinter {
public:
  explicit ProgressPrinter(bool quiet);
  ~ProgressPrinter();
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  run::Progress callbacks();

private:
  void start(std::size_t total);
  void finish();
  void loop();
  void print(bool final);

  bool quiet_;
  bool tty_;
  std::size_t total_ = 0;
  std::atomic<std::size_t> done_{0}, hits_{0}, errors_{0};
  std::chrono::steady_clock::time_point began_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace gate::cli

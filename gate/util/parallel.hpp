#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace gate {

// How many parts to split `items` of work into: one per core (at most
// `most`), and one when there is too little to be worth a thread.
inline std::size_t parts_for(std::size_t items, std::size_t enough, std::size_t most = 4) {
  if (items < enough) return 1;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<std::size_t>(std::min(cores, most), 1, items);
}

// Calls f(0) .. f(count - 1), each on its own thread (f(0) on this one),
// and waits for all. An exception does not stop the others; the one of the
// lowest index is rethrown, so the error a caller sees is the one a serial
// loop would have met first. Used for the serial stretches of a large run
// (reading the suite, preparing requests), which otherwise leave a core idle.
template <class F> void run_parallel(std::size_t count, F&& f) {
  std::vector<std::exception_ptr> errors(count);
  auto guarded = [&](std::size_t i) {
    try {
      f(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  std::size_t started = 1;
  try {
    for (; started < count; ++started)
      threads.emplace_back(guarded, started);
  } catch (const std::system_error&) {
    // No thread to be had: what did not start runs here.
  }
  if (count > 0) guarded(0);
  for (std::size_t i = started; i < count; ++i)
    guarded(i);
  for (auto& t : threads)
    t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

} // namespace gate

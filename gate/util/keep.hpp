#pragma once

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace gate {

// Hands a large value that is needed until the process ends to the process
// instead of destroying it. Freeing a 100,000-task report allocation by
// allocation costs a tenth of a second of a command that takes one, and
// exit() gets the memory back for nothing. The values stay reachable from a
// global list, so leak checkers do not report them; call this only on the
// way out of a command (or once, for a value the command then uses until
// it returns), never in a loop. Returns the kept value.
template <class T> std::decay_t<T>& keep_until_exit(T&& value) {
  static std::mutex mutex;
  static auto* kept = new std::vector<std::shared_ptr<void>>(); // never deleted, on purpose
  auto held = std::make_shared<std::decay_t<T>>(std::forward<T>(value));
  std::decay_t<T>& ref = *held;
  std::lock_guard lock(mutex);
  kept->push_back(std::move(held));
  return ref;
}

} // namespace gate

#pragma once

#include <stdexcept>
#include <string>

namespace gate {

// Process exit codes; the contract in ../shared/METRICS.md and RELIABILITY.md.
enum class Exit : int {
  pass = 0,
  threshold = 1,  // a gate threshold was crossed
  bad_input = 2,  // bad input or usage
  cannot_run = 3, // network, TLS, auth, disk, no key for a fresh call
  cache_miss = 4, // replay-only and a response is not recorded
  interrupted_int = 130,
  interrupted_term = 143,
};

// The one error type thrown where input is read or a resource fails. `main`
// catches it once and turns it into a message on stderr and the exit code.
// The message must never contain a secret.
class Error : public std::runtime_error {
public:
  Error(Exit code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Exit code() const { return code_; }

private:
  Exit code_;
};

// Shorthands for the common kinds.
[[noreturn]] void throw_bad_input(const std::string& message);
[[noreturn]] void throw_cannot_run(const std::string& message);

// "file:line:col: message" (col omitted when 0, line omitted when 0).
std::string located(const std::string& file, std::size_t line, std::size_t col, const std::string& message);

} // namespace gate

#include <gate/util/error.hpp>

namespace gate {

void throw_bad_input(const std::string& message) { throw Error(Exit::bad_input, message); }

void throw_cannot_run(const std::string& message) { throw Error(Exit::cannot_run, message); }

std::string located(const std::string& file, std::size_t line, std::size_t col, const std::string& message) {
  std::string out = file;
  if (line > 0) {
    out += ':' + std::to_string(line);
    if (col > 0) out += ':' + std::to_string(col);
  }
  out += ": ";
  out += message;
  return out;
}

} // namespace gate

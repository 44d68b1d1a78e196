#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace gate {

// The most gate reads of one input file into memory unless its reader says
// less (the config's 1 MiB, say).
inline constexpr std::size_t k_max_input_bytes = std::size_t{1} << 30;

// Opens a file the user named as input and returns its descriptor. Only a
// regular file or a pipe (a FIFO, `<(…)`, /dev/stdin on a pipe) is read: a
// device such as /dev/zero or /dev/urandom never ends, so it is refused
// before it is opened, as are directories and sockets. Throws
// Error(bad_input) naming the path and what it is.
int open_input(const std::filesystem::path& path);

// Appends what `fd` holds up to its end to `out`. Stops as soon as more than
// `max_bytes` have come (returning too_big, `out` holding max_bytes + 1 of
// them), so an endless or huge input costs no more than the limit.
enum class ReadAll { ok, too_big, failed }; // failed: errno says why
ReadAll read_all(int fd, std::size_t max_bytes, std::string& out);

// "1 MiB", "64 KiB" or "1000 bytes": a limit in a message.
std::string byte_limit_text(std::size_t bytes);

// Reads a whole input file (as open_input allows) of at most `max_bytes`,
// the limit enforced while reading. Throws Error(bad_input) naming the path
// when it cannot be opened or read, is not a file or pipe, or is larger.
std::string read_file(const std::filesystem::path& path, std::size_t max_bytes = k_max_input_bytes);

} // namespace gate

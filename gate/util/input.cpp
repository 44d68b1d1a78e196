#include <gate/util/input.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gate/util/error.hpp>
#include <gate/util/fd.hpp>

namespace gate {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

bool readable_kind(mode_t mode) { return S_ISREG(mode) || S_ISFIFO(mode); }

[[noreturn]] void refuse_size(const std::filesystem::path& path, std::size_t max_bytes) {
  throw_bad_input(path.string() + ": larger than " + byte_limit_text(max_bytes) +
                  ", the limit for this file");
}

[[noreturn]] void refuse_kind(const std::filesystem::path& path, mode_t mode) {
  throw_bad_input(path.string() + ": " + kind_of(mode) + "; expected a regular file (or a pipe)");
}

} // namespace

int open_input(const std::filesystem::path& path) {
  // stat first: opening a device can itself have effects (a tape rewinds).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw_bad_input("cannot read " + path.string() + ": " + std::strerror(errno));
  if (!readable_kind(st.st_mode)) refuse_kind(path, st.st_mode);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_bad_input("cannot read " + path.string() + ": " + std::strerror(errno));
  // The name may have been pointed elsewhere between stat and open.
  if (::fstat(fd, &st) != 0 || !readable_kind(st.st_mode)) {
    ::close(fd);
    refuse_kind(path, st.st_mode);
  }
  return fd;
}

ReadAll read_all(int fd, std::size_t max_bytes, std::string& out) {
  const std::size_t start = out.size();
  char buf[65536];
  for (;;) {
    // One byte over the limit tells "too big" without reading more.
    const std::size_t room = max_bytes - (out.size() - start);
    const ssize_t n = ::read(fd, buf, room < sizeof buf ? room + 1 : sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ReadAll::failed;
    }
    if (n == 0) return ReadAll::ok;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() - start > max_bytes) return ReadAll::too_big;
  }
}

std::string byte_limit_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::string read_file(const std::filesystem::path& path, std::size_t max_bytes) {
  const Fd fd(open_input(path));
  std::string out;
  struct stat st {};
  if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) refuse_size(path, max_bytes);
    out.reserve(static_cast<std::size_t>(st.st_size));
  }
  switch (read_all(fd.get(), max_bytes, out)) {
  case ReadAll::ok: return out;
  case ReadAll::too_big: refuse_size(path, max_bytes);
  case ReadAll::failed: break;
  }
  throw_bad_input("cannot read " + path.string() + ": " + std::strerror(errno));
}

} // namespace gate

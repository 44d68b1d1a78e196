#include <gate/util/atomic_file.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <gate/util/error.hpp>

namespace gate {

namespace {
std::string errno_text() { return std::strerror(errno); }
} // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  std::string tmpl = target_.string() + std::string(k_temp_marker) + "XXXXXX";
  fd_ = ::mkstemp(tmpl.data());
  if (fd_ < 0) throw_cannot_run("cannot write " + target_.string() + ": " + errno_text());
  // mkstemp creates 0600; written files should be as readable as any other.
  ::fchmod(fd_, 0644);
  temp_path_ = std::move(tmpl);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void AtomicFile::write(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_cannot_run("cannot write " + target_.string() + ": " + errno_text());
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AtomicFile::commit() {
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw_cannot_run("cannot write " + target_.string() + ": " + errno_text());
  if (::rename(temp_path_.c_str(), target_.c_str()) != 0)
    throw_cannot_run("cannot write " + target_.string() + ": " + errno_text());
  committed_ = true;
}

void write_file_atomically(const std::filesystem::path& target, std::string_view data) {
  AtomicFile file(target);
  file.write(data);
  file.commit();
}

void ensure_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw_cannot_run("cannot create directory " + dir.string() + ": " + ec.message());
}

std::string read_file(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_bad_input("cannot read " + path.string() + ": " + errno_text());
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string why = errno_text();
      ::close(fd);
      throw_bad_input("cannot read " + path.string() + ": " + why);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

} // namespace gate

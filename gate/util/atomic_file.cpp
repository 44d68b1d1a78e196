#include <gate/util/atomic_file.hpp>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <gate/util/error.hpp>

namespace gate {

namespace {
std::string errno_text() { return std::strerror(errno); }

// The writer's pid in a temp name's "<pid>-XXXXXX"; 0 when it has none (an
// older gate wrote none), so that only age can judge the file.
pid_t writer_pid(std::string_view rest) {
  int pid = 0;
  const char* end = rest.data() + rest.size();
  const auto [at, ec] = std::from_chars(rest.data(), end, pid);
  return ec == std::errc() && pid > 0 && at != end && *at == '-' ? pid : 0;
}

} // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  std::string tmpl = target_.string() + std::string(k_temp_marker) + std::to_string(::getpid()) + "-XXXXXX";
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
  if (!commit_unless_vanished())
    throw_cannot_run("cannot write " + target_.string() + ": its temp file " + temp_path_ +
                     " was removed before the rename");
}

bool AtomicFile::commit_unless_vanished() {
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw_cannot_run("cannot write " + target_.string() + ": " + errno_text());
  if (::rename(temp_path_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    struct stat st {};
    // The temp file is gone but its directory is not: someone removed the
    // file itself. A vanished directory stays an error.
    if (err == ENOENT && ::lstat(temp_path_.c_str(), &st) != 0 && errno == ENOENT &&
        ::lstat(target_.parent_path().empty() ? "." : target_.parent_path().c_str(), &st) == 0) {
      temp_path_.clear(); // nothing left to remove
      return false;
    }
    errno = err;
    throw_cannot_run("cannot write " + target_.string() + ": " + errno_text());
  }
  committed_ = true;
  return true;
}

void remove_stale_temp_files(const std::filesystem::path& target) {
  const std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
  const std::string prefix = target.filename().string() + std::string(AtomicFile::k_temp_marker);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const int dfd = ::dirfd(d);
  const auto now = ::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (!name.starts_with(prefix)) continue;
    struct stat st {};
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    const auto age = now - st.st_mtime;
    const pid_t pid = writer_pid(name.substr(prefix.size()));
    const bool writer_gone = pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
    if ((writer_gone && age > 60) || age > 24 * 3600) ::unlinkat(dfd, e->d_name, 0);
  }
  ::closedir(d);
}

void write_file_atomically(const std::filesystem::path& target, std::string_view data, StaleTemps stale) {
  for (int attempt = 1;; ++attempt) {
    AtomicFile file(target);
    file.write(data);
    if (attempt == 3) {
      file.commit();
    } else if (!file.commit_unless_vanished()) {
      continue;
    }
    break;
  }
  if (stale == StaleTemps::remove) remove_stale_temp_files(target);
}

void ensure_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw_cannot_run("cannot create directory " + dir.string() + ": " + ec.message());
}

} // namespace gate

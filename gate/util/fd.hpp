#pragma once

#include <unistd.h>

namespace gate {

// Owns an open file descriptor and closes it at scope exit. -1 (a failed
// open) is held too, so that the caller can test it and read errno.
class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

private:
  int fd_;
};

} // namespace gate

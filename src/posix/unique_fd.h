// unique_fd.h — the one owner of a file descriptor (docs/architecture.md,
// "Descriptors"). Every descriptor the library opens is held by exactly one
// unique_fd, so that no error path leaks or closes it twice.
#pragma once

#include <unistd.h>

#include <utility>

namespace cordon {

class unique_fd {
 public:
  unique_fd() noexcept = default;
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  unique_fd(unique_fd&& other) noexcept : fd_(other.release()) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() { reset(); }

  // The descriptor, or -1; still owned.
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  // Gives up ownership without closing.
  int release() noexcept { return std::exchange(fd_, -1); }
  // Closes the held descriptor (errors of close(2) are not actionable: the
  // descriptor is gone either way) and takes `fd`.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  // Closes the held descriptor now and returns close(2)'s result (0, or -1
  // with errno set), for a writer that must know whether its data got out.
  int close_now() noexcept { return ::close(release()); }

 private:
  int fd_ = -1;
};

}  // namespace cordon

// splice_pipe.h — a kernel pipe for relaying with splice(2).
//
// splice(2) moves bytes socket -> pipe -> socket inside the kernel: the
// relayed bytes never enter the broker's memory, which roughly halves its CPU
// time per byte (docs/benchmarks.md, "Filtered networking"). One pipe per
// direction per connection; when no pipe can be had (descriptor limit), the
// session relays through user-space buffers instead.
//
// splice(2) is Linux-only. Elsewhere (the macOS backend uses the same broker,
// docs/macos-backend.md) open() always fails, so every session takes the
// buffer path, and the stand-ins at the end of this file only let the splice
// path compile: they are never called.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace cordon::broker::detail {

#if defined(__linux__)
class splice_pipe {
 public:
  splice_pipe() = default;
  ~splice_pipe() { close(); }
  splice_pipe(const splice_pipe&) = delete;
  splice_pipe& operator=(const splice_pipe&) = delete;

  // Opens the pipe (non-blocking, close-on-exec) and asks for `size` bytes
  // (relay_memory.h chooses it). False when the process has no descriptors
  // left or pipes are unavailable.
  bool open(int size) {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return false;
    read_fd = fds[0];
    write_fd = fds[1];
    resize(size);
    return true;
  }

  // Asks for a pipe of `size` bytes. Pipe buffers count against the user's
  // quota (fs.pipe-user-pages-soft), which the user's other programs share;
  // the kernel may grant less or refuse (the pipe keeps its size), which
  // only costs speed. `capacity` is what the pipe holds now.
  void resize(int size) {
    (void)::fcntl(write_fd, F_SETPIPE_SZ, size);
    const int now = ::fcntl(write_fd, F_GETPIPE_SZ);
    capacity = now > 0 ? static_cast<std::size_t>(now) : 4096;
  }

  void close() {
    if (read_fd >= 0) ::close(read_fd);
    if (write_fd >= 0) ::close(write_fd);
    read_fd = write_fd = -1;
    held = 0;
  }

  int read_fd = -1;
  int write_fd = -1;
  std::size_t capacity = 0;  // bytes the pipe holds (F_GETPIPE_SZ)
  std::size_t held = 0;      // bytes in the pipe, not yet spliced out
};
#else
class splice_pipe {
 public:
  bool open(int) { return false; }  // no splice(2): relay through buffers
  void resize(int) {}
  void close() { held = 0; }
  int read_fd = -1;
  int write_fd = -1;
  std::size_t capacity = 0;
  std::size_t held = 0;
};
#endif

}  // namespace cordon::broker::detail

#if !defined(__linux__)
inline constexpr unsigned int SPLICE_F_MOVE = 1U;
inline constexpr unsigned int SPLICE_F_NONBLOCK = 2U;
inline ssize_t splice(int, void*, int, void*, std::size_t, unsigned int) {
  errno = ENOSYS;
  return -1;
}
#endif

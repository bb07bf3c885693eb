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
  // What one splice call asks to move, and the pipe size asked for (bytes).
  // A larger pipe means fewer system calls per byte, but pipe buffers count
  // against the user's quota (fs.pipe-user-pages-soft, 64 MiB by default),
  // which the user's other programs share: 256 KiB per direction keeps 128
  // busy connections inside it. The kernel may grant less, which only costs
  // speed.
  static constexpr std::size_t chunk_bytes = 256 * 1024;

  splice_pipe() = default;
  ~splice_pipe() { close(); }
  splice_pipe(const splice_pipe&) = delete;
  splice_pipe& operator=(const splice_pipe&) = delete;

  // Opens the pipe (non-blocking, close-on-exec). False when the process has
  // no descriptors left or pipes are unavailable.
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return false;
    read_fd = fds[0];
    write_fd = fds[1];
    (void)::fcntl(write_fd, F_SETPIPE_SZ, static_cast<int>(chunk_bytes));
    return true;
  }

  void close() {
    if (read_fd >= 0) ::close(read_fd);
    if (write_fd >= 0) ::close(write_fd);
    read_fd = write_fd = -1;
    held = 0;
  }

  int read_fd = -1;
  int write_fd = -1;
  std::size_t held = 0;  // bytes in the pipe, not yet spliced out
};
#else
class splice_pipe {
 public:
  static constexpr std::size_t chunk_bytes = 256 * 1024;
  bool open() { return false; }  // no splice(2): relay through buffers
  void close() { held = 0; }
  int read_fd = -1;
  int write_fd = -1;
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

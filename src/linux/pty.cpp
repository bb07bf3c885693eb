// pty.cpp — the private pty pair and the caller's raw mode (pty.h).
//
// References: pty(7), ioctl_tty(2) (TIOCSPTLCK, TIOCGPTPEER, TIOCSWINSZ,
// TIOCSCTTY), termios(3) (cfmakeraw), credentials(7) (sessions).
#include "linux/pty.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "posix/unique_fd.h"

namespace cordon::linux_impl {

int open_private_pty(const struct winsize& size, int* master, int* slave) noexcept {
  // /dev/ptmx is a symlink to pts/ptmx in the private /dev: this instance
  // knows nothing of the host's terminals. (PID 1 returns from here, so the
  // guard's destructor runs; it is one close(2), async-signal-safe.)
  unique_fd m(::open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!m) return errno;
  int unlock = 0;
  if (::ioctl(m.get(), TIOCSPTLCK, &unlock) != 0 || ::ioctl(m.get(), TIOCSWINSZ, &size) != 0) return errno;
  int s = ::ioctl(m.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0) return errno;
  *master = m.release();
  *slave = s;
  return 0;
}

void take_controlling_terminal(const stdio_handoff& handoff) noexcept {
  if (handoff.terminal[0]) ::ioctl(0, TIOCSCTTY, 0);
}

bool raw_terminal::engage(int fd) noexcept {
  if (::tcgetattr(fd, &saved_) != 0) return false;
  fd_ = fd;
  reapply();
  return true;
}

void raw_terminal::reapply() noexcept {
  if (fd_ < 0) return;
  struct termios raw = saved_;
  ::cfmakeraw(&raw);
  ::tcsetattr(fd_, TCSANOW, &raw);
}

void raw_terminal::restore() noexcept {
  if (fd_ < 0) return;
  ::tcsetattr(fd_, TCSANOW, &saved_);
  fd_ = -1;
}

}  // namespace cordon::linux_impl

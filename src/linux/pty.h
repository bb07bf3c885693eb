// pty.h — the run's private terminal.
//
// When the caller's stdin is a terminal and the policy allows a pty
// (process.allow_pty), PID 1 opens a pty pair from the sandbox's own devpts
// instance (mounted with newinstance in the private /dev): the command's
// terminal is /dev/pts/N inside, ttyname() names it, the command is the
// session leader with it as controlling terminal, and job control (Ctrl-C,
// Ctrl-Z, fg, SIGWINCH) happens between the command and its own line
// discipline. The supervisor holds the master and relays it to the caller's
// terminal (relay.h), which it puts in raw mode for the run: keys reach the
// private pty as bytes, so no job-control signal from the keyboard reaches
// cordon itself, and TIOCSTI or TIOCLINUX (also refused by seccomp) could
// only reach the private pty, never the caller's terminal.
#pragma once

#include <sys/ioctl.h>
#include <termios.h>

#include "linux/stdio_plan.h"

namespace cordon::linux_impl {

// PID 1, inside the final root: opens /dev/ptmx (the private devpts), unlocks
// it, gives it `size`, and opens its slave with TIOCGPTPEER (no path walk).
// Both descriptors are close-on-exec. Async-signal-safe; returns 0 or errno.
int open_private_pty(const struct winsize& size, int* master, int* slave) noexcept;

// The command (PID 2, after setsid()): makes the private pty on slot 0 its
// controlling terminal, when the plan gave it one. Async-signal-safe.
void take_controlling_terminal(const stdio_handoff& handoff) noexcept;

// The caller's terminal in raw mode for the life of the object; the
// original settings are restored by the destructor (normal exit, timeout,
// error, a forwarded signal: every path through supervise_launch). A
// SIGKILL of cordon cannot be caught and leaves the terminal raw (`stty
// sane` restores it).
class raw_terminal {
 public:
  raw_terminal() = default;
  raw_terminal(const raw_terminal&) = delete;
  raw_terminal& operator=(const raw_terminal&) = delete;
  ~raw_terminal() { restore(); }
  // Saves the settings of `fd` and makes it raw (cfmakeraw). False when
  // `fd` is not a terminal; nothing is changed then.
  bool engage(int fd) noexcept;
  // Raw again (after SIGCONT: the caller's shell may have reset the
  // terminal while cordon was stopped).
  void reapply() noexcept;
  void restore() noexcept;

 private:
  int fd_ = -1;
  struct termios saved_ {};
};

}  // namespace cordon::linux_impl

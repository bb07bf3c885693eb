// stdio_plan.h — what the command gets as descriptors 0, 1 and 2.
//
// The caller's stdio may be host files, devices or terminals. Whatever the
// command holds, it can change the metadata of (fchmod, futimens, fchown,
// fsetxattr work on a descriptor, through any dup or /proc/self/fd, and no
// path rule sees them), and a directory is a root for openat(). So the
// command never holds one: it gets only things whose metadata cannot reach a
// host file (docs/linux-backend.md, "Standard descriptors and terminals"):
//
//   anonymous pipe or socket        passed through (the common case, no cost)
//   /dev/null                       the sandbox's own /dev/null (a read-only bind)
//   a terminal (stdin and stdout    a private pty from the sandbox's devpts,
//   on it, cordon its foreground    relayed by the supervisor (pty.h), when
//   job)                            the policy allows a pty; else a pipe
//   anything else (regular file,    a supervisor-owned pipe relayed to the
//   device, named FIFO)             caller's descriptor (relay.h)
//   directory or O_PATH             refused: error_code::usage_error
//   closed                          stays closed
#pragma once

#include <sys/ioctl.h>

#include <cstdint>

#include "cordon/result.h"

namespace cordon::linux_impl {

enum class stdio_route : std::uint8_t { inherit, relay, dev_null, terminal };

struct stdio_plan {
  stdio_route route[3] = {stdio_route::inherit, stdio_route::inherit, stdio_route::inherit};
  // The lowest slot holding the same file: 1 and 2 pointing at one log file
  // share one pipe, so the file keeps the command's order of writes.
  int same_as[3] = {0, 1, 2};
  bool all_inherited() const noexcept {
    return route[0] == stdio_route::inherit && route[1] == stdio_route::inherit && route[2] == stdio_route::inherit;
  }
};

// Classifies descriptors 0-2 of the calling process. `allow_terminal` is the
// policy's process.allow_pty; a terminal on stdin and stdout becomes a
// private pty only with it, and only while this process is its terminal's
// foreground job (its own process group, in the foreground); otherwise the
// terminal is relayed as a pipe.
// Two or three system calls per descriptor when they are pipes or sockets.
// Errors: usage_error for a directory or an O_PATH descriptor (the command
// could open files beneath it, past the mount table and Landlock).
result<stdio_plan> plan_stdio(bool allow_terminal);

// What PID 1 needs to install the plan (sandbox_init.h), prepared by the
// supervisor (relay.h). Plain descriptors: PID 1 runs async-signal-safe code.
struct stdio_handoff {
  int child_fd[3] = {-1, -1, -1};  // relay: the sandbox's pipe end, to be moved onto slot i
  bool dev_null[3] = {false, false, false};
  bool terminal[3] = {false, false, false};  // slot i becomes the private pty's slave
  bool any_terminal = false;
  struct winsize size {};  // the caller's window size, given to the private pty
  int pty_send_fd = -1;    // unix socket: PID 1 sends the pty master to the supervisor
  // The supervisor's own ends (PID 1 inherits them and never execs): closed
  // by PID 1, or a stdin pipe would never reach EOF.
  int supervisor_fd[6] = {-1, -1, -1, -1, -1, -1};
};

// PID 1, inside the final root: opens the private pty (when asked; `*master`
// gets its master, else -1) and moves every planned descriptor onto 0-2.
// Async-signal-safe. Returns 0 or an errno value.
int install_stdio(const stdio_handoff& handoff, int* master) noexcept;

}  // namespace cordon::linux_impl

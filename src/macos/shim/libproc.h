// libproc.h — stand-in for Apple's <libproc.h> on other hosts (apple_shim.h).
#pragma once

#include <cstdint>

#define PROC_PIDLISTFDS 1

// One open descriptor of a process, as PROC_PIDLISTFDS lists it.
struct proc_fdinfo {
  std::int32_t proc_fd;
  std::uint32_t proc_fdtype;  // always 0 here (Apple's PROX_FDTYPE_*)
};

// PROC_PIDLISTFDS of the calling process only (pid == getpid()): fills
// `buffer` with up to buffersize / sizeof(proc_fdinfo) entries and returns the
// bytes written; 0 with errno on failure (EINVAL for another pid or flavor,
// else the error of opening or reading /proc/self/fd). Allocates nothing: safe
// between fork and exec.
extern "C" int proc_pidinfo(int pid, int flavor, std::uint64_t arg, void* buffer, int buffersize);

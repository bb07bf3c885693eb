// apple_shim.h — the thin platform shim that lets the macOS launcher
// (launcher_apple.cpp) compile and run on Linux (docs/macos-backend.md, "What is
// verified where"). Force-included (-include) before launcher_apple.cpp on a
// non-Apple host by src/macos/CMakeLists.txt, with this folder first on the
// include path, where libproc.h, sys/event.h and sys/sysctl.h stand in for
// Apple's headers. Each stand-in gives the launcher the behaviour it relies on
// (apple_shim.cpp), built from Linux system calls:
//  - kqueue/kevent: EVFILT_PROC NOTE_EXIT (a pidfd) and EVFILT_TIMER in
//    milliseconds (a timerfd), both EV_ONESHOT, waited on with epoll;
//  - proc_pidinfo(PROC_PIDLISTFDS): the open descriptors from /proc/self/fd,
//    without allocating (the launcher calls it between fork and exec);
//  - sysctlbyname: fails with ENOENT (no kern.osproductversion here);
//  - confstr(_CS_DARWIN_USER_TEMP_DIR): $TMPDIR, else /tmp/.
// What the shim cannot show (Seatbelt itself, Apple's kqueue semantics) is
// proved only by the macOS proof job (scripts/macos-runner.sh).
#pragma once

#if defined(__APPLE__)
#error "apple_shim.h stands in for Apple's headers on other hosts only"
#endif

#include <unistd.h>

#include <cstddef>

#define CORDON_APPLE_SHIM 1

// Apple's confstr name for the per-user temporary directory.
#define _CS_DARWIN_USER_TEMP_DIR 65537

// confstr(3) with _CS_DARWIN_USER_TEMP_DIR answered as described above; every
// other name is the C library's confstr. Returns what confstr(3) returns.
extern "C" std::size_t cordon_apple_shim_confstr(int name, char* buffer, std::size_t length);
#define confstr cordon_apple_shim_confstr

// unix_connect.h — the supervisor's answer to a command's connect(2) on a
// unix socket (docs/linux-backend.md, "Named unix sockets").
//
// A named socket is reached through the filesystem, and Landlock restricts
// that only from ABI 8 (LANDLOCK_ACCESS_FS_RESOLVE_UNIX). On older kernels
// every connect(2) of the command stops in the seccomp filter and comes here,
// with the supervisor's own copy of the caller's socket (pidfd_getfd) and of
// the address. The kernel is never asked to continue the call
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE would re-read the address from the
// command's memory, which another thread can change meanwhile):
//  - the path is resolved once, inside the sandbox's root (openat2 with
//    RESOLVE_IN_ROOT from /proc/PID/root; a relative path with
//    RESOLVE_BENEATH from /proc/PID/cwd), to an O_PATH descriptor (a
//    lookup a host-wide rename or mount made fail with EAGAIN is retried,
//    at most 128 times);
//  - that inode is allowed when it is (or its directory is) an entry of
//    filesystem.unix_sockets resolved the same way, or it lives on the run's
//    private /tmp, which only the sandbox can reach;
//  - the supervisor connects its copy of the socket to exactly that inode
//    (through /proc/self/fd/N), so what was checked is what is connected.
//    A blocking caller's connect waits at most `wait` (SO_SNDTIMEO).
// Abstract and unnamed addresses are connected as asked: the sandbox has a
// network namespace of its own, so abstract names are only its own.
// Refusals are EACCES and recorded as "unix_connect" violations.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>

#include "linux/seccomp_filter.h"
#include "linux/violations.h"

namespace cordon::linux_impl {

// connect(2) of `socket_fd` (the supervisor's copy of the caller's AF_UNIX
// socket) to `address` (the supervisor's copy, `length` bytes) for the
// sandboxed process `pid`. Returns the errno the command sees (0 on success).
//
// `still_waiting` says whether the caller is still blocked in that
// connect(2) (the notification is still valid, SECCOMP_IOCTL_NOTIF_ID_VALID):
// it is asked after /proc/PID/root and /proc/PID/cwd are opened, so that a
// caller that died in between, its pid then reused, is refused (EACCES)
// rather than resolved from another process's directories
// (seccomp_unotify(2), SECCOMP_IOCTL_NOTIF_ID_VALID: check after opening a
// /proc/PID file).
int connect_unix(int socket_fd, pid_t pid, const sockaddr_storage& address, std::size_t length,
                 const seccomp_program& program, violation_log& log, const std::function<bool()>& still_waiting,
                 std::chrono::milliseconds wait = std::chrono::milliseconds(2000));

}  // namespace cordon::linux_impl

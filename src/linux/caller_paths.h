// caller_paths.h — a notified call's path arguments, read and resolved the
// way the calling command sees them (its root, its working directory, its
// directory descriptors), for the supervisor's answers that depend on the
// file a path names: mount_point_changes.h (renames and removals of
// protected paths) and protected_writes.h (opens for writing and truncates).
//
// The supervisor runs outside the sandbox's mount namespace. A path is
// resolved from /proc/PID/root (absolute paths, RESOLVE_IN_ROOT: ".." and
// absolute symlinks stay inside the command's root) or from /proc/PID/cwd or
// /proc/PID/fd/N (relative paths, RESOLVE_BENEATH). Anything opened through
// /proc/PID is trusted only while the caller still waits in the notified
// call (notification_still_valid), so that the pid was not reused
// (seccomp_unotify(2)).
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "posix/unique_fd.h"

namespace cordon::linux_impl {

// The kernel reads a directory descriptor argument as an int (its low 32 bits).
int caller_dirfd(std::uint64_t arg) noexcept;

// A NUL-terminated string at `address` in process `pid`, read a page at a
// time (a string may end just before an unmapped page); nullopt past
// PATH_MAX or on a bad address.
std::optional<std::string> read_caller_path(pid_t pid, std::uint64_t address);

// Reads `size` bytes at `address` in process `pid`; false on a short read.
bool read_caller_memory(pid_t pid, std::uint64_t address, void* out, std::size_t size);

// The directory `path` starts from, as process `pid` sees it: its root for
// an absolute path, else its working directory (dirfd AT_FDCWD) or its
// descriptor `dirfd`. Opened O_PATH; invalid on failure. `path` must not be empty.
unique_fd caller_start_directory(pid_t pid, int dirfd, const std::string& path);

// openat2(2) of `path` from `base` with O_PATH | `flags` and
// `resolve` | RESOLVE_NO_MAGICLINKS, retried while a host-wide rename or
// mount races a ".." step (EAGAIN, openat2(2)); -1 with errno on failure.
int open_beneath(int base, const std::string& path, std::uint64_t flags, std::uint64_t resolve);

// The absolute path of the file open on the supervisor's descriptor `fd`
// as the caller sees it (readlink of /proc/self/fd/N: for a file reached
// through /proc/PID/root the kernel writes the path from the root of the
// sandbox's mount namespace); empty when the file is no longer linked
// (" (deleted)") or the link cannot be read.
std::string descriptor_path(int fd);

// `path` opened O_PATH | `flags` as process `pid` would reach it from
// `dirfd` (AT_FDCWD: its working directory): an absolute path with
// RESOLVE_IN_ROOT from its root; a relative one with RESOLVE_BENEATH from
// its directory, and when that fails with EXDEV (a ".." above it, an
// absolute symlink) again as the absolute path the directory has in the
// caller's view (readlink of /proc/PID/cwd or /proc/PID/fd/N) with
// RESOLVE_IN_ROOT from its root. Invalid, with errno, on failure; a
// directory the kernel marks deleted is not retried (ENOENT).
// `start` is caller_start_directory(pid, dirfd, path) when the caller has
// it (several paths from one start), else -1 to open it here.
unique_fd open_as_caller(pid_t pid, int dirfd, const std::string& path, std::uint64_t flags, int start = -1);

// True while the notification `request` is still pending on `listener_fd`
// (SECCOMP_IOCTL_NOTIF_ID_VALID): what was read through /proc/PID belongs
// to the caller.
bool notification_still_valid(int listener_fd, const seccomp_notif& request);

}  // namespace cordon::linux_impl

// mount_by_fd.h — the plan's binds and masks mounted by descriptor, not by path.
//
// A bind source or target looked up by name twice (once when the plan is
// built, once when mount(2) runs) can be redirected in between by a host
// process that swaps a directory on the way for a symlink or for another
// directory (docs/doors.md, "Binds are mounted by descriptor"). So PID 1
// opens every source and target once, following no symlink in any component
// (openat2 RESOLVE_NO_SYMLINKS), checks the source's device and inode against
// those the plan recorded, and mounts what it opened: open_tree(2)
// OPEN_TREE_CLONE|AT_RECURSIVE, mount_setattr(2) on the detached copy, then
// move_mount(2) onto the target descriptor.
//
// Why in PID 1 and not in the supervisor: open_tree(OPEN_TREE_CLONE) and a
// bind mount(2) copy only mounts of the caller's own mount namespace
// (EINVAL otherwise), and PID 1's namespace is a copy made at clone time; a
// descriptor the supervisor opened names a mount of the host's namespace.
// PID 1 opens the same objects through /oldroot, before pivot_root.
//
// These calls exist since Linux 5.2 (open_tree, move_mount) and 5.6
// (openat2); the launch already needs mount_setattr (5.12). Where one is
// missing (ENOSYS) the mount fails and so does the launch: there is no
// by-path fallback.
//
// Async-signal-safe: system calls only, no allocation.
#pragma once

#include <cstdint>

namespace cordon::linux_impl {

// What the plan recorded for a source: lstat(2)'s st_dev and st_ino.
struct file_identity {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool known = false;  // false: nothing was recorded (never so for a bind)
};

enum class mount_by_fd_status {
  ok,
  failed,          // a system call failed: errno says why (ELOOP: a symlink on the way)
  source_changed,  // the source is not the object the plan recorded
  target_changed,  // the target is a different object of the source's filesystem
};

// Opens absolute `path` as an O_PATH|O_CLOEXEC descriptor without following
// a symlink in any component, the last included (ELOOP). Returns the
// descriptor, or -1 with errno.
int open_no_symlinks(const char* path) noexcept;

// Binds `source` (a path under /oldroot) onto `target` (a path under
// /newroot, which must exist), recursively, with `attributes`
// (MOUNT_ATTR_*) set on every mount of the copy before it is attached.
// The source must be `expected`; a target on the source's filesystem must
// be `expected` too (the same host object seen through an earlier bind),
// while a target elsewhere is a mount point cordon created in its own
// tmpfs. Returns ok, or why not (errno is set for failed).
mount_by_fd_status bind_by_fd(const char* source, const char* target, const file_identity& expected,
                              std::uint64_t attributes) noexcept;

// A recursive copy of what `source_fd` names (open_tree OPEN_TREE_CLONE),
// with `attributes` set on it while detached, attached at `target_fd`
// (move_mount). false with errno on failure.
bool attach_copy(int source_fd, int target_fd, std::uint64_t attributes) noexcept;

// Opens `target` with open_no_symlinks and writes into `out` (at least 40
// bytes) the path "/newroot/proc/self/fd/N" that reaches it: mount(2) on
// that magic link mounts on exactly the object opened (the sandbox's /proc
// is mounted before any plan mount). Returns the descriptor (the caller
// closes it after the mount), or -1 with errno.
int open_target_link(const char* target, char* out) noexcept;

}  // namespace cordon::linux_impl

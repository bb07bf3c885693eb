// protected_writes.h — the supervisor's answer to a command's open for
// writing, or truncate(2), when the plan has read-only paths inside a
// writable directory (docs/seccomp.md, "Writes to protected paths").
//
// A protected path inside a writable root (.git/config, .gitmodules and
// .git/hooks under filesystem.protect_vcs_metadata, a
// filesystem.protected_read_only path inside the workspace, ...) is a
// read-only bind mount of the sandbox: opening it for writing, creating a
// file in it or truncating it already fails with EROFS in the kernel. With
// seccomp_options::notify_protected_writes the filter also sends these calls
// here, so that the attempt is a "protected_write" violation in the report:
//  - open(2) and openat(2) whose flags (checked in the filter) carry O_WRONLY,
//    O_RDWR, O_CREAT or O_TRUNC; every creat(2), truncate(2) and openat2(2)
//    (its flags are behind a pointer);
//  - the supervisor reads the path and resolves it as the caller would
//    (caller_paths.h: its root, its working directory or directory
//    descriptor, symlinks followed inside its root unless O_NOFOLLOW or
//    O_CREAT|O_EXCL), the file itself or, for a file the call would
//    create, its directory;
//  - when the call writes by the kernel's own rules (write access, O_TRUNC,
//    O_CREAT of a missing name, O_TMPFILE in a directory, truncate of a
//    regular file), the file or directory is on a read-only mount
//    (fstatfs ST_RDONLY) and its path in the caller's view is one of
//    `protected_paths` or below one, the call fails with EROFS and the
//    violation names that path;
//  - every other call continues (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
//
// Why continuing cannot open a door (seccomp_unotify(2) warns that a
// continued call is re-read by the kernel, after the supervisor looked):
// this answer never grants anything. The read-only mount refuses the write
// by itself, whatever the supervisor saw; a path swapped by another thread
// after the look (a symlink retargeted, a directory renamed) meets the same
// mount in the kernel and gets the kernel's own answer. The race can only
// change which errno a refused call gets, or lose one violation record;
// it cannot make a protected file writable. The same holds for the EROFS
// answer: it refuses a call the mount would refuse (or that the file's mode
// refuses first with EACCES, for a file without a write bit).
#pragma once

#include <linux/seccomp.h>

#include <string>
#include <vector>

#include "linux/seccomp_filter.h"
#include "linux/violations.h"

namespace cordon::linux_impl {

// True when `request` (a pending notification under `program`) is here for
// the write check: open, openat, creat, openat2 or truncate, with
// program.protected_writes_checked, and not also matched by one of the
// table's rules for the same call (docs/seccomp.md, "Root callers: no setuid
// or setgid bits": a set-id mode with O_CREAT or O_TMPFILE, every openat2),
// which keep their own answer.
bool is_protected_write_check(const seccomp_program& program, const seccomp_notif& request) noexcept;

// Answers the notification `request` (already received from `listener_fd`):
// fills `response` with EROFS (and records a "protected_write" violation,
// the file's path in the caller's view, in `log`) or with
// SECCOMP_USER_NOTIF_FLAG_CONTINUE. program.protected_write_paths are
// absolute paths as the sandbox sees them. With program.protected_by_landlock
// (linux-os-sandbox: no mounts; Landlock's read-only rules refuse these
// writes with EACCES by themselves) the read-only mount is not asked: the
// path alone decides, and the EROFS answer still only replaces the errno
// of a call Landlock refuses. A call
// whose path cannot be read or resolved, or whose openat2 asks for its own
// resolve flags, continues: the kernel gives it its own answer.
void answer_protected_write(int listener_fd, const seccomp_notif& request, seccomp_notif_resp& response,
                            const seccomp_program& program, violation_log& log);

}  // namespace cordon::linux_impl

// mount_point_changes.h — the supervisor's answer to a command's rename(2),
// unlink(2) or rmdir(2) when the plan has read-only paths inside a writable
// directory (docs/seccomp.md, "Renames and removals of protected paths").
//
// A protected path inside a writable root (.git/config and .gitmodules under
// filesystem.protect_vcs_metadata, a filesystem.protected_read_only or
// denied path inside the workspace) is a mount point of the sandbox: a bind
// read-only, or a mask. Writing into it fails with EROFS, but replacing or
// removing it does not reach the mount's read-only flag: the kernel refuses
// a rename over, or an unlink of, a mount point with EBUSY ("Device or
// resource busy"), which reads as a passing condition, so a model retries,
// and the report said nothing. With seccomp_options::
// notify_mount_point_changes, these calls stop in the seccomp filter and
// come here:
//  - every path the call would rename, replace or remove is resolved inside
//    the sandbox (its directory: openat2 with RESOLVE_IN_ROOT from
//    /proc/PID/root, or RESOLVE_BENEATH from /proc/PID/cwd or /proc/PID/fd/N);
//  - when its last component is a mount point (statx STATX_MNT_ID differs
//    from its directory's), the call fails with EROFS and a
//    "protected_write" violation names that mount point (its path in
//    /proc/PID/mountinfo);
//  - otherwise the kernel continues the call (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
// Continuing is safe here, unlike for connect(2) (connect_redirect.h): this
// answer only chooses the errno of a call the mount table refuses anyway. If
// another thread changes the path after the look, the kernel decides as it
// would have (EBUSY for a mount point); nothing becomes writable.
#pragma once

#include <linux/seccomp.h>

#include <string>
#include <vector>

#include "linux/seccomp_filter.h"
#include "linux/violations.h"

namespace cordon::linux_impl {

// True for the calls answered here: rename, renameat, renameat2, unlink,
// unlinkat, rmdir (those the architecture has).
bool is_mount_point_change(int syscall_nr) noexcept;

// Answers the notification `request` (already received from `listener_fd`):
// fills `response` with EROFS (and records the violation in `log`) or with
// SECCOMP_USER_NOTIF_FLAG_CONTINUE. Only a path whose last component is one
// of program.mount_point_names is looked up; a path that
// cannot be read or resolved (bad address, gone, outside the caller's
// directory) continues: the kernel gives the call its own answer.
// With program.protected_by_landlock (linux-os-sandbox, no mounts) the
// path in the caller's view (its directory's path and the last component)
// must be one of program.protected_change_paths instead, and the violation
// names it; Landlock refuses such a call by itself (EACCES), so here too
// the answer only chooses the errno.
void answer_mount_point_change(int listener_fd, const seccomp_notif& request, seccomp_notif_resp& response,
                               const seccomp_program& program, violation_log& log);

}  // namespace cordon::linux_impl

// fallback_calls.h — blocked calls that are libc's ordinary first try, not an
// attempt to leave the policy.
//
// glibc (2.34+) calls clone3() for every thread and every fork, and falls
// back to clone() when it fails with ENOSYS; newer programs try openat2() and
// fchmodat2() the same way. The filter refuses these calls because it cannot
// see their flags (docs/seccomp.md), and the refusal still happens whatever
// this file says: it only decides whether the refusal is listed as a
// violation. A call that asks for more than the fallback would be given
// (a namespace flag in clone3's struct, a set-id bit in a mode) stays a
// violation.
#pragma once

#include <linux/seccomp.h>

namespace cordon::linux_impl {

// True when `request` (a pending seccomp notification) is clone3() without
// any CLONE_NEW* flag, openat2() whose open_how asks for no set-id mode bit,
// or fchmodat2() without a set-id bit: the libc fallback every threaded
// program makes. The struct arguments are read from the caller's memory with
// process_vm_readv(2), and the read is only trusted when the notification is
// still valid afterwards (SECCOMP_IOCTL_NOTIF_ID_VALID on `listener_fd`: the
// caller is still blocked in the call, so its pid was not reused). Anything
// that cannot be read or checked returns false: listed as a violation (fail
// closed).
bool is_expected_fallback(int listener_fd, const seccomp_notif& request);

}  // namespace cordon::linux_impl

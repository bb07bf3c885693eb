// exiting_sandboxes.h — a sandbox's PID 1 reaped after its report
// (docs/linux-backend.md): once PID 1 has sent its last message, nothing of
// the command is left and the report needs nothing more from it, but its own
// exit (the teardown of its address space and of the mount namespace) is
// still in the kernel. A thread reaps it meanwhile; a process that is about
// to end calls cordon::await_exiting_sandboxes() (cordon/run.h) first, so
// that no PID 1 is left for the host's init, which may never reap it.
#pragma once

#include <sys/types.h>

#include "posix/unique_fd.h"

struct rusage;

namespace cordon::posix {

// Waits for the child `pid` to end and reaps it (wait4(2), retried on
// EINTR); its wait status and resource usage go where `status` and `usage`
// point, when they are not null.
void reap(pid_t pid, int* status = nullptr, struct rusage* usage = nullptr) noexcept;

// Reaps `pid` (a child of this process; `pidfd` its pidfd, held until then
// so that the pid cannot be reused) on a thread of its own. Without a thread
// to be had, reaps it here, blocking. With a pidfd the wait names exactly
// that process (waitid(2) P_PIDFD): one that another wait of this process
// took first is not waited for again, and no other child is reaped in its
// place. Never fails.
void reap_when_exited(pid_t pid, unique_fd pidfd) noexcept;

}  // namespace cordon::posix

// os_sandbox_launch.h — the supervisor of one os_sandbox run (no
// namespaces): the per-run temporary directory, the clone of the command's
// process (os_sandbox_child.h), the seccomp listener, the deadline,
// forwarded signals, the cgroup and the tree's cleanup (subreaper_cleanup.h).
#pragma once

#include "cordon/launch.h"
#include "cordon/plan.h"
#include "cordon/result.h"
#include "linux/os_sandbox_plan.h"

namespace cordon::linux_impl {

// Runs request.argv under the plan; blocks until the whole tree is gone.
// Call from a single-threaded process. Errors: usage_error (no command, a
// directory on stdio), launch_failed (a prepared sandbox: this backend has
// none; a set-up step, with errno), command_not_found, command_not_executable.
result<run_outcome> supervise_os_sandbox(const sandbox_plan& plan, const os_sandbox_payload& payload,
                                         const launch_request& request);

}  // namespace cordon::linux_impl

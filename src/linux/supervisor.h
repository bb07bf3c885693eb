// supervisor.h — the parent side of a launch: clone3 into new namespaces,
// wait for the command, enforce the wall-clock deadline, forward signals,
// and collect the outcome.
#pragma once

#include "cordon/launch.h"
#include "cordon/plan.h"
#include "cordon/result.h"
#include "core/environment.h"
#include "linux/linux_plan.h"

namespace cordon::linux_impl {

// Runs request.argv under the plan. Blocks until the whole tree is gone.
// SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked in the calling thread for the
// duration and forwarded to the sandbox; if the tree is still alive 2 s later it
// is killed. Errors: command_not_found, command_not_executable, launch_failed.
// Call from a single-threaded process (clone3 copies only the calling thread).
// `ran`, when given, receives the command that ran: the request's, or a
// prepared sandbox's once it came (request.next_command), so that what is
// diagnosed after the run names it.
result<run_outcome> supervise_launch(const sandbox_plan& plan, const linux_plan_payload& payload,
                                     const launch_request& request, launch_request* ran = nullptr);

// The environment builder moved to core (src/core/environment.h); the old
// name stays for callers of the Linux backend.
using core::build_environment;

}  // namespace cordon::linux_impl

// supervisor.h — the parent side of a launch: clone3 into new namespaces,
// wait for the command, enforce the wall-clock deadline, forward signals,
// and collect the outcome.
//
// A launch has two halves. start_sandbox() needs only what the policy alone
// decides (sandbox_shape): it creates the namespaces and PID 1, which builds
// the policy-independent part of its root and then waits. supervise_launch()
// takes the compiled plan, sends PID 1 its launch image (launch_image.h) and
// supervises the run. Between the two the caller compiles the plan: the
// namespaces (clone3 is the single most expensive step of a launch) and PID
// 1's first steps cost no wall time of their own. Nothing runs inside until
// the image is sent, and only a compiled plan makes one.
#pragma once

#include <memory>

#include "cordon/launch.h"
#include "cordon/plan.h"
#include "cordon/result.h"
#include "linux/linux_plan.h"

namespace cordon::linux_impl {

// What start_sandbox needs: decided by the policy alone (and equal to what
// compile puts in the plan's payload for that policy).
struct sandbox_shape {
  bool new_network_namespace = true;  // network not unrestricted
  bool full_root = false;             // read = full: the host root is the new root's base

  bool operator==(const sandbox_shape&) const = default;
};

sandbox_shape shape_of(const linux_plan_payload& payload);

// PID 1 of new namespaces, building its root's base and waiting for its
// launch image. Destroying it unused ends PID 1 (and restores the signal mask).
class started_sandbox;
struct started_sandbox_deleter {
  void operator()(started_sandbox* s) const noexcept;
};
using started_sandbox_ptr = std::unique_ptr<started_sandbox, started_sandbox_deleter>;

// Blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT in the calling thread (until the
// launch ends or the started sandbox is destroyed; a signal that arrives
// before the command starts is delivered then) and clones PID 1.
// Call from a single-threaded process (clone3 copies only the calling thread).
// Errors: launch_failed.
result<started_sandbox_ptr> start_sandbox(const sandbox_shape& shape);

// Runs request.argv under the plan. Blocks until the whole tree is gone.
// `started` (may be null) is a sandbox start_sandbox made for this plan's
// shape; one of another shape is discarded and a new one started.
// SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to the sandbox; if the
// tree is still alive 2 s later it is killed. Errors: command_not_found,
// command_not_executable, launch_failed.
result<run_outcome> supervise_launch(const sandbox_plan& plan, const linux_plan_payload& payload,
                                     const launch_request& request, started_sandbox_ptr started);

// The environment the command gets: inherited (all, or the allowlist), then
// the explicit values. Returns "NAME=VALUE" entries, first occurrence wins for
// inherited names, explicit values replace.
std::vector<std::string> build_environment(const sandbox_policy& policy,
                                           const std::vector<std::string>& host_environment);

}  // namespace cordon::linux_impl

// filtered_run.h — a macOS run from policy to outcome, with the network
// broker started first for a `filtered` policy (docs/macos-backend.md, "The
// broker"). The Seatbelt profile names the broker's port, so the broker must
// listen before the plan is compiled.
#pragma once

#include "cordon/launch.h"
#include "cordon/policy.h"
#include "cordon/result.h"
#include "macos/host_facts.h"
#include "macos/macos_plan.h"

namespace cordon::macos_impl {

// For a policy whose network mode is `filtered`: binds a TCP listener on
// 127.0.0.1 (port chosen by the kernel), starts the in-process network broker
// (src/broker) on it with the policy's network section, compiles `policy`
// with `facts` and that port (compile_macos_plan), launches the plan
// (launch_macos_plan), stops the broker and puts its evidence in the
// outcome's `network`. For any other mode: compile and launch only (no
// broker; `network` stays empty). `broker_routes` is the broker's test seam
// (broker_options::test_routes), left empty in production.
// Errors: the compile's refusal (its error), launch_failed when the listener
// or the broker cannot start, and launch_macos_plan's errors.
result<run_outcome> run_macos_policy(const sandbox_policy& policy, macos_host_facts facts,
                                     const launch_request& request, const std::vector<std::string>& broker_resolve_to = {},
                                     int broker_dial_port = 0);

}  // namespace cordon::macos_impl

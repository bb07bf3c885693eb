// namespaces.h — the namespaces a launch creates, in one place, so that the
// probe tests exactly the set the launch uses (a probe that tried fewer would
// call a host ready on which every launch then fails).
#pragma once

#include <sched.h>

#include <cstdint>

namespace cordon::linux_impl {

// Always created; CLONE_NEWNET is added when the policy cuts the network.
inline constexpr std::uint64_t launch_namespaces =
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
inline constexpr std::uint64_t launch_namespaces_with_network = launch_namespaces | CLONE_NEWNET;

// Created by the sandbox's PID 1 itself (unshare), only after the supervisor
// has moved it into the run's cgroup: a cgroup namespace made at clone time
// would be rooted at the caller's cgroup, so the sandbox would see the host's
// cgroup tree above its own and other runs' statistics.
inline constexpr std::uint64_t namespaces_after_cgroup_join = CLONE_NEWCGROUP;

}  // namespace cordon::linux_impl

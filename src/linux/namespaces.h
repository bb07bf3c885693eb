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

}  // namespace cordon::linux_impl

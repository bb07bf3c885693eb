// host_facts.h — the Linux facts of the running host (cordon/host_facts.h).
#pragma once

#include <string>

#include "cordon/host_facts.h"

namespace cordon::linux_impl {

// The facts of this host for the calling user. The kernel's answers (user
// namespace sysctls, the landlock_create_ruleset version query,
// prctl(PR_GET_SECCOMP)) are read once per process; the cgroup site (for
// `cgroup_parent`, see cgroups.h) and the home directory at every call.
// `deep`: also create the launch's namespaces in a short-lived child
// (try_namespaces) and count a failure as the backend being unavailable.
host_facts read_linux_host_facts(const std::string& cgroup_parent, bool deep);

// Creates (in a short-lived child) exactly the namespaces a launch creates
// (namespaces.h) and reports whether that worked, with the errno's text when
// not.
bool try_namespaces(std::string& failure);

}  // namespace cordon::linux_impl

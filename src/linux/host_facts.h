// host_facts.h — the Linux facts of the running host (cordon/host_facts.h).
#pragma once

#include <string>
#include <string_view>

#include "cordon/result.h"

#include "cordon/linux_host_facts.h"

namespace cordon::linux_impl {

// The facts of this host for the calling user. The kernel's answers (user
// namespace sysctls, the landlock_create_ruleset version query,
// prctl(PR_GET_SECCOMP); when started nested in another sandbox or under a
// seccomp filter, where no sysctl tells, one try_namespaces) are read once
// per process; the cgroup site (for
// `cgroup_parent`, see cgroups.h) and the home directory at every call.
// `deep`: also create the launch's namespaces in a short-lived child
// (try_namespaces) and count a failure as the backend being unavailable.
host_facts read_linux_host_facts(const std::string& cgroup_parent, bool deep);

// The refusal of a Linux build() whose facts carry no linux_host_facts
// record: backend_unavailable with a backend blocker.
error no_linux_facts();

// Both Linux backends' recorded facts (docs/host-facts.md): a record of
// platform "linux" as linux_driver_facts() of its fields, and back.
// Errors as sandbox_backend::load_host_facts / record_host_facts.
result<host_facts> load_linux_host_facts(std::string_view record);
result<std::string> record_linux_host_facts(const host_facts& facts);

// Creates (in a short-lived child) exactly the namespaces a launch creates
// (namespaces.h) and reports whether that worked; when not, `failure` names
// the facility and the likely cause (ENOSPC: a nested user namespace that
// allows no more; EPERM: a seccomp filter or security module refusing
// unshare). Used by deep facts (probe) and, when nested, by the kernel facts
// read once per process.
bool try_namespaces(std::string& failure);

}  // namespace cordon::linux_impl

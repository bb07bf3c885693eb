// host_facts.h — what this kernel and this user allow, read once per process.
#pragma once

#include <string>
#include <vector>

namespace cordon::linux_impl {

struct host_facts {
  bool user_namespaces = false;      // an unprivileged user namespace can be created
  std::string user_namespace_blocker;  // why not, when false
  int landlock_abi = 0;              // 0: Landlock unavailable
  std::string landlock_blocker;
  bool seccomp = false;              // seccomp filters can be installed
  // Started inside another sandbox or container: a user namespace other than
  // the initial one (uid_map is not the identity over all ids), and whether a
  // seccomp filter already confines cordon itself (/proc/self/status Seccomp: 2).
  bool nested_user_namespace = false;
  bool seccomp_filtered = false;
  unsigned uid = 0, gid = 0;
};

// Cached after the first call. Reads sysctls and asks the kernel directly
// (landlock_create_ruleset version query, prctl(PR_GET_SECCOMP)); creates
// namespaces (try_namespaces) only when nested or already under a seccomp
// filter, where a sysctl cannot tell whether they are allowed.
const host_facts& current_host_facts();

// Creates (in a short-lived child) the namespaces a launch needs and reports
// whether that worked; when not, `failure` names the facility and the likely
// cause (ENOSPC: a nested user namespace that allows no more; EPERM: a seccomp
// filter or security module refusing unshare). Used by probe() and, when
// nested, by current_host_facts().
bool try_namespaces(std::string& failure);

}  // namespace cordon::linux_impl

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
  unsigned uid = 0, gid = 0;
};

// Cached after the first call. Reads sysctls and asks the kernel directly
// (landlock_create_ruleset version query, prctl(PR_GET_SECCOMP)); does not
// create namespaces.
const host_facts& current_host_facts();

// Creates (in a short-lived child) the namespaces a launch needs and reports
// whether that worked, with the errno's text when not. Used by probe().
bool try_namespaces(std::string& failure);

}  // namespace cordon::linux_impl

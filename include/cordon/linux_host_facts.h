// cordon/linux_host_facts.h — the facts only the Linux backends read
// (linux-namespaces and linux-os-sandbox), carried in
// host_facts::backend_facts (cordon/host_facts.h).
#pragma once

#include <string>

#include "cordon/host_facts.h"

namespace cordon {

// Where this user may create a cgroup for a run's tree-wide limits. Each
// parent is a directory; an empty one means that controller is not usable.
struct cgroup_facts {
  bool v2 = false;            // the parents are cgroup v2 directories (else v1 hierarchies)
  std::string memory_parent;  // memory controller
  std::string pids_parent;    // pids controller
  std::string cpu_parent;     // cpuacct (v1) or cpu.stat (v2)
  std::string blocker;        // why a controller is missing; empty when all are usable
  // cgroup v2 discovery only: the caller's own delegated cgroup, which still
  // holds the caller. The "no internal processes" rule means the launch must
  // first move the caller into a leaf below it (src/linux/cgroups.h,
  // run_cgroup::create, does; remove() moves it back when the leaf is the only
  // child left). Empty otherwise.
  std::string enter_leaf_of;
  // True when at least one controller is usable.
  bool any() const { return !memory_parent.empty() || !pids_parent.empty() || !cpu_parent.empty(); }
};

// What the Linux backends need to know about the kernel and the cgroup site.
struct linux_host_facts {
  bool user_namespaces = false;        // an unprivileged user namespace can be created
  std::string user_namespace_blocker;  // why not, when false
  int landlock_abi = 0;                // 0: Landlock unavailable
  std::string landlock_blocker;        // why, when 0
  bool seccomp = false;                // seccomp filters can be installed
  // Started inside another sandbox or container: a user namespace other than
  // the initial one (uid_map is not the identity over all ids), and whether a
  // seccomp filter already confines cordon itself (/proc/self/status Seccomp: 2).
  bool nested_user_namespace = false;
  bool seccomp_filtered = false;
  cgroup_facts cgroups;                // empty parents: no cgroup, limits fall back to rlimits
};

// The Linux record of `facts`, or nullptr when they carry none.
inline const linux_host_facts* linux_facts_of(const host_facts& facts) noexcept {
  return backend_facts_as<linux_host_facts>(facts);
}

// `record` as the driver's host facts of the linux-namespaces backend:
// platform "linux", `uid`, `gid` and `home` as given, available when user
// namespaces are (backend_blocker: why not), one line per fact for probe
// output, the record in backend_facts. The running host's are
// read_host_facts(); recorded ones come from a file (load_host_facts).
host_facts linux_driver_facts(linux_host_facts record, unsigned uid, unsigned gid, std::string home);

}  // namespace cordon

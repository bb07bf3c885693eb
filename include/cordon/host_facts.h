// cordon/host_facts.h — what a host offers, as plain data.
//
// A plan is a pure function of a policy and these facts (docs/architecture.md,
// "Host facts"): the compile driver never reads the kernel, the filesystem's
// cgroup layout or the environment itself. A backend reads the facts of the
// running host with `sandbox_backend::read_host_facts()`; tests build them by
// hand to compile golden plans for hosts they do not run on
// (tests/unit/linux/golden_plan_test.cpp).
#pragma once

#include <any>
#include <string>
#include <vector>

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

struct host_facts {
  std::string platform;       // "linux", "macos", "windows"
  unsigned uid = 0, gid = 0;  // the calling user
  std::string home;           // absolute home directory of the calling user; empty when unknown

  // Gate 2: can the backend run here at all, and if not, why.
  bool backend_available = false;
  std::string backend_blocker;
  // A backend of weaker isolation chosen because a stronger one cannot run
  // here (Linux: linux-os-sandbox when linux-namespaces cannot): why not, and
  // what would change that. Gate 3 names it when a policy needs the stronger
  // isolation. Empty otherwise.
  std::string stronger_backend_blocker;

  // The facts only one backend reads, as that backend's own type: the macOS
  // backend's `macos_impl::macos_host_facts` (src/macos/host_facts.h), the
  // Windows backend's `windows::windows_backend_facts`
  // (cordon/windows/compile.h). Empty for Linux, whose facts are the fields
  // below. A backend whose record is missing or of another type refuses at
  // gate 2 (backend_unavailable).
  std::any backend_facts;

  // Linux facts (read by the Linux backend; zero elsewhere).
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

  // The facts above as one line each ("landlock abi 7"), for probe output.
  std::vector<std::string> lines;
};

}  // namespace cordon

// linux_plan.h — the Linux backend's private compiled state, carried by a
// sandbox_plan. Built once at compile time; read-only afterwards.
#pragma once

#include <sys/resource.h>

#include <optional>
#include <string>
#include <vector>

#include "cordon/plan.h"
#include "core/broker_endpoint.h"
#include "linux/cgroups.h"
#include "linux/landlock.h"
#include "linux/mount_table.h"
#include "linux/paths.h"
#include "posix/home_watch.h"
#include "posix/vcs_scan.h"
#include "linux/seccomp_filter.h"

namespace cordon::linux_impl {

inline constexpr std::uint32_t linux_plan_format_version = 1;


// The name of an RLIMIT_* resource, for reports and errors.
inline const char* rlimit_name(int resource) noexcept {
  switch (resource) {
    case RLIMIT_AS: return "RLIMIT_AS";
    case RLIMIT_DATA: return "RLIMIT_DATA";
    case RLIMIT_CPU: return "RLIMIT_CPU";
    case RLIMIT_NPROC: return "RLIMIT_NPROC";
    case RLIMIT_CORE: return "RLIMIT_CORE";
    default: return "rlimit";
  }
}

struct rlimit_setting {
  int resource = 0;  // RLIMIT_*
  rlim_t value = 0;
};

// The describe() line that digests the binds' source identities (host-specific).
inline constexpr const char* mount_identities_prefix = "bind sources sha256:";

struct linux_plan_payload final : plan_payload {
  // The mount table, Landlock rules, seccomp variant, namespaces and limits,
  // one line each (plan_describe.cpp).
  std::string describe() const override;

  mount_table mounts;
  landlock_ruleset_plan landlock;
  seccomp_program seccomp;
  bool new_network_namespace = true;  // network denied: no interface but loopback
  bool loopback_up = false;           // allow_local_binding, or the broker's listener
  // Filtered network: PID 1 opens the broker's listeners inside the sandbox
  // (TCP on 127.0.0.1:broker_port, and a unix socket at broker_socket_path)
  // and hands them to the supervisor, whose broker serves them.
  bool network_broker = false;
  std::vector<rlimit_setting> rlimits;
  // The mount options of the sandbox's own tmpfs mounts (/dev/shm and each
  // private /tmp): with a memory limit that only an rlimit holds (partial),
  // they are sized to it ("size=N"), since tmpfs pages count against no
  // process's RLIMIT_DATA; with a cgroup, the tree is charged for them.
  std::string tmpfs_options = "mode=1777";
  // Tree-wide limits: where the run's cgroup goes and which limits it holds
  // (a limit absent here, but set in the policy, falls back to an rlimit).
  cgroup_site cgroups;
  cgroup_limits tree_limits;
  // After the run (protect_vcs_metadata): paths that must still be absent,
  // and the repositories known at compile time under these writable roots.
  std::vector<std::string> watch_absent;
  // .gitmodules files absent at compile time: reported only if the command
  // creates one (docs/linux-backend.md, "Compile (in the calling process)").
  std::vector<std::string> watch_gitmodules;
  struct repository_scan {
    std::string root;
    vcs::vcs_scan before;
  };
  std::vector<repository_scan> repository_scans;  // one per scanned writable root
  std::string home;  // the caller's, for ~/ in git includes and the start-up paths
  // Where the scan's listings are kept between runs (posix/listing_store.h);
  // "" when they are not (no home, or the directory is not this user's own).
  std::string listing_store;
  // A writable home (a writable root holds it): watched whole after the run
  // (posix/home_watch.h), outside the writable roots inside it.
  std::optional<vcs::home_watch> home_watch;
};

}  // namespace cordon::linux_impl

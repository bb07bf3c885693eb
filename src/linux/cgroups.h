// cgroups.h — tree-wide resource limits: a cgroup per run.
//
// Kernel documents: Documentation/admin-guide/cgroup-v2.rst and
// cgroup-v1/{memory,pids,cpuacct}.rst. A cgroup limit covers every process
// of the run, which is what makes `memory`, `process_count` and `cpu`
// `enforced`; a per-process rlimit is only `partial`.
//
// Where runs' cgroups live:
//  - cgroup v2 under a parent given explicitly (--cgroup-parent), which must
//    be a delegated, writable cgroup with the controllers enabled in its
//    cgroup.subtree_control;
//  - cgroup v2 without one, in the subtree delegated to the caller the way
//    systemd delegates (Documentation/admin-guide/cgroup-v2.rst, "Delegation";
//    docs/kernels.md): find_delegated_v2_site below;
//  - cgroup v1: beside cordon's own cgroup in each controller's hierarchy
//    (memory, pids, cpuacct), when that directory is writable (root).
// Each run gets "cordon-<supervisor pid>-<n>" in every hierarchy it uses;
// it is removed after the run, by a janitor process if cordon itself dies,
// and stale ones of dead supervisors are swept when the next run starts.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cordon/linux_host_facts.h"
#include "cordon/result.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {

// The cgroup part of the Linux host facts (cordon/linux_host_facts.h).
using cgroup_site = cordon::cgroup_facts;

// Finds where this process may create cgroups. `explicit_parent` (a cgroup
// v2 directory) wins when given. Never fails; missing controllers are empty
// with the reason in `blocker`.
cgroup_site find_cgroup_site(const std::string& explicit_parent);

// cgroup v2 discovery, without side effects. `mount` is the cgroup2 mount
// point, `own` the caller's cgroup path ("0::" line of /proc/self/cgroup),
// `uid`/`pid` the caller. A run's cgroup may go:
//  1. below `own` when it is the root of the hierarchy ("/") with memory,
//     pids and cpu in its cgroup.subtree_control (the root is exempt from the
//     no-internal-processes rule) and writable;
//  2. beside `own` when the parent is delegated to a non-root `uid` (owned by
//     it, cgroup.procs writable) with the controllers in its subtree_control:
//     systemd's user@UID.service with programs in app.slice/*.scope;
//  3. below `own` when `own` is delegated to a non-root `uid` (owned, with
//     cgroup.procs and cgroup.subtree_control writable), the controllers are
//     in its cgroup.controllers, and `pid` is its only process (a scope made
//     for cordon, e.g. systemd-run --user --scope -p Delegate=yes): the site
//     sets enter_leaf_of.
// Ownership proves nothing for root, so root without case 1 passes
// --cgroup-parent. When nothing fits, the site is empty and `blocker` says why.
cgroup_site find_delegated_v2_site(const std::string& mount, const std::string& own, uid_t uid, pid_t pid);

struct cgroup_limits {
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> max_processes;
  std::optional<std::uint64_t> cpu_seconds;  // enforced by the supervisor from the usage counter
};

struct cgroup_stats {
  std::optional<std::uint64_t> peak_memory_bytes;
  std::optional<std::uint64_t> cpu_usage_ns;
  std::uint64_t oom_kills = 0;      // processes the memory controller killed
  std::uint64_t forks_refused = 0;  // forks refused at pids.max
};

// The cgroups of one run. Movable, not copyable; remove() is idempotent.
class run_cgroup {
 public:
  run_cgroup() = default;
  run_cgroup(run_cgroup&&) noexcept = default;
  run_cgroup& operator=(run_cgroup&&) noexcept = default;
  run_cgroup(const run_cgroup&) = delete;
  run_cgroup& operator=(const run_cgroup&) = delete;
  ~run_cgroup();

  // Creates the directories and writes the limits. Errors: launch_failed with
  // errno and the file that failed. Sweeps stale cordon cgroups first. With
  // site.enter_leaf_of, first moves this process into
  // <enter_leaf_of>/cordon-<pid>-leaf and enables the controllers in
  // enter_leaf_of's cgroup.subtree_control (EBUSY when another process joined it).
  static result<run_cgroup> create(const cgroup_site& site, const cgroup_limits& limits);

  // Moves `pid` (and so its future children) into every directory.
  result<void> attach(pid_t pid) const;
  // Current CPU usage of the whole tree in nanoseconds, when a CPU controller is used.
  std::optional<std::uint64_t> cpu_usage_ns() const;
  cgroup_stats stats() const;
  // Forks a process that removes the directories once every holder of
  // `trigger_fd` (the supervisor, and PID 1 which inherits it) is gone, even
  // if cordon is SIGKILLed. Close trigger_fd and reap `pid` after remove().
  struct janitor {
    unique_fd trigger_fd;
    pid_t pid = -1;
  };
  result<janitor> spawn_janitor() const;
  // Removes the directories (retrying while the last tasks finish exiting).
  void remove();

 private:
  bool v2_ = false;
  std::string memory_dir_, pids_dir_, cpu_dir_;
  std::vector<std::string> dirs_;
  std::string leaf_, leaf_parent_, leaf_enabled_;  // set when create() entered a leaf

  result<void> enter_leaf(const cgroup_site& site);
  void leave_leaf();
};

}  // namespace cordon::linux_impl

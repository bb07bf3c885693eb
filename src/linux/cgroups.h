// cgroups.h — tree-wide resource limits: a cgroup per run.
//
// Kernel documents: Documentation/admin-guide/cgroup-v2.rst and
// cgroup-v1/{memory,pids,cpuacct}.rst. A cgroup limit covers every process
// of the run, which is what makes `memory`, `process_count` and `cpu`
// `enforced`; a per-process rlimit is only `partial`.
//
// Where runs' cgroups live:
//  - cgroup v2: only under a parent given explicitly (--cgroup-parent), which
//    must be a delegated, writable cgroup with the controllers enabled in its
//    cgroup.subtree_control (the "no internal processes" rule forbids using
//    cordon's own cgroup);
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

#include "cordon/host_facts.h"
#include "cordon/result.h"

namespace cordon::linux_impl {

// The cgroup part of the host facts (cordon/host_facts.h).
using cgroup_site = cordon::cgroup_facts;

// Finds where this process may create cgroups. `explicit_parent` (a cgroup
// v2 directory) wins when given. Never fails; missing controllers are empty
// with the reason in `blocker`.
cgroup_site find_cgroup_site(const std::string& explicit_parent);

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
  // errno and the file that failed. Sweeps stale cordon cgroups first.
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
    int trigger_fd = -1;
    pid_t pid = -1;
  };
  result<janitor> spawn_janitor() const;
  // Removes the directories (retrying while the last tasks finish exiting).
  void remove();
  const std::vector<std::string>& directories() const { return dirs_; }

 private:
  bool v2_ = false;
  std::string memory_dir_, pids_dir_, cpu_dir_;
  std::vector<std::string> dirs_;
};

}  // namespace cordon::linux_impl

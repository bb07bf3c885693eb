// tree_cgroup.h — the run's cgroup, held by the supervisor for one run.
#pragma once

#include <optional>

#include "cordon/result.h"
#include "linux/cgroups.h"
#include "posix/exiting_sandboxes.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {

// Tree-wide limits: the run's cgroup exists before the tree does, and a
// janitor removes it even if this process is killed. finish() (at the
// latest the destructor) removes the directories and reaps the janitor.
class tree_cgroup {
 public:
  tree_cgroup() = default;
  tree_cgroup(const tree_cgroup&) = delete;
  tree_cgroup& operator=(const tree_cgroup&) = delete;
  ~tree_cgroup() { finish(); }

  // Nothing to do when the plan sets no tree-wide limit.
  result<void> create(const cgroup_site& site, const cgroup_limits& limits) {
    if (!limits.memory_bytes && !limits.max_processes && !limits.cpu_seconds) return ok;
    auto created = run_cgroup::create(site, limits);
    if (!created) return std::move(created).error_value();
    cgroup_ = std::move(*created);
    auto spawned = cgroup_->spawn_janitor();
    if (!spawned) return std::move(spawned).error_value();
    janitor_trigger_ = std::move(spawned->trigger_fd);
    janitor_pid_ = spawned->pid;
    return ok;
  }
  run_cgroup* get() noexcept { return cgroup_ ? &*cgroup_ : nullptr; }

  void finish() noexcept {
    if (!cgroup_) return;
    cgroup_->remove();
    janitor_trigger_.reset();
    if (janitor_pid_ > 0) {
      posix::reap(janitor_pid_);
      janitor_pid_ = -1;
    }
  }

 private:
  std::optional<run_cgroup> cgroup_;
  unique_fd janitor_trigger_;
  pid_t janitor_pid_ = -1;
};

}  // namespace cordon::linux_impl

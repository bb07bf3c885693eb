// subreaper_cleanup.h — tree cleanup without a PID namespace (the os_sandbox
// backend): the supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER), so
// every process of the tree whose parent dies is reparented to it, whatever
// session or process group it moved to; at the end it kills the command's
// process group and every child it has, again and again, until none is left.
#pragma once

#include <sys/types.h>

#include <vector>

namespace cordon::linux_impl {

// Makes the calling process a child subreaper for its lifetime; the
// destructor restores the previous setting.
class subreaper_scope {
 public:
  subreaper_scope() noexcept;
  subreaper_scope(const subreaper_scope&) = delete;
  subreaper_scope& operator=(const subreaper_scope&) = delete;
  ~subreaper_scope();
  bool active() const noexcept { return active_; }

 private:
  int previous_ = 0;
  bool active_ = false;
};

// The calling process's children (every thread's), from
// /proc/self/task/*/children.
std::vector<pid_t> current_children();

// SIGKILLs process group `group` (the command's) and every child of the
// calling process not in `keep` (a janitor, a broker), reaps them, and
// repeats until no such child is left. Returns how many processes it
// reaped. The kernel never reuses a pid still in use as a process group, and
// a child cannot be reused before it is reaped, so no stranger is signalled.
int kill_remaining_tree(pid_t group, const std::vector<pid_t>& keep);

}  // namespace cordon::linux_impl

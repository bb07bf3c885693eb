// os_sandbox_child.h — the command's own process under the os_sandbox
// backend: between clone and exec it confines itself, in this order, and
// execs. No namespaces: it stays in the host's views (docs/linux-backend.md,
// "Without namespaces").
#pragma once

#include <cstdint>
#include <vector>

#include "linux/os_sandbox_plan.h"
#include "linux/stdio_plan.h"

namespace cordon::linux_impl {

enum class os_sandbox_step : std::int32_t {
  session, wait_for_supervisor, stdio, working_directory, rlimits, no_new_privs, landlock, capabilities, seccomp, exec,
};
const char* describe_os_sandbox_step(os_sandbox_step step) noexcept;

// What the child reports through `error_fd` when it fails before exec (the
// pipe is close-on-exec: EOF without a message means the exec happened).
struct os_sandbox_failure {
  os_sandbox_step step = os_sandbox_step::exec;
  std::int32_t error = 0;  // errno
  std::int32_t index = -1;  // the rlimit or Landlock rule that failed
};

// Everything prepared by the supervisor before the clone: the child
// allocates nothing.
struct os_sandbox_child_args {
  const std::vector<rlimit_setting>* rlimits = nullptr;
  const landlock_ruleset_plan* landlock = nullptr;  // the plan's rules plus the run's temporary directory
  const seccomp_program* seccomp = nullptr;
  const char* working_directory = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  stdio_handoff stdio;
  int go_fd = -1;      // one byte: the cgroup holds the child (EOF: the supervisor is gone)
  int error_fd = -1;   // os_sandbox_failure
  int notify_fd = -1;  // the seccomp listener goes to the supervisor here (payload->seccomp.notify)
  pid_t supervisor = 0;
  bool drop_capabilities = false;  // the caller is root: empty every capability set (capabilities.h)
};

// The child's whole life after clone: setsid, PR_SET_PDEATHSIG, wait for the
// go byte, stdio, working directory, rlimits, no_new_privs, Landlock,
// capabilities (root), seccomp (listener sent out), signal mask and dispositions reset,
// descriptors above 2 close-on-exec, execvp with the policy's environment.
[[noreturn]] void run_os_sandbox_child(const os_sandbox_child_args& args) noexcept;

}  // namespace cordon::linux_impl

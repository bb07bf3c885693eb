// Starting the cordon-supervisor helper (helper_spawn.h). Between clone and
// execve the children make only async-signal-safe calls on data prepared
// before the clone, which is what a multi-threaded parent allows.
#include "posix/helper_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <csignal>
#include <cstdlib>

#include "cordon/policy_json.h"
#include "posix/beside_install.h"
#include "posix/exiting_sandboxes.h"

namespace cordon::posix {

// After the installed path: <prefix>/libexec/cordon/ of the installation this
// code was loaded from (beside_install.h), before the build tree's.
std::string supervisor_path(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("CORDON_SUPERVISOR"); env != nullptr && env[0] != '\0') return env;
  if (::access(CORDON_SUPERVISOR_INSTALLED, X_OK) == 0) return CORDON_SUPERVISOR_INSTALLED;
  if (std::string beside = beside_install("cordon-supervisor"); !beside.empty()) return beside;
#ifdef CORDON_SUPERVISOR_BUILT
  return CORDON_SUPERVISOR_BUILT;
#else
  return CORDON_SUPERVISOR_INSTALLED;
#endif
}

result<unique_fd> stdio_source(const stdio_spec& spec, int standard_fd, bool input, unique_fd& caller_end) {
  int source = standard_fd;
  unique_fd pipe_child;
  if (spec.how == stdio_spec::mode::descriptor) source = spec.fd;
  if (spec.how == stdio_spec::mode::pipe) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "pipe2 for stdio", {}, errno);
    caller_end.reset(input ? fds[1] : fds[0]);
    pipe_child.reset(input ? fds[0] : fds[1]);
    source = pipe_child.get();
  }
  int high = ::fcntl(source, F_DUPFD_CLOEXEC, 10);
  if (high < 0) return make_error(error_code::usage_error, "stdio descriptor " + std::to_string(source) + " is not open", {}, errno);
  return unique_fd(high);
}

result<unique_fd> control_pair(unique_fd& mine) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return make_error(error_code::launch_failed, "socketpair for the supervisor helper", {}, errno);
  }
  mine.reset(pair[0]);
  unique_fd helper_end(pair[1]), high(::fcntl(pair[1], F_DUPFD_CLOEXEC, 10));
  if (!high) return make_error(error_code::launch_failed, "fcntl", {}, errno);
  return high;
}

namespace {

// What the two children of spawn_helper() read, all of it prepared before
// the clone: they share the caller's memory (CLONE_VM) and run while only
// the calling thread waits (CLONE_VFORK), so they write nothing else.
struct spawn_frame {
  char* const* argv;
  char* const* envp;
  const int* sources;
  char* helper_stack;     // top of the helper's stack
  pid_t helper = -1;      // written by the intermediate child
  int helper_pidfd = -1;  // the helper's pidfd, in the fd table the intermediate shares with the caller
};

// The helper: its four descriptors, then the supervisor. Every signal stays
// blocked through execve (the caller blocked them before the clone): a
// handler run here would run the caller's code on the caller's memory. The
// supervisor unblocks them first thing (src/supervisor/main.cpp).
// Not instrumented by AddressSanitizer: on a stack it does not know, its
// bookkeeping before a noreturn call (_exit) would report the stack switch.
__attribute__((no_sanitize_address)) int helper_start(void* arg) {
  const auto* frame = static_cast<const spawn_frame*>(arg);
  for (int target = 0; target < 4; ++target) {
    if (::dup2(frame->sources[target], target) < 0) ::_exit(exit_cordon_failed);
  }
  // Nothing else of the caller's: another thread's descriptor without
  // O_CLOEXEC (a pipe it handed to an earlier run, say) would be held by the
  // helper and its sandbox's PID 1, and its reader would wait for an
  // end-of-file as long as they live (a prepared sandbox: up to its max_age).
  // close_range(2) since Linux 5.9; an older kernel keeps them (ENOSYS).
  ::syscall(SYS_close_range, 4U, ~0U, 0U);
  ::execve(frame->argv[0], frame->argv, frame->envp);
  ::_exit(exit_not_found);
}

// The intermediate child (exit signal 0, never execs): starts the helper
// and leaves, so that the helper is an orphan, reaped by init, raising no
// signal here (an execve resets a process's exit signal to SIGCHLD, hence a
// grandchild). It returns once the helper has exec'd or failed to. It
// shares the caller's descriptor table (CLONE_FILES), so the helper's
// pidfd, made by this clone, is the caller's (release_helper()).
__attribute__((no_sanitize_address)) int intermediate_start(void* arg) {  // not instrumented: as helper_start
  auto* frame = static_cast<spawn_frame*>(arg);
  frame->helper = ::clone(helper_start, frame->helper_stack, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, frame,
                          &frame->helper_pidfd);
  ::_exit(frame->helper < 0 ? exit_cordon_failed : 0);
}

// The top of `size` bytes at `base`, 16-byte aligned (the x86-64 and
// AArch64 ABIs).
char* stack_top(char* base, std::size_t size) {
  return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(base + size) & ~std::uintptr_t{15});
}

}  // namespace

result<helper_process> spawn_helper(const std::string& path, const int sources[4]) {
  // A helper that cannot be executed would only show later, as a report that never came:
  // name the path tried and the ways to give one (one access(2), before anything is started).
  if (::access(path.c_str(), X_OK) != 0) {
    const int e = errno;
    return make_error(error_code::launch_failed,
                      "cannot execute the supervisor helper " + path +
                          " (install cordon, build the cordon_supervisor target, or set CORDON_SUPERVISOR)",
                      {}, e);
  }
  // Everything the children touch exists before the clone.
  std::string fd_arg = "3";
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("--control-fd"), fd_arg.data(), nullptr};
  char* envp[] = {nullptr};
  // Two small stacks. The children share this process's memory instead of a
  // copy of it: no page tables copied twice, and the caller's other threads
  // are not held up on their page faults while a copy is made.
  constexpr std::size_t kStack = 64 * 1024;
  std::unique_ptr<char[]> stacks(new char[2 * kStack]);
  spawn_frame frame{argv, envp, sources, stack_top(stacks.get() + kStack, kStack)};

  sigset_t all, saved;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  int pidfd = -1;
  const int pid = ::clone(intermediate_start, stack_top(stacks.get(), kStack),
                          CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_PIDFD, &frame, &pidfd);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return make_error(error_code::launch_failed, "clone for the supervisor helper", {}, clone_errno);
  unique_fd child(pidfd);
  siginfo_t info{};
  while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(child.get()), &info, WEXITED | __WALL) < 0 &&
         errno == EINTR) {
  }
  helper_process helper;
  helper.pidfd.reset(frame.helper_pidfd);
  if (frame.helper <= 0) return make_error(error_code::launch_failed, "clone for the supervisor helper failed");
  helper.pid = frame.helper;
  return helper;
}

namespace {

// Is this process where orphans come back to: the init of its PID
// namespace (getpid() is 1 there), or a child subreaper?
bool orphans_come_here() noexcept {
  int subreaper = 0;
  return ::getpid() == 1 || (::prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) == 0 && subreaper != 0);
}

}  // namespace

void release_helper(helper_process& helper) noexcept {
  if (!helper.pidfd) return;
  if (orphans_come_here()) {
    reap_when_exited(helper.pid, std::move(helper.pidfd));
  } else {
    helper.pidfd.reset();
  }
}

nlohmann::json plan_request(const sandbox_plan& plan) {
  return {{"backend", std::string(plan.backend()->name())},  // the supervisor compiles with the same one
          {"policy", sandbox_policy_to_json(plan.policy())},
          {"workspace", plan.workspace()},
          {"cgroup_parent", plan.cgroup_parent()},
          {"fingerprint", plan_fingerprint(plan)}};
}

std::string json_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cordon::posix

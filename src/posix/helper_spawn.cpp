// Starting the cordon-supervisor helper (helper_spawn.h). Between clone3 and
// execve the child makes only async-signal-safe calls on data prepared
// before the clone, which is what a multi-threaded parent allows.
#include "posix/helper_spawn.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>

#include "cordon/policy_json.h"

namespace cordon::posix {

std::string supervisor_path(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* env = std::getenv("CORDON_SUPERVISOR"); env != nullptr && env[0] != '\0') return env;
  if (::access(CORDON_SUPERVISOR_INSTALLED, X_OK) == 0) return CORDON_SUPERVISOR_INSTALLED;
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

result<pid_t> spawn_helper(const std::string& path, const int sources[4]) {
  // Everything the child touches exists before the clone.
  std::string fd_arg = "3";
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("--control-fd"), fd_arg.data(), nullptr};
  char* envp[] = {nullptr};
  sigset_t empty;
  ::sigemptyset(&empty);

  int pid_pipe[2];
  if (::pipe2(pid_pipe, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "pipe2", {}, errno);
  unique_fd pid_read(pid_pipe[0]), pid_write(pid_pipe[1]);

  // Two clones: an execve resets a process's exit signal to SIGCHLD, so the
  // helper is a grandchild. The child (exit_signal 0, never execs) clones the
  // helper, writes its pid and exits; the helper, orphaned, is reaped by init
  // and raises no signal here; its report comes over the socket.
  int pidfd = -1;
  struct clone_args args {};
  args.flags = CLONE_PIDFD;
  args.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
  args.exit_signal = 0;  // the host gets no SIGCHLD for the intermediate child
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) {
    // Async-signal-safe calls only from here to execve.
    ::sigprocmask(SIG_SETMASK, &empty, nullptr);
    struct clone_args helper_args {};
    long helper = ::syscall(SYS_clone3, &helper_args, sizeof helper_args);
    if (helper == 0) {
      for (int target = 0; target < 4; ++target) {
        if (::dup2(sources[target], target) < 0) ::_exit(exit_cordon_failed);
      }
      ::execve(argv[0], argv, envp);
      ::_exit(exit_not_found);
    }
    const pid_t helper_pid = static_cast<pid_t>(helper);
    ssize_t ignored = ::write(pid_write.get(), &helper_pid, sizeof helper_pid);
    (void)ignored;
    ::_exit(helper < 0 ? exit_cordon_failed : 0);
  }
  if (pid < 0) return make_error(error_code::launch_failed, "clone3 for the supervisor helper", {}, errno);
  unique_fd child(pidfd);
  pid_write.reset();
  pid_t helper_pid = -1;
  ssize_t n;
  do {
    n = ::read(pid_read.get(), &helper_pid, sizeof helper_pid);
  } while (n < 0 && errno == EINTR);
  siginfo_t info{};
  while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(child.get()), &info, WEXITED | __WALL) < 0 &&
         errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof helper_pid) || helper_pid <= 0) {
    return make_error(error_code::launch_failed, "clone3 for the supervisor helper failed");
  }
  return helper_pid;
}

nlohmann::json plan_request(const sandbox_plan& plan) {
  return {{"policy", sandbox_policy_to_json(plan.policy())},
          {"workspace", plan.workspace()},
          {"cgroup_parent", plan.cgroup_parent()},
          {"fingerprint", plan_fingerprint(plan)}};
}

std::string json_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace cordon::posix

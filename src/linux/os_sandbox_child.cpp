// os_sandbox_child.cpp — the command's process from clone to exec under the
// os_sandbox backend (os_sandbox_child.h). Async-signal-safe code only.
#include "linux/os_sandbox_child.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "linux/capabilities.h"
#include "posix/scm_rights.h"

extern char** environ;

namespace cordon::linux_impl {
namespace {

[[noreturn]] void fail(const os_sandbox_child_args& args, os_sandbox_step step, int error, int index = -1) noexcept {
  os_sandbox_failure failure{step, error, index};
  ssize_t ignored = ::write(args.error_fd, &failure, sizeof failure);
  (void)ignored;
  ::_exit(127);
}

bool send_listener(int socket_fd, int listener) noexcept {
  char byte = 0;
  iovec io{&byte, 1};
  scm_rights_space space;
  msghdr message = rights_message(io, space, &listener, 1);
  return ::sendmsg(socket_fd, &message, MSG_NOSIGNAL) == 1;
}

}  // namespace

const char* describe_os_sandbox_step(os_sandbox_step step) noexcept {
  switch (step) {
    case os_sandbox_step::session: return "starting a new session (setsid)";
    case os_sandbox_step::wait_for_supervisor: return "waiting for the supervisor";
    case os_sandbox_step::stdio: return "installing the standard descriptors";
    case os_sandbox_step::working_directory: return "changing to the working directory";
    case os_sandbox_step::rlimits: return "setting a resource limit (setrlimit)";
    case os_sandbox_step::no_new_privs: return "setting no_new_privs";
    case os_sandbox_step::landlock: return "applying the Landlock ruleset";
    case os_sandbox_step::capabilities: return "dropping capabilities";
    case os_sandbox_step::seccomp: return "installing the seccomp filter";
    case os_sandbox_step::exec: return "executing the command";
  }
  return "setting up the sandbox";
}

void run_os_sandbox_child(const os_sandbox_child_args& args) noexcept {
  // Its own session and process group: no controlling terminal, and the
  // group the supervisor kills first at the end.
  if (::setsid() < 0) fail(args, os_sandbox_step::session, errno);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || ::getppid() != args.supervisor) ::_exit(127);
  char go = 0;
  if (::read(args.go_fd, &go, 1) != 1) ::_exit(127);  // the supervisor died before the cgroup held us
  ::close(args.go_fd);
  int master = -1;
  if (int err = install_stdio(args.stdio, &master); err != 0) fail(args, os_sandbox_step::stdio, err);
  if (::chdir(args.working_directory) != 0) fail(args, os_sandbox_step::working_directory, errno);
  const auto& rlimits = *args.rlimits;
  for (std::size_t i = 0; i < rlimits.size(); ++i) {
    struct rlimit value {rlimits[i].value, rlimits[i].value};
    if (::setrlimit(rlimits[i].resource, &value) != 0) {
      fail(args, os_sandbox_step::rlimits, errno, static_cast<int>(i));
    }
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(args, os_sandbox_step::no_new_privs, errno);
  int failed_rule = -1;
  if (int err = apply_landlock(*args.landlock, nullptr, &failed_rule); err != 0) {
    fail(args, os_sandbox_step::landlock, err, failed_rule);
  }
  if (args.drop_capabilities) {
    if (int err = drop_all_capabilities(); err != 0) fail(args, os_sandbox_step::capabilities, err);
  }
  int listener = -1;
  if (int err = install_seccomp_program(*args.seccomp, &listener); err != 0) {
    fail(args, os_sandbox_step::seccomp, err);
  }
  if (listener >= 0) {
    // The supervisor answers every blocked call; no copy stays here.
    if (!send_listener(args.notify_fd, listener)) fail(args, os_sandbox_step::seccomp, errno);
    ::close(listener);
  }
  if (args.notify_fd >= 0) ::close(args.notify_fd);
  // The supervisor blocked its forwarded signals; the command starts clean.
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGCHLD}) ::signal(sig, SIG_DFL);
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 1024; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  // execvp searches the PATH of `environ`: the policy's.
  environ = const_cast<char**>(args.envp);
  ::execvp(args.argv[0], args.argv);
  fail(args, os_sandbox_step::exec, errno);
}

}  // namespace cordon::linux_impl

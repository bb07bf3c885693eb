// confined_launch.cpp — fork + exec of `cordon run` for one gate.
#include "gates/confined_launch.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::gates {
namespace {

// After fork only async-signal-safe calls: write(2) a message and _exit.
[[noreturn]] void child_fail(const char* what) {
  int err = errno;
  const char* text = std::strerror(err);
  (void)!::write(2, "cordon gate: ", 13);
  (void)!::write(2, what, std::strlen(what));
  (void)!::write(2, ": ", 2);
  (void)!::write(2, text, std::strlen(text));
  (void)!::write(2, "\n", 1);
  ::_exit(125);
}

void redirect(const std::string& path, int target, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) child_fail(path.c_str());
  if (::dup2(fd, target) < 0) child_fail("dup2");
  ::close(fd);
}

}  // namespace

result<pid_t> start_confined_gate(const gate_launch& launch, const sigset_t& child_mask) {
  // Everything the child needs is built before fork.
  std::vector<std::string> args = {"cordon", "run", "--workspace", launch.workspace, "--policy", launch.policy_file,
                                   "--report", launch.report_file, "--"};
  args.insert(args.end(), launch.argv.begin(), launch.argv.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) return make_error(error_code::launch_failed, "fork for a gate", {}, errno);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);  // the runner died before PDEATHSIG was set
    redirect(launch.stderr_file, 2, O_WRONLY | O_CREAT | O_TRUNC);
    redirect(launch.stdout_file, 1, O_WRONLY | O_CREAT | O_TRUNC);
    redirect("/dev/null", 0, O_RDONLY);
    if (::chdir(launch.working_directory.c_str()) != 0) child_fail(launch.working_directory.c_str());
    for (int sig : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) ::signal(sig, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    ::execv(launch.cordon_exe.c_str(), argv.data());
    child_fail(launch.cordon_exe.c_str());
  }
  ::setpgid(pid, pid);  // also here, so that a signal sent right after fork finds the group
  return pid;
}

}  // namespace cordon::gates

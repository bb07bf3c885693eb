#include "linux/host_facts.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "linux/landlock.h"

namespace cordon::linux_impl {
namespace {

bool read_long(const char* path, long& value) {
  std::ifstream in(path);
  return static_cast<bool>(in >> value);
}

host_facts read_facts() {
  host_facts facts;
  facts.uid = ::getuid();
  facts.gid = ::getgid();
  long value = 0;
  facts.user_namespaces = true;
  if (read_long("/proc/sys/user/max_user_namespaces", value) && value == 0) {
    facts.user_namespaces = false;
    facts.user_namespace_blocker = "user namespaces disabled by sysctl user.max_user_namespaces=0";
  } else if (facts.uid != 0 && read_long("/proc/sys/kernel/unprivileged_userns_clone", value) && value == 0) {
    facts.user_namespaces = false;
    facts.user_namespace_blocker = "unprivileged user namespaces disabled by sysctl kernel.unprivileged_userns_clone=0";
  } else if (facts.uid != 0 && read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", value) &&
             value != 0) {
    facts.user_namespaces = false;
    facts.user_namespace_blocker =
        "unprivileged user namespaces restricted by AppArmor (kernel.apparmor_restrict_unprivileged_userns=1)";
  }
  facts.landlock_abi = landlock_kernel_abi();
  if (facts.landlock_abi == 0) facts.landlock_blocker = "Landlock not available (not built or not in the LSM list)";
  facts.seccomp = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  return facts;
}

}  // namespace

const host_facts& current_host_facts() {
  static const host_facts facts = read_facts();
  return facts;
}

bool try_namespaces(std::string& failure) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    failure = std::strerror(errno);
    return false;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    int err = 0;
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0) {
      err = errno;
    }
    ssize_t ignored = ::write(pipe_fds[1], &err, sizeof err);
    (void)ignored;
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  int err = pid < 0 ? errno : 0;
  if (pid > 0) {
    ssize_t n = ::read(pipe_fds[0], &err, sizeof err);
    if (n != static_cast<ssize_t>(sizeof err)) err = EIO;
    ::waitpid(pid, nullptr, 0);
  }
  ::close(pipe_fds[0]);
  if (err != 0) failure = std::string("creating namespaces failed: ") + std::strerror(err);
  return err == 0;
}

}  // namespace cordon::linux_impl

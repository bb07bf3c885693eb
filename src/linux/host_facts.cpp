#include "linux/host_facts.h"

#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <fstream>

#include "linux/cgroups.h"
#include "linux/landlock.h"
#include "linux/namespaces.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {
namespace {

bool read_long(const char* path, long& value) {
  std::ifstream in(path);
  return static_cast<bool>(in >> value);
}

// The initial user namespace maps every id to itself: "0 0 4294967295".
bool nested_user_namespace() {
  std::ifstream in("/proc/self/uid_map");
  unsigned long inside = 0, outside = 0, count = 0;
  if (!(in >> inside >> outside >> count)) return false;
  return !(inside == 0 && outside == 0 && count == 4294967295UL);
}

bool seccomp_filtered() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Seccomp:", 0) == 0) return line.find('2') != std::string::npos;
  }
  return false;
}

linux_host_facts read_kernel_facts() {
  linux_host_facts facts;
  const unsigned uid = ::getuid();
  long value = 0;
  facts.user_namespaces = true;
  if (read_long("/proc/sys/user/max_user_namespaces", value) && value == 0) {
    facts.user_namespaces = false;
    facts.user_namespace_blocker = "user namespaces disabled by sysctl user.max_user_namespaces=0";
  } else if (uid != 0 && read_long("/proc/sys/kernel/unprivileged_userns_clone", value) && value == 0) {
    facts.user_namespaces = false;
    facts.user_namespace_blocker = "unprivileged user namespaces disabled by sysctl kernel.unprivileged_userns_clone=0";
  } else if (uid != 0 && read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", value) &&
             value != 0) {
    facts.user_namespaces = false;
    facts.user_namespace_blocker =
        "unprivileged user namespaces restricted by AppArmor (kernel.apparmor_restrict_unprivileged_userns=1)";
  }
  facts.nested_user_namespace = nested_user_namespace();
  facts.seccomp_filtered = seccomp_filtered();
  if (facts.user_namespaces && (facts.nested_user_namespace || facts.seccomp_filtered)) {
    // No sysctl says what an enclosing sandbox allows: ask the kernel once.
    std::string failure;
    if (!try_namespaces(failure)) {
      facts.user_namespaces = false;
      facts.user_namespace_blocker = failure;
    }
  }
  facts.landlock_abi = landlock_kernel_abi();
  if (facts.landlock_abi == 0) facts.landlock_blocker = "Landlock not available (not built or not in the LSM list)";
  facts.seccomp = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  return facts;
}

std::string invoking_home() {
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') return home;
  if (passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr) return pw->pw_dir;
  return {};
}

}  // namespace

host_facts read_linux_host_facts(const std::string& cgroup_parent, bool deep) {
  static const linux_host_facts kernel = read_kernel_facts();
  linux_host_facts record = kernel;
  record.cgroups = find_cgroup_site(cgroup_parent);
  host_facts facts = linux_driver_facts(std::move(record), ::getuid(), ::getgid(), invoking_home());
  std::string failure;
  if (deep && facts.backend_available && !try_namespaces(failure)) {
    facts.backend_available = false;
    facts.backend_blocker = failure;
  }
  return facts;
}

}  // namespace cordon::linux_impl

namespace cordon {

host_facts linux_driver_facts(linux_host_facts record, unsigned uid, unsigned gid, std::string home) {
  host_facts facts;
  facts.platform = "linux";
  facts.uid = uid;
  facts.gid = gid;
  facts.home = std::move(home);
  facts.backend_available = record.user_namespaces;
  facts.backend_blocker = record.user_namespace_blocker;
  facts.lines.push_back("uid " + std::to_string(uid) + (uid == 0 ? " (root)" : " (unprivileged)"));
  facts.lines.push_back(record.user_namespaces ? "user namespaces: yes" : "user namespaces: no");
  facts.lines.push_back(record.landlock_abi > 0 ? "landlock abi " + std::to_string(record.landlock_abi)
                                                : record.landlock_blocker);
  facts.lines.push_back(record.seccomp ? "seccomp: yes" : "seccomp: no");
  if (record.nested_user_namespace) facts.lines.push_back("nested: started in a user namespace other than the initial one");
  if (record.seccomp_filtered) facts.lines.push_back("nested: cordon itself already runs under a seccomp filter");
  facts.backend_facts = std::move(record);
  return facts;
}

}  // namespace cordon

namespace cordon::linux_impl {

bool try_namespaces(std::string& failure) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    failure = std::strerror(errno);
    return false;
  }
  unique_fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  pid_t pid = ::fork();
  if (pid == 0) {
    int err = 0;
    if (::unshare(static_cast<int>(launch_namespaces_with_network)) != 0) err = errno;
    ssize_t ignored = ::write(write_end.get(), &err, sizeof err);
    (void)ignored;
    ::_exit(0);
  }
  write_end.reset();
  int err = pid < 0 ? errno : 0;
  if (pid > 0) {
    ssize_t n = ::read(read_end.get(), &err, sizeof err);
    if (n != static_cast<ssize_t>(sizeof err)) err = EIO;
    ::waitpid(pid, nullptr, 0);
  }
  if (err == ENOSPC) {
    failure = "nested: this process runs in a user namespace that allows no more of them "
              "(user.max_user_namespaces reached, as under bubblewrap --disable-userns)";
  } else if (err == EPERM && seccomp_filtered()) {
    failure = "nested: unshare(CLONE_NEWUSER) refused with EPERM under a seccomp filter "
              "(as a container runtime's default profile does)";
  } else if (err == EPERM) {
    failure = "unshare(CLONE_NEWUSER) refused with EPERM (a security module or an enclosing sandbox "
              "forbids new namespaces)";
  } else if (err != 0) {
    failure = std::string("creating namespaces failed: ") + std::strerror(err);
  }
  return err == 0;
}

}  // namespace cordon::linux_impl

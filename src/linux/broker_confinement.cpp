// broker_confinement.cpp — see broker_confinement.h.
#include "linux/broker_confinement.h"

#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "linux/broker_seccomp.h"
#include "linux/capabilities.h"
#include "linux/landlock.h"

namespace cordon::linux_impl {
namespace {

std::string failed(const char* step, int err) { return std::string(step) + ": " + std::strerror(err); }

bool holds_any_capability() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return true;  // unknown: try to drop
  return (data[0].permitted | data[1].permitted | data[0].effective | data[1].effective) != 0;
}

}  // namespace

std::string confine_broker_process(rlim_t max_files) {
  const struct rlimit files {max_files, max_files};
  if (::setrlimit(RLIMIT_NOFILE, &files) != 0) return failed("RLIMIT_NOFILE", errno);
  if (holds_any_capability()) {
    if (const int err = drop_all_capabilities(); err != 0) return failed("dropping capabilities", err);
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return failed("no_new_privs", errno);
  if (const int abi = landlock_kernel_abi(); abi > 0) {
    landlock_ruleset_plan plan;
    plan.abi = abi;  // every filesystem right of this ABI handled, no rule: no file, no directory
    plan.scope_signals_and_abstract_sockets = abi >= 6;
    if (const int err = apply_landlock(plan, nullptr); err != 0) return failed("Landlock", err);
  }
  // seccomp(2) does not modify the program; sock_fprog just lacks const.
  sock_fprog program{static_cast<unsigned short>(broker_seccomp_program_size),
                     const_cast<sock_filter*>(broker_seccomp_program)};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0U, &program) != 0) return failed("seccomp", errno);
  return {};
}

}  // namespace cordon::linux_impl

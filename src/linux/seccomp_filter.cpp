// seccomp_filter.cpp — the baseline seccomp filter at run time: the program
// comes prebuilt (seccomp_programs.h; the rules are src/linux/gen/seccomp_rules.cpp
// and docs/seccomp.md), this file checks that the kernel can run it and
// installs it.
#include "linux/seccomp_filter.h"

#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "linux/seccomp_programs.h"

namespace cordon::linux_impl {
namespace {

// libseccomp checked this when it built the program at launch; the prebuilt
// program still needs a kernel that knows its actions.
bool kernel_has_action(std::uint32_t action) noexcept {
  return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0U, &action) == 0;
}

}  // namespace

result<seccomp_program> build_seccomp_program(const seccomp_options& options) {
  struct needed {
    std::uint32_t action;
    const char* name;
  };
  for (const needed& n : {needed{SECCOMP_RET_KILL_PROCESS, "SECCOMP_RET_KILL_PROCESS"},
                          needed{SECCOMP_RET_ERRNO, "SECCOMP_RET_ERRNO"},
                          needed{options.notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO,
                                 options.notify ? "SECCOMP_RET_USER_NOTIF" : "SECCOMP_RET_ERRNO"}}) {
    if (!kernel_has_action(n.action)) {
      return make_error(error_code::launch_failed,
                        std::string("seccomp: this kernel does not support ") + n.name, {}, errno);
    }
  }
  if (!seccomp_options_prebuilt(options)) {
    return make_error(error_code::launch_failed, "seccomp: no prebuilt program for these options");
  }
  const generated::seccomp_variant& v = generated::variants[seccomp_variant_index(options)];
  seccomp_program program;
  program.notify = options.notify;
  // Judged per call by the supervisor (violations.h), so not in the BPF.
  program.connect_notified = options.notify && (options.notify_connect || options.notify_unix_connect);
  program.unix_connect_checked = options.notify && options.notify_unix_connect;
  program.listen_checked = options.notify && options.allow_inet_sockets && options.inet_stream_only;
  program.mount_point_changes_checked = options.notify && options.notify_mount_point_changes;
  program.protected_writes_checked = options.notify && options.notify_protected_writes;
  program.broker_port = options.broker_port;
  program.allow_loopback_connect = options.allow_loopback_connect;
  program.bpf.assign(v.bpf, v.bpf + v.bpf_size);
  program.blocked.assign(v.blocked, v.blocked + v.blocked_size);
  program.errno_by_syscall.reserve(v.errnos_size);
  for (std::size_t i = 0; i < v.errnos_size; ++i) program.errno_by_syscall.emplace_back(v.errnos[i].nr, v.errnos[i].err);
  return program;
}

result<seccomp_program> build_plan_seccomp(const seccomp_options& options) {
  auto program = build_seccomp_program(options);
  if (program) return program;
  error f = make_error(error_code::enforcement_unavailable,
                       "could not build the seccomp filter: " + program.error_value().message);
  f.blockers.push_back(blocker::for_control(control::syscall_filter, enforcement_level::enforced,
                                            enforcement_level::not_enforced, program.error_value().message));
  return f;
}

int errno_for_notification(const seccomp_program& program, int syscall_nr) noexcept {
  for (const auto& [nr, err] : program.errno_by_syscall) {
    if (nr == syscall_nr) return err;
  }
  return EPERM;
}

std::string syscall_name(int syscall_nr) {
  if (syscall_nr >= 0 && static_cast<std::size_t>(syscall_nr) < generated::syscall_name_count &&
      generated::syscall_names[syscall_nr] != nullptr) {
    return generated::syscall_names[syscall_nr];
  }
  return "syscall " + std::to_string(syscall_nr);
}

int install_seccomp_program(const seccomp_program& program, int* listener_fd) noexcept {
  if (listener_fd != nullptr) *listener_fd = -1;
  if (program.bpf.empty() || program.bpf.size() > BPF_MAXINSNS) return EINVAL;
  // seccomp(2) does not modify the program; sock_fprog just lacks const.
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(program.bpf.size());
  prog.filter = const_cast<sock_filter*>(program.bpf.data());
  // Flags 0: this thread only (the launcher's child is single-threaded), no
  // TSYNC; the raw syscall keeps any library (and any allocation) out of the child.
  if (program.notify) {
    long fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd < 0) return errno;
    if (listener_fd != nullptr) *listener_fd = static_cast<int>(fd);
    return 0;
  }
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0U, &prog) != 0) return errno;
  return 0;
}

}  // namespace cordon::linux_impl

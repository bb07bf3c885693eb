// seccomp_filter.h — the baseline seccomp filter: built with libseccomp when
// cordon itself is built (src/linux/gen/, seccomp_programs.h), picked for the
// plan at compile time and installed in the sandbox just before exec.
//
// Prebuilt, picked in the parent, applied in the child: a launch runs no
// libseccomp, and tests can inspect the exact program a plan applies.
// Every blocked syscall and argument is listed in docs/seccomp.md with its
// errno.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "cordon/result.h"

namespace cordon::linux_impl {

struct seccomp_options {
  // Network denied: socket()/socketpair() for every family but AF_UNIX fail
  // with EAFNOSUPPORT.
  bool deny_non_unix_sockets = true;
  // Filtered network (with deny_non_unix_sockets): AF_INET and AF_INET6
  // sockets are allowed too, so the command can reach the broker's loopback
  // listener; every other family still fails with EAFNOSUPPORT.
  bool allow_inet_sockets = false;
  // Filtered network: every connect(2) goes to the supervisor (requires
  // notify), which lets the call continue when it aims at a unix socket, the
  // broker's listener (127.0.0.1:broker_port) or, with local binding, the
  // namespace's own loopback, and otherwise records a "network_connect"
  // violation and fails it with EACCES (what the Landlock TCP rule returns).
  // Evidence and an early refusal only: the namespace and Landlock still
  // enforce whatever the answer (seccomp_unotify(2) warns against trusting
  // SECCOMP_USER_NOTIF_FLAG_CONTINUE alone).
  bool notify_connect = false;
  // Network not unrestricted (with notify): every connect(2) goes to the
  // supervisor, which connects a named unix socket itself only when the
  // policy lists it (unix_connect.h); AF_UNIX datagram sockets fail with
  // EAFNOSUPPORT (their sendto/sendmsg address is beyond a filter's reach).
  bool notify_unix_connect = false;
  int broker_port = 0;
  bool allow_loopback_connect = false;
  // No network namespace of the sandbox's own (linux-os-sandbox, filtered;
  // with allow_inet_sockets and notify): an IPv4/IPv6 socket is the host's.
  // socket(AF_INET/AF_INET6) of any type but SOCK_STREAM, or with a protocol
  // other than 0 and IPPROTO_TCP, fails with EAFNOSUPPORT (no UDP, ICMP,
  // SCTP or MPTCP: their addresses travel in sendto/sendmsg, beyond a
  // filter's reach), and every listen(2) goes to the supervisor, which
  // performs it on its own copy of the socket for AF_UNIX and refuses it
  // with EACCES for IP (a listen on an unbound socket binds a port on every
  // host address, past Landlock's bind rule).
  bool inet_stream_only = false;
  // The caller is the host's root user, mapped to uid 0 inside: a file the
  // command marks setuid or setgid would be a setuid-root program on the
  // host. chmod/fchmod/fchmodat, open/openat/creat with O_CREAT or O_TMPFILE,
  // and mknod/mknodat fail with EPERM when the mode has S_ISUID or S_ISGID;
  // fchmodat2 and openat2 (mode not inspectable) fail with ENOSYS.
  bool deny_setuid_bits = false;
  // A read-only path (bind or mask) lies inside a writable directory (with
  // notify): rename, renameat, renameat2, unlink, unlinkat and rmdir go to
  // the supervisor, which fails a rename or removal of a mount point with
  // EROFS and records a "protected_write" violation, and lets every other
  // call continue (mount_point_changes.h). Without it the kernel's answer is
  // EBUSY, and nothing is recorded.
  bool notify_mount_point_changes = false;
  // A read-only bind lies inside a writable directory (with notify): open
  // and openat with O_WRONLY, O_RDWR, O_CREAT or O_TRUNC in their flags, and
  // every creat, openat2 and truncate, go to the supervisor, which fails a
  // write to a protected path with EROFS and records a "protected_write"
  // violation, and lets every other call continue (protected_writes.h).
  // Without it the mount's EROFS is all, and nothing is recorded.
  bool notify_protected_writes = false;
  // Every blocked call goes to the supervisor (SECCOMP_RET_USER_NOTIF), which
  // records it as a violation and answers with the same errno the table
  // gives. If nobody answers (the supervisor is gone) the call fails with
  // ENOSYS: it is refused either way.
  bool notify = false;
};

struct seccomp_program {
  std::vector<sock_filter> bpf;        // the exported program (native arch)
  std::vector<std::string> blocked;    // human-readable rules, e.g. "ptrace: EPERM"
  bool notify = false;                 // blocked calls are USER_NOTIF, answered by the supervisor
  std::vector<std::pair<int, int>> errno_by_syscall;  // (syscall number, errno) when notify
  // notify_connect: connect(2) notifications are judged by destination.
  bool connect_notified = false;
  int broker_port = 0;
  bool allow_loopback_connect = false;
  // inet_stream_only: listen(2) notifications are decided by the socket's family.
  bool listen_checked = false;
  // notify_unix_connect: connect(2) to a named unix socket is decided by the
  // supervisor against these (unix_connect.h), not let through.
  bool unix_connect_checked = false;
  // Absolute paths inside the sandbox: a socket, or a directory whose direct
  // entries are allowed sockets (filesystem.unix_sockets, plus the broker's).
  std::vector<std::string> unix_sockets_allowed;
  bool unix_private_tmp = false;  // sockets on the run's private /tmp are the sandbox's own
  // No network namespace of the sandbox's own (linux-os-sandbox): an
  // abstract name is the host's, and the supervisor, outside the command's
  // Landlock scope, must not connect to it: refused with EACCES.
  bool abstract_unix_refused = false;
  // notify_mount_point_changes: rename/unlink/rmdir notifications are
  // answered by mount_point_changes.h.
  bool mount_point_changes_checked = false;
  // The last components of those mount points ("config", "hooks", ...): a
  // call whose paths end otherwise is continued without a lookup.
  std::vector<std::string> mount_point_names;
  // notify_protected_writes: write opens and truncates are answered by
  // protected_writes.h against these absolute paths (the read-only binds
  // inside writable roots, as the sandbox sees them).
  bool protected_writes_checked = false;
  std::vector<std::string> protected_write_paths;
  // linux-os-sandbox: no mount namespace, the protected paths are Landlock
  // read-only rules (the split around them refuses every write, rename and
  // removal with EACCES). The supervisor then compares paths instead of
  // mounts: a write below one of protected_write_paths, a rename or removal
  // of one of protected_change_paths (those paths and the directories
  // between them and their writable root, host paths).
  bool protected_by_landlock = false;
  std::vector<std::string> protected_change_paths;
};

// The errno a notified call must fail with (EPERM when the number is unknown).
int errno_for_notification(const seccomp_program& program, int syscall_nr) noexcept;

// The syscall's name on this architecture, or "syscall <nr>".
std::string syscall_name(int syscall_nr);

// The filter for these options. Default action allow; blocked syscalls fail
// with the errno docs/seccomp.md gives; syscalls of other ABIs (i386, x32)
// kill the process. Errors: error_code::launch_failed when the running kernel
// lacks an action the program uses (KILL_PROCESS, ERRNO, USER_NOTIF).
result<seccomp_program> build_seccomp_program(const seccomp_options& options);

// build_seccomp_program() as a backend's build() needs it: a failure is
// enforcement_unavailable with a syscall_filter blocker naming the reason.
result<seccomp_program> build_plan_seccomp(const seccomp_options& options);

// Installs the program on the calling thread with
// seccomp(SECCOMP_SET_MODE_FILTER). Requires no_new_privs (or CAP_SYS_ADMIN).
// With program.notify, the new listener descriptor is stored in
// `*listener_fd` (close-on-exec); otherwise it is set to -1.
// Allocation-free; returns 0 or an errno value. Irreversible.
int install_seccomp_program(const seccomp_program& program, int* listener_fd) noexcept;

}  // namespace cordon::linux_impl

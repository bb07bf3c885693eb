// seccomp_rules.cpp — the baseline seccomp filter's rules, built with
// libseccomp (see seccomp_rules.h, seccomp_filter.h and docs/seccomp.md for
// the table of rules). Not part of libcordon: cordon_seccomp_gen runs this at
// build time and writes every variant into a generated source, and the unit
// tests build it again to check that source against libseccomp.
//
// The filter is a deny list on top of the namespaces and the mount table: it
// removes kernel interfaces that a confined command has no business calling
// and that have a history of privilege-escalation bugs or that would let it
// undo its own confinement. Default action is ALLOW, so new syscalls are not
// blocked until they are listed here; every listed rule returns an errno
// rather than killing, so well-behaved programs see an ordinary failure.
//
// References: seccomp(2), seccomp_rule_add(3), seccomp_attr_set(3),
// seccomp_export_bpf(3), Documentation/userspace-api/seccomp_filter.rst.

#include "linux/gen/seccomp_rules.h"

#include <seccomp.h>

#include <fcntl.h>      // O_CREAT
#include <sys/ioctl.h>  // TIOCSTI, TIOCLINUX
#include <sched.h>      // CLONE_NEW*
#include <sys/mman.h>   // memfd_create
#include <sys/personality.h>
#include <netinet/in.h>
#include <netinet/tcp.h>  // TCP_FASTOPEN_CONNECT
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace cordon::linux_impl {
namespace {

// On s390/s390x (and cris) clone() takes the stack first and the flags
// second; everywhere else (x86_64, aarch64, riscv64, ...) flags are arg0.
// See clone(2), "C library/kernel differences".
#if defined(__s390__) || defined(__s390x__) || defined(__CRIS__)
constexpr unsigned clone_flags_arg = 1;
#else
constexpr unsigned clone_flags_arg = 0;
#endif

// Namespace-creating clone() flags. CLONE_NEWTIME (0x80) is deliberately
// absent: it overlaps the exit-signal byte (CSIGNAL) of clone() and the
// kernel only accepts it from clone3() and unshare(), both of which are
// blocked wholesale below.
struct named_flag {
  const char* name;
  std::uint64_t bit;
};
constexpr named_flag clone_new_flags[] = {
    {"CLONE_NEWNS", CLONE_NEWNS},     {"CLONE_NEWCGROUP", CLONE_NEWCGROUP},
    {"CLONE_NEWUTS", CLONE_NEWUTS},   {"CLONE_NEWIPC", CLONE_NEWIPC},
    {"CLONE_NEWUSER", CLONE_NEWUSER}, {"CLONE_NEWPID", CLONE_NEWPID},
    {"CLONE_NEWNET", CLONE_NEWNET},
};

struct ctx_deleter {
  void operator()(void* ctx) const noexcept { seccomp_release(ctx); }
};
using ctx_ptr = std::unique_ptr<void, ctx_deleter>;

struct fd_closer {
  int fd = -1;
  fd_closer() = default;
  fd_closer(const fd_closer&) = delete;
  fd_closer& operator=(const fd_closer&) = delete;
  ~fd_closer() {
    if (fd >= 0) ::close(fd);
  }
};

// libseccomp reports errors as negative errno values.
error seccomp_error(const std::string& what, int rc) {
  return make_error(error_code::launch_failed, "seccomp: " + what + " failed", {}, -rc);
}

const char* errno_name(int err) {
  switch (err) {
    case EPERM: return "EPERM";
    case ENOSYS: return "ENOSYS";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    default: return "errno";
  }
}

scmp_arg_cmp arg_cmp(unsigned arg, scmp_compare op, std::uint64_t a, std::uint64_t b = 0) {
  scmp_arg_cmp cmp{};
  cmp.arg = arg;
  cmp.op = op;
  cmp.datum_a = a;
  cmp.datum_b = b;
  return cmp;
}

class filter_builder {
 public:
  filter_builder(scmp_filter_ctx ctx, seccomp_program& program) : ctx_(ctx), blocked_(program.blocked), program_(program) {}

  // ERRNO, or USER_NOTIF with the errno remembered for the supervisor's answer.
  std::uint32_t action(int nr, int err) {
    if (!program_.notify) return SCMP_ACT_ERRNO(static_cast<std::uint32_t>(err));
    bool known = false;
    for (const auto& [n, e] : program_.errno_by_syscall) known = known || n == nr;
    if (!known) program_.errno_by_syscall.emplace_back(nr, err);
    return SCMP_ACT_NOTIFY;
  }

  // Blocks `nr` unconditionally. A negative number is libseccomp's marker for
  // "this syscall does not exist on this architecture" (e.g. nfsservctl on
  // aarch64); such rules are skipped and not listed, so `blocked` only names
  // rules that are really in the program.
  int block(const char* name, int nr, int err = EPERM) {
    if (nr < 0) return 0;
    int rc = seccomp_rule_add(ctx_, action(nr, err), nr, 0);
    if (rc == 0) blocked_.push_back(std::string(name) + ": " + errno_name(err));
    return rc;
  }

  // Blocks `nr` when all `cmps` hold. Several calls for the same syscall and
  // action are OR-ed by libseccomp, so a family of rules is listed once, by
  // the caller, with note().
  int block_if(int nr, const scmp_arg_cmp* cmps, unsigned count, int err = EPERM) {
    if (nr < 0) return 0;
    return seccomp_rule_add_array(ctx_, action(nr, err), nr, count, cmps);
  }

  void note(const std::string& line) { blocked_.push_back(line); }

 private:
  scmp_filter_ctx ctx_;
  std::vector<std::string>& blocked_;
  seccomp_program& program_;
};

struct plain_rule {
  const char* name;
  int nr;
};

// Syscalls blocked with EPERM whatever their arguments. Grouped by reason;
// docs/seccomp.md gives the one-line reason for each.
const plain_rule plain_rules[] = {
    // Mount table: the sandbox's root is built by the launcher; the command
    // must not rearrange, reveal or escape it. mount(2), mount_setattr(2),
    // open_tree/move_mount/fs* are the new mount API (Linux 5.2+).
    {"mount", SCMP_SYS(mount)},
    {"umount2", SCMP_SYS(umount2)},
    {"umount", SCMP_SYS(umount)},
    {"pivot_root", SCMP_SYS(pivot_root)},
    {"move_mount", SCMP_SYS(move_mount)},
    {"open_tree", SCMP_SYS(open_tree)},
    {"fsopen", SCMP_SYS(fsopen)},
    {"fsconfig", SCMP_SYS(fsconfig)},
    {"fsmount", SCMP_SYS(fsmount)},
    {"fspick", SCMP_SYS(fspick)},
    {"mount_setattr", SCMP_SYS(mount_setattr)},
    {"chroot", SCMP_SYS(chroot)},
    // Namespaces: creating or joining one is how in-sandbox code regains
    // capabilities (a fresh user namespace) or reaches other namespaces.
    {"unshare", SCMP_SYS(unshare)},
    {"setns", SCMP_SYS(setns)},
    // Reading or writing other processes' memory.
    {"ptrace", SCMP_SYS(ptrace)},
    {"process_vm_readv", SCMP_SYS(process_vm_readv)},
    {"process_vm_writev", SCMP_SYS(process_vm_writev)},
    {"pidfd_getfd", SCMP_SYS(pidfd_getfd)},
    // Kernel code and kernel images.
    {"kexec_load", SCMP_SYS(kexec_load)},
    {"kexec_file_load", SCMP_SYS(kexec_file_load)},
    {"init_module", SCMP_SYS(init_module)},
    {"finit_module", SCMP_SYS(finit_module)},
    {"delete_module", SCMP_SYS(delete_module)},
    // Large attack surface with a long CVE history, not needed by ordinary
    // commands: eBPF, userfaultfd (used to win kernel races), io_uring (its
    // operations bypass this very filter), perf events.
    {"bpf", SCMP_SYS(bpf)},
    {"userfaultfd", SCMP_SYS(userfaultfd)},
    {"io_uring_setup", SCMP_SYS(io_uring_setup)},
    {"io_uring_enter", SCMP_SYS(io_uring_enter)},
    {"io_uring_register", SCMP_SYS(io_uring_register)},
    {"perf_event_open", SCMP_SYS(perf_event_open)},
    // File handles bypass path-based checks (the "shocker" container escape).
    {"open_by_handle_at", SCMP_SYS(open_by_handle_at)},
    {"name_to_handle_at", SCMP_SYS(name_to_handle_at)},
    // The kernel keyring is not namespaced: keys could leak between
    // sandboxes and the host.
    {"keyctl", SCMP_SYS(keyctl)},
    {"add_key", SCMP_SYS(add_key)},
    {"request_key", SCMP_SYS(request_key)},
    // Host-wide administration: accounting, swap, reboot, clocks, quotas,
    // kernel log, terminal hangup, obsolete interfaces.
    {"acct", SCMP_SYS(acct)},
    {"swapon", SCMP_SYS(swapon)},
    {"swapoff", SCMP_SYS(swapoff)},
    {"reboot", SCMP_SYS(reboot)},
    {"settimeofday", SCMP_SYS(settimeofday)},
    {"clock_settime", SCMP_SYS(clock_settime)},
    {"clock_adjtime", SCMP_SYS(clock_adjtime)},
    {"adjtimex", SCMP_SYS(adjtimex)},
    {"quotactl", SCMP_SYS(quotactl)},
    {"quotactl_fd", SCMP_SYS(quotactl_fd)},
    {"lookup_dcookie", SCMP_SYS(lookup_dcookie)},
    {"vhangup", SCMP_SYS(vhangup)},
    {"syslog", SCMP_SYS(syslog)},
    {"nfsservctl", SCMP_SYS(nfsservctl)},
    {"uselib", SCMP_SYS(uselib)},
};

// Setting S_ISUID or S_ISGID. Each (syscall, mode argument, bit) is one rule;
// for open/openat a second comparison requires O_CREAT or O_TMPFILE in the
// flags, since only then is the mode argument meaningful. Modes are
// unsigned ints in the kernel; the masks ignore the high half.
int add_setuid_rules(filter_builder& b, std::string& failed) {
  constexpr std::uint64_t kO_TMPFILE_BIT = 020000000;  // __O_TMPFILE
  struct mode_rule {
    const char* name;
    int nr;
    unsigned mode_arg;
    int flags_arg;  // -1: the call always creates or changes a mode
  };
  const mode_rule rules[] = {
      {"chmod", SCMP_SYS(chmod), 1, -1},     {"fchmod", SCMP_SYS(fchmod), 1, -1},
      {"fchmodat", SCMP_SYS(fchmodat), 2, -1}, {"creat", SCMP_SYS(creat), 1, -1},
      {"mknod", SCMP_SYS(mknod), 1, -1},     {"mknodat", SCMP_SYS(mknodat), 2, -1},
      {"open", SCMP_SYS(open), 2, 1},        {"openat", SCMP_SYS(openat), 3, 2},
  };
  int rc = 0;
  for (const auto& rule : rules) {
    for (std::uint64_t bit : {std::uint64_t{S_ISUID}, std::uint64_t{S_ISGID}}) {
      const scmp_arg_cmp mode = arg_cmp(rule.mode_arg, SCMP_CMP_MASKED_EQ, bit, bit);
      if (rule.flags_arg < 0) {
        rc = b.block_if(rule.nr, &mode, 1);
      } else {
        for (std::uint64_t create : {std::uint64_t{O_CREAT}, kO_TMPFILE_BIT}) {
          const scmp_arg_cmp both[2] = {
              arg_cmp(static_cast<unsigned>(rule.flags_arg), SCMP_CMP_MASKED_EQ, create, create), mode};
          if ((rc = b.block_if(rule.nr, both, 2)) != 0) break;
        }
      }
      if (rc != 0) {
        failed = std::string(rule.name) + "(setuid/setgid mode)";
        return rc;
      }
    }
  }
  b.note("chmod/fchmod/fchmodat/creat/mknod/mknodat/open/openat with S_ISUID or S_ISGID: EPERM");
  // Newer calls whose mode or flags the filter cannot see: callers fall back.
  for (const char* name : {"fchmodat2", "openat2"}) {
    int nr = seccomp_syscall_resolve_name(name);
#if defined(__x86_64__)
    if (nr == __NR_SCMP_ERROR && std::string(name) == "fchmodat2") nr = 452;  // libseccomp 2.5 predates it
#endif
    if (nr == __NR_SCMP_ERROR) continue;
    if ((rc = b.block(name, nr, ENOSYS)) != 0) {
      failed = name;
      return rc;
    }
  }
  return 0;
}

int add_rules(scmp_filter_ctx ctx, const seccomp_options& options, seccomp_program& program,
              std::string& failed) {
  filter_builder b(ctx, program);
  int rc = 0;

  for (const auto& rule : plain_rules) {
    if ((rc = b.block(rule.name, rule.nr)) != 0) {
      failed = rule.name;
      return rc;
    }
  }

  // clone3(): its flags live in a struct in user memory, which seccomp cannot
  // read, so it is refused as "not implemented"; glibc (2.34+) then falls
  // back to clone(), whose flags are inspected below. ENOSYS, not EPERM, is
  // what makes the fallback happen.
  if ((rc = b.block("clone3", SCMP_SYS(clone3), ENOSYS)) != 0) {
    failed = "clone3";
    return rc;
  }

  // clone() with any namespace flag. One rule per flag: libseccomp OR-s rules
  // for the same syscall and action, and MASKED_EQ(bit, bit) means "bit set".
  // The kernel only looks at the low 32 bits of clone()'s flags; the mask's
  // high half is zero, so high garbage cannot hide a flag.
  for (const auto& flag : clone_new_flags) {
    const scmp_arg_cmp cmp = arg_cmp(clone_flags_arg, SCMP_CMP_MASKED_EQ, flag.bit, flag.bit);
    if ((rc = b.block_if(SCMP_SYS(clone), &cmp, 1)) != 0) {
      failed = std::string("clone(") + flag.name + ")";
      return rc;
    }
  }
  b.note("clone(CLONE_NEW*): EPERM");

  // ioctl(TIOCSTI) pushes bytes into a terminal's input queue and
  // ioctl(TIOCLINUX) can do the same through the console selection: both let
  // a sandboxed command type commands into the user's shell. ioctl(2)'s
  // request is an unsigned int in the kernel, so compare only its low 32 bits
  // (otherwise setting a high bit would slip past the filter).
  for (const auto& [name, request] :
       {std::pair<const char*, std::uint64_t>{"TIOCSTI", TIOCSTI}, {"TIOCLINUX", TIOCLINUX}}) {
    const scmp_arg_cmp cmp = arg_cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffULL, request);
    if ((rc = b.block_if(SCMP_SYS(ioctl), &cmp, 1)) != 0) {
      failed = std::string("ioctl(") + name + ")";
      return rc;
    }
    b.note(std::string("ioctl(") + name + "): EPERM");
  }

  // personality(2): only PER_LINUX (0) and the query 0xffffffff are allowed.
  // Anything else can turn off ASLR (ADDR_NO_RANDOMIZE) or switch on
  // READ_IMPLIES_EXEC, which weakens exploit mitigations for everything the
  // command then execs. The kernel reads the argument as an unsigned int.
  //
  // libseccomp 2.5 refuses two comparisons on the same argument in one rule
  // (EINVAL), so "not 0 and not 0xffffffff" is written as a union of single
  // comparisons: a 32-bit value is neither all-zero nor all-one exactly when
  // some bit i is set while the next bit (i+1 mod 32) is clear. One
  // MASKED_EQ rule per i; the masks' high halves are zero, so the high 32
  // bits are ignored exactly as the kernel ignores them.
  for (unsigned i = 0; i < 32; ++i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    const std::uint64_t next = std::uint64_t{1} << ((i + 1) % 32);
    const scmp_arg_cmp cmp = arg_cmp(0, SCMP_CMP_MASKED_EQ, bit | next, bit);
    if ((rc = b.block_if(SCMP_SYS(personality), &cmp, 1)) != 0) {
      failed = "personality";
      return rc;
    }
  }
  static_assert(PER_LINUX == 0, "the personality rules assume PER_LINUX is 0");
  b.note("personality(other than PER_LINUX or 0xffffffff query): EPERM");

  // Network denied: the network namespace already has no route out; this
  // also removes the kernel's non-unix socket families (netlink, packet,
  // vsock, bluetooth, ...) as attack surface. socket(2) and socketpair(2)
  // take the domain as arg0. NE compares 64 bits, so only a domain of
  // exactly AF_UNIX passes.
  if (options.deny_setuid_bits && (rc = add_setuid_rules(b, failed)) != 0) return rc;

  if (options.deny_non_unix_sockets && options.allow_inet_sockets) {
    // AF_UNIX (1), AF_INET (2) and AF_INET6 (10) pass; libseccomp takes one
    // comparison per argument in a rule, so the rest is listed as ranges.
    static_assert(AF_UNIX == 1 && AF_INET == 2 && AF_INET6 == 10, "family numbers the rules assume");
    std::vector<scmp_arg_cmp> others = {arg_cmp(0, SCMP_CMP_GT, AF_INET6), arg_cmp(0, SCMP_CMP_EQ, 0)};
    for (std::uint64_t family = 3; family < AF_INET6; ++family) others.push_back(arg_cmp(0, SCMP_CMP_EQ, family));
    for (int nr : {SCMP_SYS(socket), SCMP_SYS(socketpair)}) {
      for (const auto& cmp : others) {
        if ((rc = b.block_if(nr, &cmp, 1, EAFNOSUPPORT)) != 0) {
          failed = "socket";
          return rc;
        }
      }
    }
    b.note("socket(families other than AF_UNIX, AF_INET, AF_INET6): EAFNOSUPPORT");
    b.note("socketpair(families other than AF_UNIX, AF_INET, AF_INET6): EAFNOSUPPORT");
  } else if (options.deny_non_unix_sockets) {
    const scmp_arg_cmp cmp = arg_cmp(0, SCMP_CMP_NE, AF_UNIX);
    if ((rc = b.block_if(SCMP_SYS(socket), &cmp, 1, EAFNOSUPPORT)) != 0) {
      failed = "socket";
      return rc;
    }
    b.note("socket(non-AF_UNIX): EAFNOSUPPORT");
    if ((rc = b.block_if(SCMP_SYS(socketpair), &cmp, 1, EAFNOSUPPORT)) != 0) {
      failed = "socketpair";
      return rc;
    }
    b.note("socketpair(non-AF_UNIX): EAFNOSUPPORT");
  }
  // Filtered network: TCP Fast Open connects inside sendto/sendmsg, where
  // neither the connect(2) notification nor Landlock's connect rule looks.
  // Nobody needs it to reach the broker, so it is refused.
  if (options.allow_inet_sockets) {
    const scmp_arg_cmp sendto_fastopen = arg_cmp(3, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
    const scmp_arg_cmp sendmsg_fastopen = arg_cmp(2, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN);
    const scmp_arg_cmp fastopen_connect[] = {arg_cmp(1, SCMP_CMP_EQ, IPPROTO_TCP),
                                             arg_cmp(2, SCMP_CMP_EQ, TCP_FASTOPEN_CONNECT)};
    if ((rc = b.block_if(SCMP_SYS(sendto), &sendto_fastopen, 1, EOPNOTSUPP)) != 0 ||
        (rc = b.block_if(SCMP_SYS(sendmmsg), &sendto_fastopen, 1, EOPNOTSUPP)) != 0 ||
        (rc = b.block_if(SCMP_SYS(sendmsg), &sendmsg_fastopen, 1, EOPNOTSUPP)) != 0 ||
        (rc = b.block_if(SCMP_SYS(setsockopt), fastopen_connect, 2, ENOPROTOOPT)) != 0) {
      failed = "TCP Fast Open";
      return rc;
    }
    b.note("sendto, sendmsg, sendmmsg with MSG_FASTOPEN: EOPNOTSUPP");
    b.note("setsockopt(IPPROTO_TCP, TCP_FASTOPEN_CONNECT): ENOPROTOOPT");
  }
  // No network namespace (linux-os-sandbox, filtered): an IP socket is the
  // host's, so only TCP streams are made (their one way out, connect(2), is
  // the supervisor's below) and listen(2) goes to the supervisor, which
  // listens for AF_UNIX sockets only (violations.cpp). The type is arg1's
  // low 4 bits, the protocol arg2 (0 or IPPROTO_TCP pass); one comparison
  // per argument and rule, so one rule per refused value or range.
  if (options.allow_inet_sockets && options.inet_stream_only && options.notify) {
    static_assert(IPPROTO_IP == 0 && IPPROTO_TCP == 6, "protocol numbers the rules assume");
    for (std::uint64_t family : {std::uint64_t{AF_INET}, std::uint64_t{AF_INET6}}) {
      std::vector<std::vector<scmp_arg_cmp>> refused;
      for (std::uint64_t type = 0; type <= 0xf; ++type) {
        if (type != SOCK_STREAM) refused.push_back({arg_cmp(0, SCMP_CMP_EQ, family), arg_cmp(1, SCMP_CMP_MASKED_EQ, 0xf, type)});
      }
      refused.push_back({arg_cmp(0, SCMP_CMP_EQ, family), arg_cmp(2, SCMP_CMP_GT, IPPROTO_TCP)});
      for (std::uint64_t protocol = 1; protocol < IPPROTO_TCP; ++protocol) {
        refused.push_back({arg_cmp(0, SCMP_CMP_EQ, family), arg_cmp(2, SCMP_CMP_EQ, protocol)});
      }
      for (const auto& cmps : refused) {
        if ((rc = b.block_if(SCMP_SYS(socket), cmps.data(), static_cast<unsigned>(cmps.size()), EAFNOSUPPORT)) != 0) {
          failed = "IP sockets other than TCP streams";
          return rc;
        }
      }
    }
    if ((rc = b.block_if(SCMP_SYS(listen), nullptr, 0, EACCES)) != 0) {
      failed = "listen";
      return rc;
    }
    program.listen_checked = true;
    b.note("socket(AF_INET/AF_INET6, any type but SOCK_STREAM, or a protocol but 0 and IPPROTO_TCP): EAFNOSUPPORT");
    b.note("listen(AF_INET/AF_INET6): EACCES, recorded by the supervisor (AF_UNIX: performed by the supervisor)");
  }
  if ((options.notify_connect || options.notify_unix_connect) && options.notify) {
    if ((rc = b.block_if(SCMP_SYS(connect), nullptr, 0, EACCES)) != 0) {
      failed = "connect";
      return rc;
    }
    program.connect_notified = true;
    if (options.notify_connect) {
      program.broker_port = options.broker_port;
      program.allow_loopback_connect = options.allow_loopback_connect;
      // One note for both uses of the variant (seccomp_programs.h): which
      // destinations pass is the supervisor's, from the program's fields.
      b.note(std::string("connect(AF_INET/AF_INET6): performed by the supervisor to the sandbox's own loopback "
                         "(network denied, or allow_local_binding), to the broker's 127.0.0.1:") +
             std::to_string(options.broker_port) +
             " or TCP routed to it (filtered); any other destination: EACCES, recorded by the supervisor");
    }
  }
  // Named unix sockets are checked at connect(2) (unix_connect.h). A
  // datagram socket reaches a named socket without connect, through the
  // address of sendto/sendmsg, which a filter cannot read: AF_UNIX sockets
  // are made only of the two connected types. An allow list, not a deny of
  // SOCK_DGRAM: the kernel turns an AF_UNIX SOCK_RAW into a datagram socket
  // (net/unix/af_unix.c, unix_create). The type is arg1's low 4 bits
  // (SOCK_TYPE_MASK; the rest are SOCK_CLOEXEC and SOCK_NONBLOCK), one rule
  // per other value because libseccomp takes one comparison per argument.
  if (options.notify_unix_connect && options.notify) {
    static_assert(SOCK_STREAM == 1 && SOCK_SEQPACKET == 5, "socket type numbers the rules assume");
    for (std::uint64_t type = 0; type <= 0xf; ++type) {
      if (type == SOCK_STREAM || type == SOCK_SEQPACKET) continue;
      const scmp_arg_cmp other[] = {arg_cmp(0, SCMP_CMP_EQ, AF_UNIX), arg_cmp(1, SCMP_CMP_MASKED_EQ, 0xf, type)};
      if ((rc = b.block_if(SCMP_SYS(socket), other, 2, EAFNOSUPPORT)) != 0 ||
          (rc = b.block_if(SCMP_SYS(socketpair), other, 2, EAFNOSUPPORT)) != 0) {
        failed = "unix sockets other than stream and seqpacket";
        return rc;
      }
    }
    program.unix_connect_checked = true;
    b.note("connect(AF_UNIX to a named socket not in filesystem.unix_sockets): EACCES, recorded by the supervisor");
    b.note("socket(AF_UNIX, any type but SOCK_STREAM and SOCK_SEQPACKET), socketpair(the same): EAFNOSUPPORT");
  }
  // A read-only path inside a writable directory: renaming over it or
  // removing it is EBUSY from the kernel (a mount point); the supervisor
  // answers EROFS and records it, and lets every other call continue
  // (mount_point_changes.h). Not a block: listed as a note.
  if (options.notify_mount_point_changes && options.notify) {
    for (const int nr : {SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(unlink),
                         SCMP_SYS(unlinkat), SCMP_SYS(rmdir)}) {
      if (nr < 0) continue;  // not on this architecture (aarch64 has only the *at forms)
      if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0)) != 0) {
        failed = "renames and removals";
        return rc;
      }
    }
    program.mount_point_changes_checked = true;
    b.note("rename/renameat/renameat2/unlink/unlinkat/rmdir of a mount point (a protected or denied path inside a "
           "writable root): EROFS, recorded by the supervisor; any other path: continued");
  }
  // A read-only bind inside a writable directory: a write into it is EROFS
  // from the mount; the supervisor records it (protected_writes.h) and lets
  // every other call continue. Only opens that may write reach it: one rule
  // per flag bit, "flags & bit == bit", OR-ed by libseccomp; a read-only
  // open (O_RDONLY, with or without O_APPEND, which alone writes nothing)
  // never leaves the kernel. open(2) takes its flags as an int: the masks'
  // high halves are zero. openat2's flags are in memory, creat and truncate
  // always write. Not a block: listed as a note.
  if (options.notify_protected_writes && options.notify) {
    struct flags_rule {
      int nr;
      unsigned flags_arg;
    };
    for (const flags_rule& rule : {flags_rule{SCMP_SYS(open), 1}, flags_rule{SCMP_SYS(openat), 2}}) {
      if (rule.nr < 0) continue;  // aarch64 has only openat
      for (const std::uint64_t bit : {std::uint64_t{O_WRONLY}, std::uint64_t{O_RDWR}, std::uint64_t{O_CREAT},
                                      std::uint64_t{O_TRUNC}}) {
        const scmp_arg_cmp cmp = arg_cmp(rule.flags_arg, SCMP_CMP_MASKED_EQ, bit, bit);
        if ((rc = seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, rule.nr, 1, &cmp)) != 0) {
          failed = "opens for writing";
          return rc;
        }
      }
    }
    for (const int nr : {SCMP_SYS(creat), SCMP_SYS(openat2), SCMP_SYS(truncate)}) {
      if (nr < 0) continue;
      // openat2 is already notified for root callers (ENOSYS above): one rule is enough.
      if (options.deny_setuid_bits && nr == SCMP_SYS(openat2)) continue;
      if ((rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0)) != 0) {
        failed = "creat, openat2, truncate";
        return rc;
      }
    }
    program.protected_writes_checked = true;
    b.note("open/openat with O_WRONLY, O_RDWR, O_CREAT or O_TRUNC, creat, openat2, truncate of a protected path "
           "(a read-only bind inside a writable root): EROFS, recorded by the supervisor; any other path: continued");
  }
  return 0;
}

}  // namespace

result<seccomp_program> build_seccomp_program_with_libseccomp(const seccomp_options& options, seccomp_layout layout) {
  ctx_ptr ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return make_error(error_code::launch_failed, "seccomp: seccomp_init failed");

  // Only the native architecture is in the filter. Syscalls made through
  // another ABI (int 0x80 i386 calls from an x86_64 process) carry another
  // AUDIT_ARCH value and get the bad-arch action: kill the whole process.
  // On x86_64, libseccomp also sends native-arch syscall numbers with the x32
  // bit (0x40000000) to the bad-arch action, so x32 calls are killed too
  // (tests/unit/linux/seccomp_filter_test.cpp checks this).
  int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc != 0) return seccomp_error("seccomp_attr_set(ACT_BADARCH)", rc);

  // A binary tree of syscall numbers instead of libseccomp's default linear
  // list: the same decisions (tests/unit/linux/seccomp_filter_test.cpp compares
  // both on every syscall), fewer instructions per call, and about half the
  // time to install, because the kernel runs the program once for each
  // syscall number to build its cache of always-allowed calls.
  if (layout == seccomp_layout::binary_tree) {
    rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (rc != 0) return seccomp_error("seccomp_attr_set(CTL_OPTIMIZE)", rc);
  }

  seccomp_program program;
  program.notify = options.notify;
  program.blocked.push_back("syscalls of other ABIs (i386, x32 on x86_64): KILL_PROCESS");
  std::string failed;
  rc = add_rules(ctx.get(), options, program, failed);
  if (rc != 0) return seccomp_error("rule for " + failed, rc);

  // Export through a memfd: seccomp_export_bpf(3) writes to a descriptor.
  fd_closer mem;
  mem.fd = memfd_create("cordon-seccomp", MFD_CLOEXEC);
  if (mem.fd < 0) {
    return make_error(error_code::launch_failed, "seccomp: memfd_create failed", {}, errno);
  }
  rc = seccomp_export_bpf(ctx.get(), mem.fd);
  if (rc != 0) return seccomp_error("seccomp_export_bpf", rc);

  struct stat st {};
  if (::fstat(mem.fd, &st) != 0) {
    return make_error(error_code::launch_failed, "seccomp: fstat(memfd) failed", {}, errno);
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0 || size % sizeof(sock_filter) != 0 || size / sizeof(sock_filter) > BPF_MAXINSNS) {
    return make_error(
        error_code::launch_failed,
        "seccomp: exported program has an unexpected size of " + std::to_string(size) + " bytes");
  }
  program.bpf.resize(size / sizeof(sock_filter));
  auto* out = reinterpret_cast<char*>(program.bpf.data());
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(mem.fd, out + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return make_error(error_code::launch_failed, "seccomp: reading the exported program failed",
                        {}, n < 0 ? errno : EIO);
    }
    done += static_cast<std::size_t>(n);
  }
  return program;
}

std::string libseccomp_syscall_name(int syscall_nr) {
  char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, syscall_nr);
  if (name == nullptr) return {};
  std::string out = name;
  std::free(name);
  return out;
}

}  // namespace cordon::linux_impl

// landlock.cpp — Landlock as the second filesystem (and TCP) layer.
//
// Kernel documents: Documentation/userspace-api/landlock.rst and
// include/uapi/linux/landlock.h; man pages landlock(7),
// landlock_create_ruleset(2), landlock_add_rule(2), landlock_restrict_self(2).
//
// The syscalls are made directly: glibc has no wrappers, and Debian 12's
// linux-libc-dev (6.1) knows only ABI 1-2, so newer constants and the larger
// ruleset attribute are defined here from the kernel's uapi header.

#include "linux/landlock.h"

#include "posix/unique_fd.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>

// Syscall numbers are the same on every architecture (generic table, 5.13+).
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

namespace cordon::linux_impl {
namespace {

// The uapi constants and structs, from include/uapi/linux/landlock.h. They
// are defined here rather than taken from <linux/landlock.h> for two reasons:
// Debian 12's linux-libc-dev (6.1) stops at ABI 2, and this directory's own
// landlock.h shadows the system header under the project's include path.
constexpr unsigned create_ruleset_version = 1U << 0;  // LANDLOCK_CREATE_RULESET_VERSION
constexpr int rule_path_beneath = 1;                  // LANDLOCK_RULE_PATH_BENEATH

// ABI 1
constexpr std::uint64_t fs_execute = 1ULL << 0;
constexpr std::uint64_t fs_write_file = 1ULL << 1;
constexpr std::uint64_t fs_read_file = 1ULL << 2;
constexpr std::uint64_t fs_read_dir = 1ULL << 3;
constexpr std::uint64_t fs_remove_dir = 1ULL << 4;
constexpr std::uint64_t fs_remove_file = 1ULL << 5;
constexpr std::uint64_t fs_make_char = 1ULL << 6;
constexpr std::uint64_t fs_make_dir = 1ULL << 7;
constexpr std::uint64_t fs_make_reg = 1ULL << 8;
constexpr std::uint64_t fs_make_sock = 1ULL << 9;
constexpr std::uint64_t fs_make_fifo = 1ULL << 10;
constexpr std::uint64_t fs_make_block = 1ULL << 11;
constexpr std::uint64_t fs_make_sym = 1ULL << 12;
// ABI 2
constexpr std::uint64_t fs_refer = 1ULL << 13;
// ABI 3
constexpr std::uint64_t fs_truncate = 1ULL << 14;
// ABI 4
constexpr std::uint64_t net_bind_tcp = 1ULL << 0;
constexpr std::uint64_t net_connect_tcp = 1ULL << 1;
// ABI 5
constexpr std::uint64_t fs_ioctl_dev = 1ULL << 15;
// ABI 6
constexpr std::uint64_t scope_abstract_unix_socket = 1ULL << 0;
constexpr std::uint64_t scope_signal = 1ULL << 1;

// struct landlock_path_beneath_attr: packed in the uapi header, 12 bytes.
struct __attribute__((packed)) path_beneath_attr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};
static_assert(sizeof(path_beneath_attr) == 12, "must match the kernel's layout");

// struct landlock_net_port_attr (ABI 4), LANDLOCK_RULE_NET_PORT.
struct net_port_attr {
  std::uint64_t allowed_access;
  std::uint64_t port;
};
constexpr int rule_net_port = 2;

// struct landlock_ruleset_attr as of ABI 6. The kernel reads only the size
// we pass (copy_struct_from_user), so the size is chosen per ABI below: an
// older kernel rejects a larger struct unless the extra bytes are zero, and
// passing exactly what the ABI knows keeps that question out of the way.
struct ruleset_attr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;  // ABI 4
  std::uint64_t scoped;              // ABI 6
};
static_assert(sizeof(ruleset_attr) == 24, "must match the kernel's layout");

std::size_t ruleset_attr_size(int abi) noexcept {
  if (abi >= 6) return sizeof(ruleset_attr);
  if (abi >= 4) return offsetof(ruleset_attr, scoped);
  return offsetof(ruleset_attr, handled_access_net);
}

// The highest ABI whose rights this file knows. A newer kernel still gets a
// valid ruleset (the rights of ABI 7); rights it adds later stay unhandled
// until they are added here.
constexpr int known_abi = 7;

constexpr std::uint64_t fs_rights_abi1 = fs_execute | fs_write_file | fs_read_file | fs_read_dir |
                                         fs_remove_dir | fs_remove_file | fs_make_char |
                                         fs_make_dir | fs_make_reg | fs_make_sock | fs_make_fifo |
                                         fs_make_block | fs_make_sym;

// Every filesystem right the ABI can handle. Handling all of them makes the
// ruleset deny-by-default for the filesystem (landlock.rst, "Filesystem
// flags": unhandled rights stay allowed).
std::uint64_t handled_fs(int abi) noexcept {
  std::uint64_t rights = fs_rights_abi1;
  if (abi >= 2) rights |= fs_refer;
  if (abi >= 3) rights |= fs_truncate;
  if (abi >= 5) rights |= fs_ioctl_dev;
  return rights;
}

// The rights that apply to a file (not a directory). landlock_add_rule(2)
// fails with EINVAL when a rule on a non-directory carries a directory-only
// right (landlock.rst: "A file can only receive these access rights").
constexpr std::uint64_t file_rights =
    fs_execute | fs_write_file | fs_read_file | fs_truncate | fs_ioctl_dev;

std::uint64_t rights_for(landlock_access access, int abi) noexcept {
  switch (access) {
    case landlock_access::read: return fs_read_file | fs_read_dir | fs_execute;
    case landlock_access::read_write: return handled_fs(abi);
    case landlock_access::device: {
      std::uint64_t rights = fs_read_file | fs_read_dir | fs_write_file;
      if (abi >= 5) rights |= fs_ioctl_dev;
      return rights;
    }
    case landlock_access::list_directory: return fs_read_dir;
  }
  return 0;
}

int effective_abi(int abi) noexcept { return abi > known_abi ? known_abi : abi; }

void set_failed_path(std::string* failed_path, const std::string& path) noexcept {
  if (failed_path == nullptr) return;
  try {
    failed_path->assign(path);  // no allocation when the caller reserved capacity
  } catch (...) {
    // Out of memory while reporting an error: the errno is still returned.
  }
}

}  // namespace

const char* landlock_access_name(landlock_access access) noexcept {
  switch (access) {
    case landlock_access::read: return "read";
    case landlock_access::read_write: return "read_write";
    case landlock_access::device: return "device";
    case landlock_access::list_directory: return "list_directory";
  }
  return "unknown";
}

std::string landlock_ruleset_plan::describe() const {
  if (abi <= 0) return "landlock: not used";
  const int eff = effective_abi(abi);
  std::string out = "landlock abi " + std::to_string(abi) + ": fs(read,write";
  if (eff >= 2) out += ",refer";
  if (eff >= 3) out += ",truncate";
  if (eff >= 5) out += ",ioctl_dev";
  out += ")";
  if (restrict_tcp && eff >= 4) {
    out += " tcp(bind,connect";
    for (std::size_t i = 0; i < tcp_connect_ports.size(); ++i) {
      out += (i == 0 ? "; connect only to port " : ", ") + std::to_string(tcp_connect_ports[i]);
    }
    out += ")";
  }
  if (scope_signals_and_abstract_sockets && eff >= 6) out += " scope(signal,abstract_unix)";
  return out;
}

int landlock_kernel_abi() noexcept {
  // landlock_create_ruleset(2): with LANDLOCK_CREATE_RULESET_VERSION, a null
  // attribute and size 0, returns the highest supported ABI. ENOSYS (not
  // built) and EOPNOTSUPP (built but disabled at boot) both mean "none".
  const long abi = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, create_ruleset_version);
  if (abi <= 0) return 0;
  return static_cast<int>(abi);
}

int apply_landlock(const landlock_ruleset_plan& plan, std::string* failed_path, int* failed_rule) noexcept {
  // abi 0 means the plan does not use Landlock (see landlock.h); nothing to do.
  if (plan.abi <= 0) return 0;
  const int abi = effective_abi(plan.abi);

  // Everything below works on the stack and on the plan's existing strings:
  // this runs in the child between clone and exec, where the heap may be in
  // the state another parent thread left it.
  ruleset_attr attr{};
  attr.handled_access_fs = handled_fs(abi);
  if (plan.restrict_tcp && abi >= 4) {
    // Handled with no rule: every TCP bind and connect is denied (EACCES).
    attr.handled_access_net = net_bind_tcp | net_connect_tcp;
  }
  if (plan.scope_signals_and_abstract_sockets && abi >= 6) {
    // No signals to, and no abstract unix connections to, processes outside
    // this Landlock domain (landlock.rst, "Scoping").
    attr.scoped = scope_abstract_unix_socket | scope_signal;
  }

  const long created = ::syscall(__NR_landlock_create_ruleset, &attr, ruleset_attr_size(abi), 0U);
  if (created < 0) return errno;
  const unique_fd ruleset{static_cast<int>(created)};

  for (const landlock_path_rule& rule : plan.rules) {
    const unique_fd target{::open(rule.path.c_str(), O_PATH | O_CLOEXEC)};
    if (target.get() < 0) {
      const int err = errno;
      if (err == ENOENT) continue;  // documented: missing paths are skipped
      set_failed_path(failed_path, rule.path);
      if (failed_rule != nullptr) *failed_rule = static_cast<int>(&rule - plan.rules.data());
      return err;
    }
    struct stat st {};
    if (::fstat(target.get(), &st) != 0) {  // fstat works on O_PATH descriptors
      const int err = errno;
      set_failed_path(failed_path, rule.path);
      if (failed_rule != nullptr) *failed_rule = static_cast<int>(&rule - plan.rules.data());
      return err;
    }
    std::uint64_t allowed = rights_for(rule.access, abi) & attr.handled_access_fs;
    if (!S_ISDIR(st.st_mode)) allowed &= file_rights;
    if (allowed == 0) continue;

    path_beneath_attr beneath{};
    beneath.allowed_access = allowed;
    beneath.parent_fd = target.get();
    if (::syscall(__NR_landlock_add_rule, ruleset.get(), rule_path_beneath, &beneath, 0U) != 0) {
      const int err = errno;
      set_failed_path(failed_path, rule.path);
      if (failed_rule != nullptr) *failed_rule = static_cast<int>(&rule - plan.rules.data());
      return err;
    }
  }

  if (plan.restrict_tcp && abi >= 4) {
    for (std::uint16_t port : plan.tcp_connect_ports) {
      net_port_attr rule{net_connect_tcp, port};
      if (::syscall(__NR_landlock_add_rule, ruleset.get(), rule_net_port, &rule, 0U) != 0) return errno;
    }
  }

  // landlock_restrict_self(2) requires no_new_privs or CAP_SYS_ADMIN in the
  // caller's user namespace; the launcher sets no_new_privs first.
  if (::syscall(__NR_landlock_restrict_self, ruleset.get(), 0U) != 0) return errno;
  return 0;
}

}  // namespace cordon::linux_impl

// seccomp_programs.h — the baseline seccomp filter, prebuilt.
//
// cordon_seccomp_gen (src/linux/gen/) builds the filter with libseccomp at
// build time, once per combination of seccomp_options, and writes the
// exported BPF programs, their rule lists and the native syscall names into
// a generated source. A launch only copies the program it needs: no
// libseccomp in the process, no rule compilation per run.
// tests/unit/linux/seccomp_filter_test.cpp checks the tables against libseccomp.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <iterator>

#include "core/broker_endpoint.h"
#include "linux/seccomp_filter.h"

namespace cordon::linux_impl {

inline constexpr unsigned seccomp_variant_count = 256;

// Variant index: bit 0 deny_non_unix_sockets, bit 1 deny_setuid_bits, bit 2
// notify, bit 3 inet sockets (allow_inet_sockets and notify_connect, always
// together: network denied in the sandbox's own namespace, or filtered),
// bit 4 notify_unix_connect, bit 5 inet_stream_only, bit 6
// notify_mount_point_changes, bit 7 notify_protected_writes. The broker's port (fixed, or 0 in denied mode)
// is the supervisor's to read, not the filter's.
constexpr unsigned seccomp_variant_index(const seccomp_options& options) noexcept {
  return (options.deny_non_unix_sockets ? 1U : 0U) | (options.deny_setuid_bits ? 2U : 0U) |
         (options.notify ? 4U : 0U) | (options.allow_inet_sockets ? 8U : 0U) |
         (options.notify_unix_connect ? 16U : 0U) | (options.inet_stream_only ? 32U : 0U) |
         (options.notify_mount_point_changes ? 64U : 0U) | (options.notify_protected_writes ? 128U : 0U);
}

constexpr seccomp_options seccomp_options_for_variant(unsigned index) noexcept {
  seccomp_options options;
  options.deny_non_unix_sockets = (index & 1U) != 0;
  options.deny_setuid_bits = (index & 2U) != 0;
  options.notify = (index & 4U) != 0;
  options.allow_inet_sockets = options.notify_connect = (index & 8U) != 0;
  options.broker_port = options.notify_connect ? broker_port : 0;
  options.notify_unix_connect = (index & 16U) != 0;
  options.inet_stream_only = (index & 32U) != 0;
  options.notify_mount_point_changes = (index & 64U) != 0;
  options.notify_protected_writes = (index & 128U) != 0;
  return options;
}

// Can these options be served by a prebuilt variant? (The broker's port is
// the supervisor's to read: a launch may set program.broker_port to the port
// its broker listens on, as linux-os-sandbox does.)
constexpr bool seccomp_options_prebuilt(const seccomp_options& options) noexcept {
  return options.allow_inet_sockets == options.notify_connect &&
         (options.broker_port == 0 || (options.notify_connect && options.broker_port == broker_port));
}

namespace generated {

struct syscall_errno {
  int nr;
  int err;
};

struct seccomp_variant {
  const sock_filter* bpf;
  std::size_t bpf_size;
  const char* const* blocked;
  std::size_t blocked_size;
  const syscall_errno* errnos;  // with notify: the errno each notified syscall fails with
  std::size_t errnos_size;
};

extern const seccomp_variant variants[seccomp_variant_count];
// libseccomp's name for each native syscall number below syscall_name_count (nullptr: none).
extern const char* const* const syscall_names;
extern const std::size_t syscall_name_count;

}  // namespace generated
}  // namespace cordon::linux_impl

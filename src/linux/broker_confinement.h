// broker_confinement.h — the least authority the broker's own process keeps
// (docs/network.md, "The broker's process"): its open descriptors, a
// bounded descriptor limit, no capability, no_new_privs, no filesystem
// (Landlock handling every filesystem right with no rule, and signals and
// abstract unix sockets scoped to itself where the ABI has scopes), and a
// seccomp allowlist (broker_seccomp.h).
#pragma once

#include <sys/resource.h>

#include <string>

namespace cordon::linux_impl {

// Confines the calling process, which must be single-threaded (seccomp and
// Landlock apply to the calling thread; nothing else runs): RLIMIT_NOFILE
// soft and hard to `max_files`, every capability dropped (when it has any:
// an unprivileged supervisor has none to drop), PR_SET_NO_NEW_PRIVS,
// Landlock (when the kernel has it: the seccomp allowlist has no open call
// either way), then the seccomp allowlist. Irreversible. Returns what failed
// and its errno as text, or empty. Fails closed: seccomp that cannot be
// loaded is a failure.
std::string confine_broker_process(rlim_t max_files);

}  // namespace cordon::linux_impl

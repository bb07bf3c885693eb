// cordon/linux_backend.h — the Linux namespace backend.
//
// Mechanisms: user, mount, PID, network, IPC and UTS namespaces; a fresh root
// built from bind mounts; Landlock (best ABI the kernel offers) as a second
// filesystem layer; a seccomp filter built with libseccomp; no_new_privs; an
// empty capability set; a new session; descriptors above stderr closed; the
// PID namespace and a supervisor for tree cleanup and the timeout.
// docs/linux-backend.md describes each step and what is lost without privilege.
#pragma once

#include <memory>

#include "cordon/backend.h"

namespace cordon {

inline constexpr std::string_view linux_backend_name = "linux-namespaces";

std::unique_ptr<sandbox_backend> make_linux_backend();

// The os_sandbox backend, for where user namespaces are closed (containers,
// bubblewrap --disable-userns, sysctls, AppArmor's restriction): Landlock
// (best ABI) for the filesystem and TCP, seccomp for socket families and the
// kernel surface, no_new_privs, rlimits or a cgroup, a child subreaper for
// the tree, a clean environment, a per-run temporary directory. Isolation
// os_sandbox; docs/linux-backend.md, "Without namespaces".
inline constexpr std::string_view linux_os_sandbox_backend_name = "linux-os-sandbox";

std::unique_ptr<sandbox_backend> make_linux_os_sandbox_backend();

}  // namespace cordon

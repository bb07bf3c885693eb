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

}  // namespace cordon

// os_sandbox_facts.h — the host facts as the os_sandbox backend reads them,
// and what would let the namespace backend run instead.
#pragma once

#include <string>

#include "cordon/linux_host_facts.h"

namespace cordon::linux_impl {

// `facts` (read_linux_host_facts) with gate 2 decided for linux-os-sandbox:
// available with Landlock and seccomp; the namespace backend's blocker, with
// what an administrator can change, moved to stronger_backend_blocker.
host_facts os_sandbox_facts(host_facts facts);

// What an administrator can change so that user namespaces work, for the
// cause `blocker` names (read_linux_host_facts, try_namespaces); empty when
// the cause is not recognised.
std::string user_namespace_remedy(const std::string& blocker);

}  // namespace cordon::linux_impl

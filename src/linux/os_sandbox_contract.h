// os_sandbox_contract.h — what each control is under the os_sandbox backend
// for one policy on this host (docs/linux-backend.md, "Without namespaces").
#pragma once

#include "cordon/enforcement.h"
#include "cordon/linux_host_facts.h"
#include "cordon/policy.h"
#include "linux/os_sandbox_plan.h"
#include "linux/process_limits.h"

namespace cordon::linux_impl {

// Called by build() with the payload it just chose: every level is what the
// launcher applies (os_sandbox_launch.h, os_sandbox_child.h).
enforcement_contract os_sandbox_contract(const sandbox_policy& policy, const os_sandbox_payload& payload,
                                         const host_facts& facts, const linux_host_facts& linux_facts);

}  // namespace cordon::linux_impl

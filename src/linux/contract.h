// contract.h — what each control will be for one policy on this host.
#pragma once

#include "cordon/enforcement.h"
#include "cordon/policy.h"
#include "linux/host_facts.h"
#include "linux/linux_plan.h"

namespace cordon::linux_impl {

// The contract a run of `payload` under `policy` will have, given the host:
// called by build() with the payload it just chose, so the levels are stated
// beside the choices. Every level here is what the launcher really applies,
// never a hope.
enforcement_contract linux_contract(const sandbox_policy& policy, const linux_plan_payload& payload,
                                    const linux_host_facts& facts);

}  // namespace cordon::linux_impl

// process_limits.h — memory, process count and CPU limits: a cgroup for the
// whole tree where this user may create one, else a per-process rlimit
// (partial). Shared by both Linux backends (docs/linux-backend.md, "Limits").
#pragma once

#include <vector>

#include "cordon/enforcement.h"
#include "cordon/linux_host_facts.h"
#include "cordon/policy.h"
#include "linux/cgroups.h"
#include "linux/linux_plan.h"

namespace cordon::linux_impl {

struct process_limits_plan {
  std::vector<rlimit_setting> rlimits;  // per process, applied before exec; RLIMIT_CORE last
  cgroup_site cgroups;                  // where the run's cgroup goes (empty: none)
  cgroup_limits tree_limits;            // the limits that cgroup holds
};

// The mechanisms for the policy's limits on a host with `facts`. Pure.
process_limits_plan choose_process_limits(const process_policy& limits, const host_facts& facts,
                                          const linux_host_facts& linux_facts);

// States process_count, memory and cpu in `contract` for what `plan` applies.
void state_limit_levels(const sandbox_policy& policy, const process_limits_plan& plan, enforcement_contract& contract);

}  // namespace cordon::linux_impl

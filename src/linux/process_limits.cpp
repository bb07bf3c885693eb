// process_limits.cpp — the limits' mechanisms and their levels (process_limits.h).
#include "linux/process_limits.h"

#include <string>

namespace cordon::linux_impl {

process_limits_plan choose_process_limits(const process_policy& limits, const host_facts& facts,
                                          const linux_host_facts& linux_facts) {
  process_limits_plan out;
  if (limits.memory_bytes || limits.max_processes || limits.cpu_seconds) out.cgroups = linux_facts.cgroups;
  if (limits.memory_bytes) {
    if (!out.cgroups.memory_parent.empty()) {
      out.tree_limits.memory_bytes = limits.memory_bytes;
    } else {
      // RLIMIT_DATA, not RLIMIT_AS: address space counts reservations that hold
      // no memory (V8, Go and the JVM reserve gigabytes with PROT_NONE), so
      // RLIMIT_AS at 512M kills `node -e 1`; RLIMIT_DATA (Linux 4.7+) counts
      // each process's private writable mappings, which is what it allocates.
      out.rlimits.push_back({RLIMIT_DATA, *limits.memory_bytes});
    }
  }
  if (limits.cpu_seconds) {
    if (!out.cgroups.cpu_parent.empty()) {
      out.tree_limits.cpu_seconds = limits.cpu_seconds;
    } else {
      out.rlimits.push_back({RLIMIT_CPU, *limits.cpu_seconds});
    }
  }
  if (limits.max_processes) {
    if (!out.cgroups.pids_parent.empty()) {
      out.tree_limits.max_processes = limits.max_processes;
    } else if (facts.uid != 0) {
      // The kernel never applies RLIMIT_NPROC to the host's root user (fork.c), so it is no limit there.
      out.rlimits.push_back({RLIMIT_NPROC, *limits.max_processes});
    }
  }
  // No core dumps unless the policy asks (process.core_dumps): hard and soft
  // 0, which the command cannot raise (raising a hard limit takes
  // CAP_SYS_RESOURCE in the host's user namespace). Last, so that the
  // indexes of the limits above stay what their errors name.
  if (!limits.core_dumps) out.rlimits.push_back({RLIMIT_CORE, 0});
  return out;
}

void state_limit_levels(const sandbox_policy& policy, const process_limits_plan& plan, enforcement_contract& c) {
  using L = enforcement_level;
  const std::string version = plan.cgroups.v2 ? "cgroup v2 " : "cgroup v1 ";
  auto limit = [&](control which, bool set, bool in_cgroup, int resource, const std::string& cgroup_mechanism) {
    if (!set) {
      c[which] = {L::not_applicable, "", "no limit set"};
      return;
    }
    if (in_cgroup) {
      c[which] = {L::enforced, version + cgroup_mechanism, ""};
      return;
    }
    bool applied = false;
    for (const auto& r : plan.rlimits) applied = applied || r.resource == resource;
    std::string why = plan.cgroups.blocker.empty() ? "" : "; " + plan.cgroups.blocker;
    // A process that reaches RLIMIT_DATA sees its allocation fail (ENOMEM) and
    // nothing else happens that the supervisor could observe: the report
    // cannot mark a hit, and says so.
    const std::string hit = which == control::memory ? "; each process's private writable memory (RLIMIT_DATA), and "
                                                       "a hit is a failed allocation inside that process, which "
                                                       "limits_hit.memory cannot show; the sandbox's tmpfs mounts "
                                                       "(/dev/shm, a private /tmp) hold at most the limit each, "
                                                       "and the tree as a whole is not bounded"
                                                     : "";
    c[which] = applied ? control_status{L::partial, std::string("rlimit (") + rlimit_name(resource) + ")",
                                        "per-process rlimit only, not tree-wide" + hit + why}
                       : control_status{L::not_enforced, "",
                                        "RLIMIT_NPROC does not apply to the host's root user, and no cgroup is usable" +
                                            why};
  };
  limit(control::process_count, policy.process.max_processes.has_value(), plan.tree_limits.max_processes.has_value(),
        RLIMIT_NPROC, plan.cgroups.v2 ? "pids.max" : "pids controller (pids.max)");
  limit(control::memory, policy.process.memory_bytes.has_value(), plan.tree_limits.memory_bytes.has_value(),
        RLIMIT_DATA, plan.cgroups.v2 ? "memory.max" : "memory controller (memory.limit_in_bytes)");
  limit(control::cpu, policy.process.cpu_seconds.has_value(), plan.tree_limits.cpu_seconds.has_value(), RLIMIT_CPU,
        std::string(plan.cgroups.v2 ? "cpu.stat" : "cpuacct.usage") +
            " of the tree; the supervisor kills the tree at the limit");
}

}  // namespace cordon::linux_impl

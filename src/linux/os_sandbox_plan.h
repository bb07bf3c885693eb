// os_sandbox_plan.h — the compiled state of the os_sandbox backend
// (linux-os-sandbox: Landlock + seccomp, no namespaces), carried by a
// sandbox_plan. Built once at compile time; read-only afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cordon/plan.h"
#include "linux/landlock.h"
#include "linux/post_run_watch.h"
#include "linux/process_limits.h"
#include "linux/seccomp_filter.h"

namespace cordon::linux_impl {

inline constexpr std::uint32_t os_sandbox_plan_format_version = 1;

// The post-run repository scan's state (linux/post_run_watch.h) is a base,
// as in the namespace backend.
struct os_sandbox_payload final : plan_payload, post_run_watch {
  // The Landlock rules, seccomp variant and limits, one line each.
  std::string describe() const override;

  landlock_ruleset_plan landlock;  // filesystem rules (resolved host paths), TCP, scopes
  seccomp_program seccomp;         // plain SECCOMP_RET_ERRNO rules (no supervisor answers them)
  // {run_tmp}: a directory made for the run under the host's temporary
  // directory, writable, named by TMPDIR (and HOME when the policy sets it to
  // /tmp), removed after the run.
  bool run_tmp = false;
  process_limits_plan limits;
  // Filtered network: the broker on a host loopback port, chosen at launch
  // (os_sandbox_network.h); seccomp.broker_port and the proxy variables are
  // set to it then.
  bool network_broker = false;
  std::vector<std::string> split;  // directories granted entry by entry (os_sandbox_landlock.h)
};

}  // namespace cordon::linux_impl

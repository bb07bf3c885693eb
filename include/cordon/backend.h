// cordon/backend.h — the backend interface: probe, compile, launch.
//
// probe() is advice; compile() is the authority (DESIGN.md, "Backends").
// compile() runs four gates in order and stops at the first that fails:
//   1. validate and normalize          -> error_code::invalid_policy
//   2. backend available on this host  -> backend_unavailable / unsupported_platform
//   3. isolation level sufficient      -> isolation_insufficient
//   4. every required control met      -> enforcement_unavailable
// There is no path that launches a command without a plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/enforcement.h"
#include "cordon/launch.h"
#include "cordon/plan.h"
#include "cordon/policy.h"
#include "cordon/policy_json.h"
#include "cordon/result.h"

namespace cordon {

// Why a control cannot reach the level a policy requires.
struct blocker {
  std::string control;    // a control's name, or "backend" / "isolation" for gates 2-3
  std::string required;   // e.g. "enforced", "container"
  std::string available;  // e.g. "partial", "os_sandbox"
  std::string reason;     // one line naming the missing mechanism
};

struct host_capabilities {
  std::string platform;           // "linux", "macos", "windows"
  std::string backend;            // backend name, e.g. "linux-namespaces"
  bool available = false;
  isolation_level isolation = isolation_level::none;
  enforcement_contract best;      // best level per control on this host, for this user
  std::vector<blocker> blockers;  // what keeps a control below `enforced`
  std::vector<std::string> facts; // e.g. "landlock abi 7", "user namespaces: yes"
};

struct compile_failure {
  error_code code = error_code::invalid_policy;
  std::string message;                 // one line
  std::vector<policy_error> errors;    // gate 1 only
  std::vector<blocker> blockers;       // gates 2-4
};

// What compile needs to know about the invocation to resolve root tokens.
struct compile_options {
  std::string workspace;  // absolute; resolves "{workspace}"; required when the policy uses it
  std::string home;       // absolute; resolves "{home}"; empty = taken from $HOME
  // A delegated cgroup v2 directory under which each run's cgroup is created
  // (its cgroup.subtree_control must enable memory, pids and cpu). Empty: use
  // cgroup v1 controllers beside cordon's own cgroup when writable.
  std::string cgroup_parent;
};

template <class T>
class compile_result {
 public:
  compile_result(T plan) : plan_(std::move(plan)) {}
  compile_result(compile_failure f) : failure_(std::move(f)), failed_(true) {}
  explicit operator bool() const noexcept { return !failed_; }
  T& plan() { return plan_; }
  const compile_failure& failure() const { return failure_; }

 private:
  T plan_{};
  compile_failure failure_;
  bool failed_ = false;
};

class sandbox_backend {
 public:
  virtual ~sandbox_backend() = default;

  // Stable backend identity, e.g. "linux-namespaces".
  virtual std::string_view name() const noexcept = 0;
  // Version of this backend's private plan format; plans of another version
  // are rejected as stale.
  virtual std::uint32_t plan_format_version() const noexcept = 0;

  // Host capabilities for the calling user. Never fails; unavailability is
  // described by `available` and `blockers`.
  virtual host_capabilities probe() const = 0;

  // Compiles a policy into a plan bound to this backend, or fails with the
  // first failing gate's code and blockers (see the top of this file).
  virtual compile_result<std::shared_ptr<const sandbox_plan>> compile(
      const sandbox_policy& policy, const compile_options& options) const = 0;

  // Runs one command under a plan this backend compiled in this process.
  // Errors: plan_null, plan_foreign, plan_other_platform, plan_stale (the plan
  // is not this backend's, current one); command_not_found (127 on the CLI),
  // command_not_executable (126); launch_failed with errno when a sandbox
  // step fails. A run that starts always yields a run_outcome, whatever the
  // command's own exit status.
  virtual result<run_outcome> launch(const sandbox_plan* plan, const launch_request& request) const = 0;

 protected:
  // Only backends can make plans.
  std::shared_ptr<const sandbox_plan> make_plan(sandbox_policy normalized, std::string platform,
                                                isolation_level isolation, enforcement_contract contract,
                                                std::vector<std::string> warnings,
                                                std::shared_ptr<const plan_payload> payload) const;
  // Checks that `plan` was made by this backend, for this platform, with the
  // current format version, in this process.
  result<void> check_plan(const sandbox_plan* plan, std::string_view platform) const;
};

// The backend for the host this binary was built for (Linux: the namespace
// backend). Never null.
std::unique_ptr<sandbox_backend> make_host_backend();

}  // namespace cordon

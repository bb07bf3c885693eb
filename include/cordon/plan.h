// cordon/plan.h — sandbox_plan: the immutable result of a backend's compile.
//
// A plan is evidence produced by one backend's compiler in this process, not
// a portable token: it cannot be built by hand (private constructor), copied,
// or serialized. A launcher rejects null, foreign, other-platform and stale
// plans with typed errors (docs/architecture.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cordon/enforcement.h"
#include "cordon/policy.h"

namespace cordon {

class sandbox_backend;

// One titled part of a plan's explanation (plan_payload::explain): lines as
// the backend formats them (columns already padded), printed in order.
struct plan_section {
  std::string title;               // e.g. "ACL changes"; printed followed by ":"
  std::vector<std::string> lines;  // each printed on its own line, indented by two spaces
};

// Backend-private compiled state (mount table, Landlock rules, seccomp
// program). Each backend derives its own type.
class plan_payload {
 public:
  virtual ~plan_payload() = default;
  // Every mechanism choice as stable text (mount table, Landlock rules,
  // seccomp variant, limits): what golden plan tests compare and what the
  // run API's helper checks its re-derived plan against. Deterministic.
  virtual std::string describe() const { return {}; }
  // The mechanisms as a person reads them (`cordon policy explain`), beyond
  // the controls table the driver's plan gives: the backend's own sections
  // (the macOS profile's shape and parameters, the Windows ACL lease and
  // token). Default: none.
  virtual std::vector<plan_section> explain() const { return {}; }
  // The profile text the platform's sandbox is given, when it takes one
  // (macOS: the SBPL for sandbox-exec -p, its -D parameters first as
  // comments; `cordon policy explain --show-profile`). Empty: none.
  virtual std::string profile_text() const { return {}; }
};

class sandbox_plan {
 public:
  sandbox_plan(const sandbox_plan&) = delete;
  sandbox_plan& operator=(const sandbox_plan&) = delete;

  // The normalized policy with root tokens resolved to absolute paths.
  const sandbox_policy& policy() const noexcept { return policy_; }
  // The resolved directory "{workspace}" named (the default working
  // directory of a run); empty when the compile had none.
  const std::string& workspace() const noexcept { return workspace_; }
  // The compile option cgroup_parent the plan was compiled with (the run
  // API's helper compiles again with it).
  const std::string& cgroup_parent() const noexcept { return cgroup_parent_; }
  const std::string& backend_name() const noexcept { return backend_name_; }
  std::uint32_t format_version() const noexcept { return format_version_; }
  const std::string& platform() const noexcept { return platform_; }
  // The isolation level the backend provides (at least the policy's `isolation`).
  isolation_level isolation() const noexcept { return isolation_; }
  // What each control will be in a run of this plan.
  const enforcement_contract& contract() const noexcept { return contract_; }
  // Relaxations and known weaker controls, one line each; repeated in reports.
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }
  // Unique within this process; with process_token() it binds the plan to it.
  std::uint64_t identity() const noexcept { return identity_; }
  std::uint64_t process_token() const noexcept { return process_token_; }
  const sandbox_backend* backend() const noexcept { return backend_; }
  // Compiled on recorded host facts (host_facts::recorded): it explains, it
  // never launches (check_plan refuses it with plan_recorded_facts).
  bool from_recorded_facts() const noexcept { return recorded_facts_; }
  const plan_payload* payload() const noexcept { return payload_.get(); }

 private:
  friend class sandbox_backend;
  sandbox_plan() = default;

  sandbox_policy policy_;
  std::string workspace_;
  std::string cgroup_parent_;
  std::string backend_name_;
  std::uint32_t format_version_ = 0;
  std::string platform_;
  isolation_level isolation_ = isolation_level::none;
  enforcement_contract contract_;
  std::vector<std::string> warnings_;
  std::uint64_t identity_ = 0;
  std::uint64_t process_token_ = 0;
  const sandbox_backend* backend_ = nullptr;
  bool recorded_facts_ = false;
  std::shared_ptr<const plan_payload> payload_;
};

// "sha256:<hex>" over the plan's normalized policy, workspace, backend,
// contract and payload description: equal for two plans exactly when they
// would run a command the same way.
std::string plan_fingerprint(const sandbox_plan& plan);

// A random value chosen once per process; plans carry it so that a plan
// cannot outlive or leave the process that compiled it.
std::uint64_t current_process_token() noexcept;

}  // namespace cordon

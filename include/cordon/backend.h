// cordon/backend.h — the backend interface and the compile driver.
//
// probe() is advice; compile() is the authority (docs/architecture.md).
// compile() is core's driver, the same for every backend; it runs the gates
// in order and stops at the first that fails:
//   1. validate and normalize, resolve root tokens  -> invalid_policy
//   2. backend available on this host               -> backend_unavailable
//   3. isolation level sufficient                   -> isolation_insufficient
//   4. the backend's build(), the proof rule
//      (apply_proof_rule), then every required
//      control held against the resulting levels    -> enforcement_unavailable
// A backend supplies only read_host_facts(), build() and launch(): the
// mechanisms, never the gates. There is no path that launches a command
// without a plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/enforcement.h"
#include "cordon/host_facts.h"
#include "cordon/launch.h"
#include "cordon/plan.h"
#include "cordon/policy.h"
#include "cordon/policy_json.h"
#include "cordon/result.h"

namespace cordon {

struct host_capabilities {
  std::string platform;           // "linux", "macos", "windows"
  std::string backend;            // backend name, e.g. "linux-namespaces"
  bool available = false;
  isolation_level isolation = isolation_level::none;
  enforcement_contract best;      // best level per control on this host, for this user
  std::vector<blocker> blockers;  // what keeps a control below `enforced`
  std::vector<std::string> facts; // e.g. "landlock abi 7", "user namespaces: yes"
};

// A refused compile is an ordinary `error` (docs/errors.md): its code is the
// failing gate's, `errors` lists gate 1's problems with their JSON pointers,
// `blockers` gates 2-4's. The name stays for callers written against it.
using compile_failure = error;

// What compile needs to know about the invocation to resolve root tokens.
struct compile_options {
  std::string workspace;  // absolute; resolves "{workspace}"; required when the policy uses it
  std::string home;       // absolute; resolves "{home}"; empty = the host facts' home
  // A delegated cgroup v2 directory under which each run's cgroup is created
  // (its cgroup.subtree_control must enable memory, pids and cpu). Empty: use
  // cgroup v1 controllers beside cordon's own cgroup when writable.
  std::string cgroup_parent;
};

// A compiled plan or the failing gate's error. `plan()` and `failure()` are
// the names callers of the first API used; value() and error_value() work too.
template <class T>
class compile_result : public result<T> {
 public:
  using result<T>::result;
  compile_result(result<T> r) : result<T>(std::move(r)) {}
  T& plan() { return this->value(); }
  const error& failure() const { return this->error_value(); }
};

// What a backend's build() chose for one normalized policy on one host: the
// mechanisms (its private payload) and the level of every control they give,
// stated by the code that chose them (never re-derived from the payload).
struct backend_build {
  enforcement_contract contract;            // every control; level + mechanism + detail
  std::vector<blocker> blockers;            // what the mechanisms cannot hold (gate 4)
  std::vector<std::string> warnings;        // known weaker spots, one line each
  std::shared_ptr<const plan_payload> payload;
};

class sandbox_backend {
 public:
  virtual ~sandbox_backend() = default;

  // Stable backend identity, e.g. "linux-namespaces".
  virtual std::string_view name() const noexcept = 0;
  // Version of this backend's private plan format; plans of another version
  // are rejected as stale.
  virtual std::uint32_t plan_format_version() const noexcept = 0;
  // The platform this backend's plans are for ("linux", "macos", "windows").
  virtual std::string_view platform() const noexcept = 0;
  // The isolation level its plans provide when it is available (gate 3).
  virtual isolation_level isolation() const noexcept = 0;

  // The facts of the running host for the calling user, as the compile of a
  // policy with `options` needs them. `deep`: also try what only an attempt
  // shows (linux-namespaces creates its namespaces in a short-lived child);
  // probe() asks for it, compile() does not. Never fails; what is missing is
  // described in the facts.
  virtual host_facts read_host_facts(const compile_options& options, bool deep = false) const = 0;

  // Host facts recorded in a file (docs/host-facts.md): `record` is the text
  // of a facts record of this backend's platform (as record_host_facts()
  // writes), turned into the facts read_host_facts() would give on that host
  // for `options`. Facts from a record describe a host, never prove one:
  // where the backend can launch, it refuses plans compiled from them.
  // Errors: parse_error (not JSON, location "line L, column C"; or JSON that
  // is not a record, `errors` listing every field of the wrong type or
  // range, unknown or duplicated, with its JSON pointer), unsupported_platform
  // (a record of another platform); usage_error for a backend without a
  // record format (the default).
  virtual result<host_facts> load_host_facts(std::string_view record, const compile_options& options) const;
  // `facts` (this backend's own, from read_host_facts() or load_host_facts())
  // as a facts record (JSON text, docs/host-facts.md) that load_host_facts()
  // reads back to the same facts. Errors: unsupported_platform when `facts`
  // carry no record of this backend; usage_error for a backend without a
  // record format (the default).
  virtual result<std::string> record_host_facts(const host_facts& facts) const;

  // The backend's own step of compile: choose the mechanisms for a policy
  // that gates 1-3 accepted (normalized, tokens resolved) on a host with
  // `facts`, and state the level of each control. Pure: the same policy and
  // facts give the same result (golden plan tests). Errors: only when a
  // mechanism cannot be built at all (enforcement_unavailable with a blocker).
  virtual result<backend_build> build(const sandbox_policy& normalized, const host_facts& facts) const = 0;

  // Runs one command under a plan this backend compiled in this process.
  // Errors: plan_null, plan_foreign, plan_other_platform, plan_stale,
  // plan_recorded_facts (compiled on a facts record, not this host; the plan
  // is not this backend's, current one); command_not_found (127 on the CLI),
  // command_not_executable (126); launch_failed with errno when a sandbox
  // step fails. A run that starts always yields a run_outcome, whatever the
  // command's own exit status. Blocks; call from a single-threaded process or
  // use the run API (cordon/run.h), which runs this in a helper process.
  virtual result<run_outcome> launch(const sandbox_plan* plan, const launch_request& request) const = 0;

  // The driver: compile(policy, options, read_host_facts(options)).
  compile_result<std::shared_ptr<const sandbox_plan>> compile(const sandbox_policy& policy,
                                                              const compile_options& options) const;
  // The driver on given host facts (see the top of this file). Pure apart from
  // resolving the workspace's symlinks.
  compile_result<std::shared_ptr<const sandbox_plan>> compile(const sandbox_policy& policy,
                                                              const compile_options& options,
                                                              const host_facts& facts) const;

  // Gate 1 alone, as compile() runs it: the policy validated and normalized,
  // its "{workspace}" and "{home}" resolved ("{run_tmp}" stays for the
  // launcher) and the workspace rule applied; or the invalid_policy error
  // with every problem. For backends that must know the resolved paths
  // before they read the host (the Windows gatherer's paths_to_probe).
  result<sandbox_policy> resolve(const sandbox_policy& policy, const compile_options& options,
                                 const host_facts& facts) const;

  // Host capabilities: build() of the strictest policy on `facts` (every
  // limit set, network denied, reads restricted), plus network filtering
  // judged on a filtered policy. Never fails.
  host_capabilities probe(const host_facts& facts) const;
  // probe(read_host_facts({}, true)).
  host_capabilities probe() const;

 protected:
  // Checks that `plan` was made by this backend, for this platform, with the
  // current format version, in this process, on facts of this host (not a
  // record: plan_recorded_facts).
  result<void> check_plan(const sandbox_plan* plan, std::string_view platform) const;

 private:
  // Only the driver can make plans.
  std::shared_ptr<const sandbox_plan> make_plan(sandbox_policy normalized, std::string workspace,
                                                std::string cgroup_parent,
                                                enforcement_contract contract,
                                                std::vector<std::string> warnings,
                                                std::shared_ptr<const plan_payload> payload,
                                                bool recorded_facts) const;
};

// The one rule for `unverified` (docs/policy.md, "Levels"): a control may be
// `enforced` or `partial` on a platform only where a proof run of that
// platform has passed (a CI job on a real host of it, docs/architecture.md,
// "Proof runs"). The list is this function; today only "linux".
bool platform_proven(std::string_view platform) noexcept;

// `contract` as a plan for `platform` may state it: unchanged on a proven
// platform; elsewhere every `enforced` or `partial` becomes `unverified`, its
// detail saying what the mechanism would give once proven. The driver applies
// it to every build() and to probe().
enforcement_contract apply_proof_rule(std::string_view platform, enforcement_contract contract);

// Gate 4's check, the one every holder of a policy's requirements uses (the
// driver; the Windows launcher against the levels its read-back observed):
// each control required_enforcement(policy, platform) asks for that
// `contract` does not satisfy (level_satisfies: `unverified` accepts a
// present but unproven mechanism, never an absent one), as a control blocker
// {required, available, reason = the control's detail}, in control order.
std::vector<blocker> unmet_policy_requirements(const sandbox_policy& policy, std::string_view platform,
                                               const enforcement_contract& contract);

// The platform this binary runs on ("linux", "macos", "windows").
std::string_view running_platform() noexcept;

// The backend for this host. Linux: linux-namespaces where it can run, else linux-os-sandbox (os_sandbox);
// $CORDON_LINUX_BACKEND ("namespaces", "os-sandbox") forces one (docs/linux-backend.md). Never null.
std::unique_ptr<sandbox_backend> make_host_backend();

}  // namespace cordon

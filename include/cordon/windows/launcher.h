// cordon/windows/launcher.h — runs one command under a windows_plan
// (Windows only; built by the mingw-w64 cross build, docs/windows-backend.md).
//
// The launch, in this order, each step fatal when a call fails:
//   1. the plan is checked (format version, this process, not a reference shape);
//   2. leases left by a crashed run are restored (a lease that cannot be
//      restored refuses every new run);
//   3. the AppContainer profile is created (functions resolved with
//      GetProcAddress; a missing export refuses the launch);
//   4. the DACL lease: each path opened component by component (reparse
//      points and extra hard links refused by handle), original descriptors
//      written durably to the lease file, then changed and read back;
//   5. the Job Object (kill on close, limits) is created and read back;
//   6. the restricted token (DISABLE_MAX_PRIVILEGE, Administrators deny-only)
//      is made and read back; with an AppContainer, the network check
//      (cordon/windows/network_check.h): a probe in the same AppContainer
//      under that token connects to a loopback listener, and network_deny
//      stays as planned only when the connect fails;
//   7. the child is created suspended with an explicit inherited-handle list
//      (stdin NUL, stdout and stderr pipes) and the AppContainer attribute,
//      joined to the job, its token read back (TokenIsAppContainer,
//      integrity, privileges); the policy's requirements are checked again
//      against what was read back, and only then does the child run;
//   8. output is captured until the child exits or the timeout fires (the
//      whole tree is then terminated through the job);
//   9. cleanup, each step reported: lease restored (three attempts; kept on
//      disk until restored), {run_tmp} removed, AppContainer profile deleted.
// A restriction that cannot be read back is reported `not_enforced`; the
// contract never rises above the plan's (`unverified`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cordon/enforcement.h"
#include "cordon/result.h"
#include "cordon/windows/host_facts.h"
#include "cordon/windows/plan.h"

namespace cordon::windows {

// Makes and removes AppContainer profiles. The system's (make_system_
// appcontainer_provider) resolves userenv.dll's functions at run time; tests
// pass their own to reach later steps.
class appcontainer_provider {
 public:
  virtual ~appcontainer_provider() = default;
  // Creates (or opens) the profile and returns its SID as text ("S-1-15-2-...").
  virtual result<std::string> create(const std::string& name) const = 0;
  virtual result<void> remove(const std::string& name) const = 0;
};
const appcontainer_provider& system_appcontainer_provider();

struct windows_launch_options {
  request_limits limits;                         // lowered to the plan's (plan.h)
  const appcontainer_provider* appcontainer = nullptr;  // null: the system's
  std::string lease_directory;                   // empty: %LOCALAPPDATA%\cordon\leases
  // How long to wait for the machine-wide lease lock, which another cordon
  // run holds from its lease to its restoration (milliseconds; nullopt: as
  // long as it takes). A wait that ends is launch_failed; nothing ran.
  std::optional<std::uint32_t> lease_wait_ms;
};

struct windows_run_result {
  bool exited = false;          // false when the tree was terminated (timeout)
  std::uint32_t exit_code = 0;  // the command's, or the job's termination code
  bool timed_out = false;
  std::int64_t wall_ms = 0;     // resume to exit, milliseconds
  std::string stdout_text;      // captured bytes
  std::string stderr_text;
  enforcement_contract observed;        // the plan's contract, lowered by what was read back
  std::vector<std::string> readback;    // what each read-back found, one line each
  std::vector<std::string> cleanup;     // "step: ok" or "step: failed: why", in order
  std::vector<std::string> warnings;   // the launcher's own (the plan's are plan.warnings())
};

// Runs the plan's command. Errors: plan_null (no command in the plan),
// plan_stale (another format version or process), backend_unavailable
// (reference-shape plan), launch_failed (a step failed; the message names it
// and GetLastError is in sys_errno; nothing of the command ran),
// enforcement_unavailable (what was read back no longer meets the policy;
// the child was terminated before it ran).
result<windows_run_result> launch_windows_plan(const windows_plan& plan, const windows_launch_options& options);

// The live host facts for a policy's paths, the command and the workspace.
host_facts gather_host_facts(const std::vector<std::string>& paths_of_interest);

// True when ntdll exports wine_get_version (the tests skip what wine fakes).
bool running_on_wine();

// Restores the leases of runs that crashed (their owner is gone), holding the
// machine-wide lease lock (waiting at most `lock_wait_ms`; nullopt: as long
// as it takes). Each line of `report` says what happened. Errors: a lease
// that could not be restored; launch_failed when the lock was not had in time.
result<void> recover_stale_leases(const std::string& lease_directory, std::vector<std::string>& report,
                                  std::optional<std::uint32_t> lock_wait_ms = std::nullopt);

}  // namespace cordon::windows

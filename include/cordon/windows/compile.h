// cordon/windows/compile.h — the Windows plan compiler.
//
// compile_windows_plan() runs the gates of docs/architecture.md ("The pipeline") for the
// Windows restricted-process launcher, on the host that `facts` describe:
//   1. validate and normalize (validate_sandbox_policy), resolve root tokens
//      and map every path to a Windows path       -> error_code::invalid_policy
//   2. backend available (Job Objects; the host facts are not a reference
//      shape when a command is to be launched)     -> backend_unavailable
//   3. isolation: the launcher provides os_sandbox  -> isolation_insufficient
//   4. build the mechanisms (build_windows_plan), then hold every required
//      control against the contract               -> enforcement_unavailable
// Rules of the reference (docs/windows-backend.md, "What the compiler
// refuses"), each a typed blocker: full filesystem reads, unrestricted and
// filtered networking and local binding (the AppContainer launcher cannot
// keep their meaning); include_platform_defaults=false (AppContainer grants
// cannot be subtracted); roots that do not exist, have a reparse-point
// component, sit on a volume without persistent ACLs, or are files with more
// than one hard link (or directories holding such files); environment names
// that collide without regard to case, or names and values that are not
// UTF-8; a command that cannot be found, is a batch file, or lies outside
// every readable root and platform default.
//
// Every control the mechanisms provide is `unverified`: no Windows runner has
// proven them yet (docs/windows-backend.md, "Levels"), so a policy requiring
// `enforced` compiles to a plan only when it accepts `unverified` for that
// control explicitly.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cordon/policy.h"
#include "cordon/policy_json.h"
#include "cordon/result.h"
#include "cordon/windows/host_facts.h"
#include "cordon/windows/plan.h"

namespace cordon::windows {

// Stable codes of the reasons a Windows plan is refused. to_string() spells
// them as in reports; never rename a value.
enum class blocker_code {
  backend_unavailable,          // no Job Objects, or reference facts for a launch
  isolation_insufficient,       // the policy asks for more than os_sandbox
  full_read_unsupported,        // filesystem.read = full
  platform_defaults_required,   // filesystem.include_platform_defaults = false
  network_unrestricted_unsupported,
  network_filtered_unsupported,
  local_binding_unsupported,
  appcontainer_unavailable,     // the host has no AppContainer support
  not_a_windows_path,           // a grant's root names no drive ("/etc")
  root_missing,
  root_reparse_point,           // the root or one of its ancestors is a reparse point
  root_acls_not_persistent,     // the volume has no persistent ACLs (FAT, some network shares)
  root_volume_unknown,
  hard_links,                   // a file with more than one link would get a grant
  scan_truncated,               // a root's hard-link scan did not finish
  absent_inside_writable,       // a denied/protected path does not exist inside a writable root
  environment_collision,        // two names equal without regard to case
  environment_not_utf8,
  environment_invalid_name,
  command_not_found,
  command_not_executable,       // a directory, a reparse point or a batch file
  command_not_readable,         // outside every readable root and platform default
  requirement_not_met,          // gate 4: a required control's level is too low
};
std::string_view to_string(blocker_code code) noexcept;

struct windows_blocker {
  blocker_code code = blocker_code::requirement_not_met;
  std::optional<control> which;    // the control it keeps low, when there is one
  std::string required;            // e.g. "enforced"
  std::string available;           // e.g. "unverified"
  std::string subject;             // a path, a variable name, a policy pointer
  std::string reason;              // one line
};

struct windows_compile_failure {
  error_code code = error_code::invalid_policy;
  std::string message;
  std::vector<policy_error> errors;       // gate 1
  std::vector<windows_blocker> blockers;  // gates 2-4
};

struct windows_compile_options {
  std::string workspace;               // absolute Windows path for "{workspace}"; required if used
  std::vector<std::string> argv;       // empty: compile without a command (explain)
  std::string working_directory;       // empty: the workspace
};

// Gates 1-3 and the mechanisms, without the requirement check: the plan as
// built, or the structural refusal. `cordon policy explain` prints this
// plan even when gate 4 then refuses it.
struct windows_build {
  std::shared_ptr<const windows_plan> plan;  // null when `failure` is set
  std::optional<windows_compile_failure> failure;
};
windows_build build_windows_plan(const sandbox_policy& policy, const host_facts& facts,
                                 const windows_compile_options& options);

// Whether `available` meets `required` on Windows: level_satisfies(), with
// one rule stricter than core's: a requirement of `unverified` asks for a
// mechanism that is in place, so `not_enforced` and `planned` do not meet it
// (accepting "not proven" must not accept "absent"). Used by gate 4 and
// again by the launcher against what it read back.
bool meets_requirement(enforcement_level available, enforcement_level required) noexcept;

// Gate 4: each control the policy requires, held against the plan's
// contract; one blocker per control that falls short.
std::vector<windows_blocker> requirement_blockers(const windows_plan& plan);

// All four gates. Either a plan or a failure, never both.
struct windows_compile_result {
  std::shared_ptr<const windows_plan> plan;
  std::optional<windows_compile_failure> failure;
  explicit operator bool() const noexcept { return plan != nullptr; }
};
windows_compile_result compile_windows_plan(const sandbox_policy& policy, const host_facts& facts,
                                            const windows_compile_options& options);

// Every path the compiler will ask `base` about for this policy and
// invocation: each mapped root, and each candidate location of the command.
// The live gatherer probes these (and their ancestors) to fill base.paths.
std::vector<std::string> paths_to_probe(const sandbox_policy& policy, const host_facts& base,
                                        const windows_compile_options& options);

// Maps a resolved policy path to a Windows path: "/C:/Users/a" -> "C:\Users\a".
// Returns nullopt for a path without a drive component ("/etc/ssh"), which
// names nothing on Windows. UNC and device paths are not accepted.
std::optional<std::string> to_windows_path(const std::string& policy_path);

}  // namespace cordon::windows

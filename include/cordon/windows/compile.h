// cordon/windows/compile.h — the Windows backend on core's compile driver.
//
// compile_windows_plan() runs core's driver (cordon/backend.h) for the
// Windows restricted-process launcher, on the host that `facts` describe:
// gate 1 (validation, root tokens, the workspace rule), gate 2 (Job Objects;
// the facts are not a reference shape when a command is to be launched),
// gate 3 (os_sandbox) and gate 4 (every required control against the levels
// build() states, after the proof rule) are core's. Rules of the backend's
// build() (docs/windows-backend.md, "What the compiler refuses"), each a
// blocker with a stable `cause`: full filesystem reads, unrestricted and
// filtered networking and local binding (the AppContainer launcher cannot
// keep their meaning); include_platform_defaults=false (AppContainer grants
// cannot be subtracted); roots that do not exist, have a reparse-point
// component, sit on a volume without persistent ACLs, or are files with more
// than one hard link (or directories holding such files); environment names
// that collide without regard to case, or names and values that are not
// UTF-8; a command that cannot be found, is a batch file, or lies outside
// every readable root and platform default.
//
// Every control the mechanisms provide is `unverified`: no Windows proof run
// has passed (docs/policy.md, "Levels"), so a policy requiring `enforced`
// compiles to a plan only when it accepts `unverified` for that control
// explicitly.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cordon/backend.h"
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

// A Windows reason as the one blocker type (cordon/result.h): `cause` is
// to_string(code), `object` the path, variable or pointer it is about; a
// blocker with `which` is a control blocker (required enforced, available
// not_enforced), one without is a backend blocker.
blocker make_windows_blocker(blocker_code code, std::optional<control> which, std::string object, std::string reason);

// True when `b` carries the Windows reason `code`.
bool has_cause(const blocker& b, blocker_code code);

struct windows_compile_options {
  std::string workspace;               // absolute Windows path for "{workspace}"; required if used
  std::vector<std::string> argv;       // empty: compile without a command (explain)
  std::string working_directory;       // empty: the workspace
};

// What the Windows backend's build() reads from core's host facts
// (host_facts::backend_facts): the host and the invocation, whose command is
// resolved and checked at compile time.
struct windows_backend_facts {
  host_facts host;
  windows_compile_options invocation;
};

// `facts` and `options` as the driver's host facts: platform "windows",
// available when the host has nested Job Objects and, for a command, is not a
// reference shape; home = the user profile.
cordon::host_facts to_driver_facts(const host_facts& facts, const windows_compile_options& options);

// The Windows restricted-process backend on core's one driver: the gates are
// core's (cordon/backend.h); build() maps the resolved roots to Windows paths,
// applies the rules above, decides the DACL lease, the environment block, the
// command and the job limits, and states every level. launch() is
// launch_windows_plan() (cordon/windows/launcher.h) on Windows; elsewhere it
// refuses with unsupported_platform.
class windows_backend final : public sandbox_backend {
 public:
  std::string_view name() const noexcept override { return "windows-appcontainer"; }
  std::uint32_t plan_format_version() const noexcept override;
  std::string_view platform() const noexcept override { return "windows"; }
  isolation_level isolation() const noexcept override { return isolation_level::os_sandbox; }
  // The reference host shape (reference_host_facts) off Windows; gather_host_facts() on Windows.
  cordon::host_facts read_host_facts(const compile_options& options, bool deep = false) const override;
  // A record of a Windows host (src/windows/facts_record.cpp; docs/host-facts.md):
  // its "workspace" is the default one, options.workspace wins over it.
  result<cordon::host_facts> load_host_facts(std::string_view record, const compile_options& options) const override;
  result<std::string> record_host_facts(const cordon::host_facts& facts) const override;
  result<backend_build> build(const sandbox_policy& normalized, const cordon::host_facts& facts) const override;
  result<run_outcome> launch(const sandbox_plan* plan, const launch_request& request) const override;
};

// The one Windows backend of this process.
const windows_backend& the_windows_backend();

// The one driver (windows_backend::compile) on `facts` and `options`:
// either a plan or the failing gate's error (cordon/result.h: invalid_policy
// with errors, or backend_unavailable / isolation_insufficient /
// enforcement_unavailable with blockers), never both. The plan's contract and
// warnings are the driver's.
struct windows_compile_result {
  std::shared_ptr<const windows_plan> plan;
  std::optional<error> failure;
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

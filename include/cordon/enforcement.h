// cordon/enforcement.h — controls, enforcement levels, and the contract a
// backend states for one policy on one host.
//
// A level is a promise about this host and this policy, not about a backend's
// name (docs/policy.md, "Enforcement requirements"). There is no overall "secure" flag.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cordon {

// Strongest first. `planned` means "a later version will enforce this": for
// every decision it counts exactly as `not_enforced`. `unverified` means "compiled
// for a platform whose enforcement this host cannot prove" (a macOS or Windows
// plan built on Linux, docs/policy.md "Enforcement levels"): it never satisfies a
// requirement of `enforced` or `partial`.
enum class enforcement_level { enforced, partial, not_enforced, not_applicable, planned, unverified };

// One independent guarantee in the report. The JSON spelling (to_string) is
// stable.
enum class control {
  filesystem_read,       // reads outside readable roots fail
  filesystem_write,      // writes outside writable roots fail
  filesystem_deny,       // denied and protected-read-only paths hold inside writable/readable roots
  network_deny,          // no direct network traffic leaves the sandbox
  network_filter,        // outbound traffic only through the rule-checking broker
  unix_sockets,          // host named/abstract unix sockets cannot be connected
  environment,           // only the policy's variables reach the command
  process_tree_cleanup,  // every descendant dies when the run ends
  process_count,         // ceiling on processes in the tree
  memory,                // ceiling on memory of the tree (bytes)
  cpu,                   // ceiling on CPU time of the tree (seconds)
  timeout,               // wall-clock deadline kills the tree
  privilege,             // no_new_privs, no capabilities, no setuid gain
  descriptor_hygiene,    // no inherited descriptors above stderr
  syscall_filter,        // seccomp filter against kernel attack surface
  terminal,              // new session; no TIOCSTI/TIOCLINUX injection
  devices,               // private /dev with pseudo-devices only
};

inline constexpr std::array<control, 17> all_controls = {
    control::filesystem_read,  control::filesystem_write,     control::filesystem_deny,
    control::network_deny,     control::network_filter,       control::unix_sockets,
    control::environment,      control::process_tree_cleanup, control::process_count,
    control::memory,           control::cpu,                  control::timeout,
    control::privilege,        control::descriptor_hygiene,   control::syscall_filter,
    control::terminal,         control::devices};

std::string_view to_string(control c) noexcept;
std::string_view to_string(enforcement_level level) noexcept;
std::optional<control> control_from_string(std::string_view name) noexcept;
std::optional<enforcement_level> enforcement_level_from_string(std::string_view name) noexcept;

// True when `available` satisfies a requirement of `required`.
// Order: enforced > partial > unverified > not_enforced == planned. `not_applicable`
// satisfies any requirement (the control has nothing to act on). A requirement
// of `not_enforced`, `planned` or `not_applicable` is met by anything; a
// requirement of `unverified` accepts "not proven" but not "absent": it is met
// by `enforced`, `partial`, `unverified` and `not_applicable`, not by
// `not_enforced` or `planned` (docs/policy.md, "Levels").
bool level_satisfies(enforcement_level available, enforcement_level required) noexcept;

// What one control will be in a run: the level and the mechanism that gives
// it (e.g. "landlock abi 7 + mount namespace"), and why, in one line.
struct control_status {
  enforcement_level level = enforcement_level::not_enforced;
  std::string mechanism;  // empty when nothing acts
  std::string detail;     // why this level; empty when obvious
  bool operator==(const control_status&) const = default;
};

// Every control's status for one compiled policy.
using enforcement_contract = std::map<control, control_status>;

}  // namespace cordon

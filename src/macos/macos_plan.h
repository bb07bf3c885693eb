// macos_plan.h — the macOS backend's native plan and its compiler.
//
// compile_macos_plan() turns a sandbox_policy into a deny-default Seatbelt
// profile plus everything the launcher applies around it (environment,
// RLIMIT_CPU, process group, timeout), and states each control's level.
// It is portable code: it runs and is tested on Linux, where the plan can be
// inspected (`cordon policy explain --platform macos`) but never launched.
// The mechanisms, their levels and what only a Mac can prove are in
// docs/macos-backend.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cordon/backend.h"
#include "cordon/enforcement.h"
#include "cordon/policy.h"
#include "macos/host_facts.h"
#include "macos/platform_defaults.h"
#include "macos/seatbelt_profile.h"

namespace cordon::macos_impl {

inline constexpr const char* macos_backend_name = "macos-seatbelt";
inline constexpr std::uint32_t macos_plan_format = 1;

// What the launcher builds the command's environment from (environment.h).
struct environment_spec {
  environment_inherit inherit = environment_inherit::none;
  std::vector<std::string> allow;
  // Applied in order after the host's variables: the policy's `set`, and in
  // filtered mode the proxy variables naming the broker (an explicit `set`
  // of one case of a proxy variable wins over them for both cases).
  std::vector<std::pair<std::string, std::string>> set;
  // Values that named the sandbox's private /tmp on Linux ("/tmp" or under it)
  // are re-rooted to the per-run directory at launch (RUN_TMP).
  std::vector<std::string> rerooted;  // names of such variables
};

struct macos_plan {
  sandbox_policy policy;  // normalized, tokens resolved, canonical paths
  macos_host_facts facts;
  std::string profile;                       // SBPL text, for sandbox-exec -p
  std::vector<sbpl_parameter> parameters;    // -D KEY=VALUE, in order
  enforcement_contract contract;             // levels on the host that compiled it
  enforcement_contract on_a_mac;             // the levels the mechanisms give on a Mac
  // Controls a Mac cannot bring to the level the policy requires. Non-empty:
  // the launcher refuses the plan (compile_failure code enforcement_unavailable).
  std::vector<blocker> blockers;
  std::vector<std::string> warnings;         // relaxations and known weaker controls
  std::vector<std::string> platform_defaults;  // one line per default granted
  environment_spec environment;
  std::optional<std::uint64_t> rlimit_cpu_seconds;  // per process (RLIMIT_CPU soft = hard)
  std::optional<std::uint64_t> timeout_ms;          // the supervisor's deadline
  bool process_group = true;                        // setsid(); killpg() at exit and on timeout

  // A plan runs only on the Mac whose facts it was compiled with, and only
  // when nothing blocks it.
  bool launchable() const noexcept { return facts.native && facts.sandbox_exec_present && blockers.empty(); }
};

// Compiles `policy` for the Mac described by `facts`.
// Gate 1 (validation, token resolution): failure with error_code::invalid_policy
// and the policy errors ("{workspace}" without facts.workspace, a path SBPL
// cannot carry). Otherwise the plan, with `blockers` listing every required
// control a Mac cannot reach (refusal is the launcher's: a blocked plan is kept
// so that explain can show it). Never fails for the host it runs on.
compile_result<std::shared_ptr<const macos_plan>> compile_macos_plan(const sandbox_policy& policy,
                                                                      const macos_host_facts& facts);

// The probe of the macOS backend for `facts`: platform "macos", available
// only when facts.native and sandbox-exec is present, best level per control.
host_capabilities probe_macos(const macos_host_facts& facts);

// The launcher's argv: sandbox-exec -p PROFILE -D KEY=VALUE... -- COMMAND...
// (RUN_TMP given its launch value `run_tmp`).
std::vector<std::string> sandbox_exec_argv(const macos_plan& plan, const std::string& run_tmp,
                                           const std::vector<std::string>& command);

}  // namespace cordon::macos_impl

// macos_plan.h — the macOS backend's plan payload and its compile entry points.
//
// The macOS backend (macos_backend, backend.h) runs on core's one compile
// driver (cordon/backend.h): validation, root tokens, the workspace rule, the
// four gates, warnings and the requirement check are core's. Its build()
// turns a normalized policy into a deny-default Seatbelt profile plus
// everything the launcher applies around it (environment, RLIMIT_CPU, process
// group, timeout), the payload below, and states each control's level on a
// Mac. It is portable code: it runs and is tested on Linux, where the plan can
// be inspected (`cordon policy explain --platform macos`) but never launched.
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

struct macos_plan : plan_payload {
  sandbox_policy policy;  // normalized, tokens resolved, canonical paths
  macos_host_facts facts;
  std::string profile;                       // SBPL text, for sandbox-exec -p
  std::vector<sbpl_parameter> parameters;    // -D KEY=VALUE, in order
  // The plan's levels: the driver's (the proof rule applied: `unverified`
  // until a macOS proof run has passed, docs/policy.md). Filled by
  // compile_macos_plan() from the driver's plan; empty in build()'s payload.
  enforcement_contract contract;
  enforcement_contract on_a_mac;             // the levels the mechanisms are designed to give on a Mac
  std::vector<std::string> warnings;         // the driver's plan warnings (compile_macos_plan)
  std::vector<std::string> platform_defaults;  // one line per default granted
  environment_spec environment;
  std::optional<std::uint64_t> rlimit_cpu_seconds;  // per process (RLIMIT_CPU soft = hard)
  std::optional<std::uint64_t> timeout_ms;          // the supervisor's deadline
  bool process_group = true;                        // setsid(); killpg() at exit and on timeout

  // A plan runs only on the Mac whose facts it was compiled with (the driver
  // refused every plan with a blocker).
  bool launchable() const noexcept { return facts.native && facts.sandbox_exec_present; }

  // The profile, its parameters and the launcher's settings as stable text.
  std::string describe() const override;
  // The launcher, the profile's shape, the platform defaults and the
  // parameters as a person reads them (`cordon policy explain`; explain.cpp).
  std::vector<plan_section> explain() const override;
  // The -D parameters as ";; -DKEY=VALUE" comment lines, then the SBPL
  // (`cordon policy explain --show-profile`).
  std::string profile_text() const override;
};

// The backend's step of the driver: the payload (profile, parameters,
// environment, limits) and the design levels for a normalized policy whose
// "{workspace}" and "{home}" core has resolved ("{run_tmp}" is left for the
// launcher). Blockers: allow_local_binding (no private loopback), a filtered
// policy without a broker port or with a TLS-terminating rule. Errors:
// invalid_policy when a path cannot be carried by SBPL; enforcement_unavailable
// when the generated profile fails the structural check (fail closed).
result<backend_build> build_macos_plan(const sandbox_policy& normalized, const macos_host_facts& facts);

// `facts` as the driver's host facts: platform "macos", available when
// sandbox-exec is present, the macOS record in backend_facts.
host_facts to_host_facts(const macos_host_facts& facts);

// Compiles `policy` for the Mac described by `facts` through the one driver
// (macos_backend::compile with workspace and home from `facts`): the driver's
// refusal (invalid_policy, backend_unavailable, isolation_insufficient,
// enforcement_unavailable with its blockers), or the payload with the plan's
// policy-independent levels and warnings copied in.
compile_result<std::shared_ptr<const macos_plan>> compile_macos_plan(const sandbox_policy& policy,
                                                                      const macos_host_facts& facts);

// The probe of the macOS backend for `facts` (the driver's probe()): platform
// "macos", best level per control after the proof rule.
host_capabilities probe_macos(const macos_host_facts& facts);

// The launcher's argv: sandbox-exec -p PROFILE -D KEY=VALUE... -- COMMAND...
// (RUN_TMP given its launch value `run_tmp`, TERMINAL the device of the
// terminal the command inherits, "/dev/null" when it inherits none).
std::vector<std::string> sandbox_exec_argv(const macos_plan& plan, const std::string& run_tmp,
                                           const std::vector<std::string>& command,
                                           const std::string& terminal = "/dev/null");

}  // namespace cordon::macos_impl

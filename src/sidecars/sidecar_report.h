// sidecar_report.h — the sidecar report (JSON, "kind": "cordon-sidecar",
// docs/sidecars.md "The report"): written once at launch, before the first
// protocol byte is forwarded, and again, complete, when the sidecar is gone;
// or once, as a refusal, when nothing was started.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cordon/backend.h"
#include "cordon/enforcement.h"
#include "cordon/plan.h"
#include "sidecars/extension.h"
#include "sidecars/session.h"

namespace cordon::sidecars {

inline constexpr int sidecar_report_schema = 1;

// One --require CONTROL=LEVEL and what the plan gives.
struct requirement {
  control subject = control::filesystem_read;
  enforcement_level required = enforcement_level::enforced;
};

// What was checked about an extension before launch.
struct extension_evidence {
  const extension_manifest* manifest = nullptr;
  std::vector<std::string> file_problems;     // empty: every digest matched
  std::vector<grant_decision> grants;         // one per grant, in manifest order
  std::string rules_name, rules_digest;       // the capability policy that judged them, if any
};

struct launch_facts {
  protocol proto = protocol::mcp;
  std::vector<std::string> argv;
  std::string workspace;
  std::uint64_t handshake_timeout_ms = 0;  // 0: none
  std::vector<requirement> requirements;
  const extension_evidence* extension = nullptr;  // null without --manifest
};

// The fields every sidecar report starts with.
nlohmann::ordered_json report_head(const launch_facts& facts, const char* state);

// The launch report: plan levels (control by control), pid, start time.
nlohmann::ordered_json launch_report(const launch_facts& facts, const sandbox_plan& plan, pid_t pid,
                                     const std::string& started_at);

// Completes a launch report when the session is over; `exit_status` is cordon's.
void add_ending(nlohmann::ordered_json& report, const session_result& session, int exit_status,
                const std::string& ended_at);

// A refusal: nothing started. `blockers` and `unmet` may be empty.
nlohmann::ordered_json refused_report(const launch_facts& facts, const error& why, const std::vector<blocker>& blockers,
                                      const std::vector<std::string>& unmet);

// "control=level" for each requirement the contract does not satisfy.
std::vector<std::string> unmet_requirements(const std::vector<requirement>& requirements,
                                            const enforcement_contract& contract);

}  // namespace cordon::sidecars

// cordon/report.h — the run report (JSON, "schema": 1).
//
// One per run, including runs that were refused or could not start. It says,
// control by control, what was enforced and by which mechanism. It carries no
// overall verdict (docs/report.md). Schema:
// schemas/report.v1.schema.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cordon/backend.h"
#include "cordon/launch.h"
#include "cordon/plan.h"
#include "cordon/result.h"

namespace cordon {

inline constexpr int report_schema_version = 1;

// The members of a run report that depend on the plan alone (the backend
// and plan format, the policy's name, digest and isolation, the controls and
// their mechanisms, the limits, the schema and version), rendered once. A
// prepared sandbox renders them while it waits for its command, so that
// only the outcome is rendered after the command exits (docs/prepared.md).
// Bound to the plan it was made from (by identity, as a prepared sandbox
// is); opaque otherwise.
class report_plan_half {
 public:
  explicit report_plan_half(const sandbox_plan& plan);
  // Whether this half was rendered from `plan` (the same object's identity
  // and process token).
  bool renders(const sandbox_plan& plan) const noexcept;

 private:
  friend std::string run_report_json(const sandbox_plan&, const launch_request&, const run_outcome&,
                                     const report_plan_half&);
  std::uint64_t plan_identity_ = 0;
  std::uint64_t plan_process_token_ = 0;
  std::vector<std::pair<std::string, std::string>> sections_;  // member name, its value as the report writes it
};

// A completed (or timed-out, or interrupted) run.
std::string run_report_json(const sandbox_plan& plan, const launch_request& request,
                            const run_outcome& outcome);

// The same report, byte for byte, with the plan's members taken from
// `ahead` (rendered from `plan` earlier); when `ahead` was rendered from
// another plan they are rendered again, so the result never mixes plans.
std::string run_report_json(const sandbox_plan& plan, const launch_request& request,
                            const run_outcome& outcome, const report_plan_half& ahead);

// A run that was refused by compile: no command ran. `policy_name` may be empty.
std::string refused_report_json(const std::string& backend_name, const std::string& policy_name,
                                const launch_request& request, const compile_failure& failure);

// A run whose plan compiled but whose launch failed before the command ran
// (e.g. command_not_found).
std::string launch_failed_report_json(const sandbox_plan& plan, const launch_request& request,
                                      const error& err);

// SHA-256 of the normalized policy's JSON, "sha256:<64 hex>".
std::string policy_digest(const sandbox_policy& policy);

}  // namespace cordon

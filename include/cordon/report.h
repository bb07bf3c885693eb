// cordon/report.h — the run report (JSON, "schema": 1).
//
// One per run, including runs that were refused or could not start. It says,
// control by control, what was enforced and by which mechanism. It carries no
// overall verdict (docs/report.md). Schema:
// schemas/report.v1.schema.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cordon/backend.h"
#include "cordon/launch.h"
#include "cordon/plan.h"
#include "cordon/result.h"

namespace cordon {

inline constexpr int report_schema_version = 1;

// A completed (or timed-out, or interrupted) run.
std::string run_report_json(const sandbox_plan& plan, const launch_request& request,
                            const run_outcome& outcome);

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

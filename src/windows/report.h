// report.h — the Windows backend's run reports in the shared format
// (schemas/report.v1.schema.json, docs/report.md): the same members as every
// backend's report, for a run, a refusal and a launch that failed. Portable:
// built into cordon.exe (mingw-w64) and tested on Linux against the schema.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cordon/result.h"
#include "cordon/windows/launcher.h"
#include "cordon/windows/plan.h"

namespace cordon::windows {

// "sha256:<64 hex>" of the plan's normalized policy as JSON: the digest
// every backend's report and the gate run record carry (include/cordon/report.h,
// policy_digest). On Windows the SHA-256 is CNG's
// (src/windows/cross/compat/sha256_bcrypt.cpp).
std::string windows_policy_digest(const windows_plan& plan);

// The report of a run that started: outcome "completed" or "timed_out"; the
// backend (name, plan format, platform "windows", isolation), the policy
// (name, digest, isolation),
// the command (argv, working directory), environment names, the controls as
// observed after the read-back, limits, timeout_fired, exit (an exit status
// up to 255 as `code`; a larger one, an NTSTATUS such as 0xC0000005, as
// `signal` with `signal_name` "NTSTATUS_0xC0000005"), timing (no CPU
// accounting yet: 0), violations (none observed: empty), the plan's and the
// run's warnings, and `cleanup`: each cleanup step's line, in order.
// `started_at` and `finished_at` are UTC, the first `ran.wall_ms` before the
// second. Returns the JSON text, indented, ending in a newline.
std::string windows_run_report_json(const windows_plan& plan, const windows_run_result& ran);

// The report of a refusal: outcome "refused", the policy's name (empty when
// the policy did not load), the command's argv, `error` (the code's stable
// name and the message), `policy_errors` and `blockers` (control, required,
// available, reason) from `failure`. Nothing ran: no exit, no timing.
std::string windows_refused_report_json(const std::string& policy_name, const std::vector<std::string>& argv,
                                        const error& failure);

// The report of a launch that failed after the plan was compiled: outcome
// "launch_failed", the plan's members as in a run report, `error`, the plan's
// warnings, and the cleanup lines the launcher reported (may be empty).
std::string windows_launch_failed_report_json(const windows_plan& plan, const error& failure,
                                              const std::vector<std::string>& cleanup);

}  // namespace cordon::windows

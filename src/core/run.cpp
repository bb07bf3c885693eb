// The run API's portable half: exit codes and the run supervised by the
// calling thread (cordon/run.h). The helper-process half is
// src/posix/run_helper.cpp; the report target is src/posix/report_target.cpp.
#include "cordon/run.h"

#include "cordon/report.h"

namespace cordon {

int exit_code_for(const error& err) noexcept {
  switch (err.code) {
    case error_code::command_not_found: return exit_not_found;
    case error_code::command_not_executable: return exit_not_executable;
    default: return exit_cordon_failed;
  }
}

int exit_code_for(const run_report& report) noexcept {
  if (report.failure) return exit_code_for(*report.failure);
  if (!report.outcome) return exit_cordon_failed;
  const run_outcome& o = *report.outcome;
  if (o.timed_out) return exit_timeout;
  return o.exited ? o.exit_code : 128 + o.signal;
}

namespace {

run_report finish_report(const sandbox_plan& plan, const launch_request& request, result<run_outcome> outcome,
                         bool with_json) {
  run_report report;
  if (!outcome) {
    report.failure = std::move(outcome).error_value();
    report.json = launch_failed_report_json(plan, request, *report.failure);
    return report;
  }
  report.cancelled = outcome->cancelled;
  if (with_json) report.json = run_report_json(plan, request, *outcome);
  report.outcome = std::move(*outcome);
  return report;
}

}  // namespace

run_report run_in_this_process(const sandbox_plan& plan, const launch_request& request, bool with_json) {
  if (plan.backend() == nullptr) {
    return finish_report(plan, request, make_error(error_code::plan_null, "the plan has no backend"), with_json);
  }
  return finish_report(plan, request, plan.backend()->launch(&plan, request), with_json);
}

}  // namespace cordon

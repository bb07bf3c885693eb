// The run API's portable half: exit codes, the report target, and the run
// supervised by the calling thread (cordon/run.h). The helper-process half is
// src/posix/run_helper.cpp.
#include "cordon/run.h"

#include <unistd.h>

#include "cordon/report.h"
#include "posix/atomic_file.h"

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

report_target::report_target(report_target&& other) noexcept
    : dir_fd_(std::exchange(other.dir_fd_, -1)), name_(std::move(other.name_)) {}

report_target& report_target::operator=(report_target&& other) noexcept {
  if (this != &other) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    dir_fd_ = std::exchange(other.dir_fd_, -1);
    name_ = std::move(other.name_);
  }
  return *this;
}

report_target::~report_target() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

result<report_target> report_target::open(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  auto dir = open_parent_directory(path);
  if (!dir) return std::move(dir).error_value();
  report_target target;
  target.dir_fd_ = *dir;
  target.name_ = name;
  if (name.empty() || ::access(directory.c_str(), W_OK) != 0) {
    return make_error(error_code::usage_error, "--report " + path + ": cannot write a file there", {}, errno);
  }
  return target;
}

result<void> report_target::write(const std::string& text) const {
  if (dir_fd_ < 0) return make_error(error_code::io_error, "the report target is not open");
  return write_file_atomically_at(dir_fd_, name_, text);
}

}  // namespace cordon

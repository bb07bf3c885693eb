// sandbox_adapter.h — the one place governance touches the sandbox library:
// probe, compile, run (cancellable), reports, over the library's run API
// (include/cordon/run.h).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cordon/backend.h"
#include "cordon/capture.h"
#include "cordon/run.h"
#include "cordon/governance/approval.h"
#include "cordon/governance/runtime.h"

namespace cordon::governance::detail {

struct adapter_run {
  std::optional<run_outcome> outcome;  // empty when the launch failed before the command ran
  std::optional<error> launch_error;
  bool cancelled = false;              // cancel() reached this run
  std::string report_json;             // the run report (or the launch-failure report)
  // run_captured only:
  captured_output stdout_data, stderr_data;
  bool timed_out = false;              // the host deadline (or the policy's timeout) ended it
  bool pooled = false;                 // it started in a sandbox of the pool
  std::vector<std::string> warnings;   // why the pool was not used
};

class sandbox_adapter {
 public:
  sandbox_adapter();
  std::string backend_name() const;
  // Whether this host's backend can run at all (probe().available).
  bool available() const;

  compile_result<std::shared_ptr<const sandbox_plan>> compile(const sandbox_policy& policy,
                                                              const compile_options& options) const;
  // The plan's per-control levels, in the report's control order.
  static std::vector<control_level> levels(const sandbox_plan& plan);
  std::string refused_report(const std::string& policy_name, const launch_request& request,
                             const compile_failure& failure) const;

  // Runs under `plan` with inherited stdio, blocking; cancel() from another
  // thread stops it (run_handle::cancel: the whole tree is killed).
  adapter_run run(const sandbox_plan& plan, const launch_request& request);
  // Runs under `plan` with stdin fed from io.stdin_data and stdout/stderr
  // captured (cordon/capture.h), in a sandbox of io.pool when the pool's plan
  // has `plan`'s fingerprint, else cold; cancellable as run().
  adapter_run run_captured(const std::shared_ptr<const sandbox_plan>& plan, const launch_request& request,
                           const tool_io& io);
  // Runs without a sandbox (backend selection "host"): posix_spawn, inherited stdio.
  adapter_run run_on_host(const launch_request& request);
  void cancel();
  // Clears a cancellation that arrived when nothing was running.
  void reset_cancel();
  bool cancel_requested() const noexcept { return cancel_.load(); }

 private:
  std::unique_ptr<sandbox_backend> backend_;
  std::atomic<bool> cancel_{false};
  std::mutex mutex_;
  std::unique_ptr<run_handle> running_;  // the sandboxed run in progress, if any
  int host_pid_ = -1;
};

}  // namespace cordon::governance::detail

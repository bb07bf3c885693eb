// sandbox_adapter.cpp — compile and run through the library's run API
// (include/cordon/run.h): the supervisor is a helper process, so a host's
// threads and signal handling stay its own, and cancel() kills the tree
// through the run handle from any thread.
#include "governance/sandbox_adapter.h"

#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include "cordon/prepared.h"
#include "cordon/report.h"
#include "governance/child_process.h"
#include "governance/json_util.h"

extern char** environ;

namespace cordon::governance::detail {

sandbox_adapter::sandbox_adapter() : backend_(make_host_backend()) {}

std::string sandbox_adapter::backend_name() const { return std::string(backend_->name()); }

bool sandbox_adapter::available() const { return backend_->probe().available; }

compile_result<std::shared_ptr<const sandbox_plan>> sandbox_adapter::compile(const sandbox_policy& policy,
                                                                             const compile_options& options) const {
  return backend_->compile(policy, options);
}

std::vector<control_level> sandbox_adapter::levels(const sandbox_plan& plan) {
  std::vector<control_level> out;
  for (control c : all_controls) {
    auto it = plan.contract().find(c);
    if (it == plan.contract().end()) continue;
    out.push_back({std::string(to_string(c)), std::string(to_string(it->second.level)), it->second.mechanism});
  }
  return out;
}

std::string sandbox_adapter::refused_report(const std::string& policy_name, const launch_request& request,
                                            const compile_failure& failure) const {
  return refused_report_json(backend_name(), policy_name, request, failure);
}

adapter_run sandbox_adapter::run(const sandbox_plan& plan, const launch_request& request) {
  adapter_run out;
  run_request req;
  req.launch = request;
  std::unique_lock lock(mutex_);
  if (cancel_.load()) {
    out.cancelled = true;
    return out;
  }
  auto started = start_run(plan, req);
  if (!started) {
    out.launch_error = started.error_value();
    out.report_json = launch_failed_report_json(plan, request, started.error_value());
    return out;
  }
  running_ = std::make_unique<run_handle>(std::move(*started));
  run_handle* handle = running_.get();
  lock.unlock();
  // wait() and cancel() may meet on two threads: the handle allows it
  // (include/cordon/run.h), the mutex only guards running_ itself.
  run_report report = handle->wait();
  lock.lock();
  running_.reset();
  out.cancelled = cancel_.load() || report.cancelled;
  out.outcome = report.outcome;
  out.launch_error = report.failure;
  out.report_json = std::move(report.json);
  return out;
}

adapter_run sandbox_adapter::run_captured(const std::shared_ptr<const sandbox_plan>& plan_ptr,
                                          const launch_request& request, const tool_io& io) {
  const sandbox_plan& plan = *plan_ptr;
  adapter_run out;
  run_request req;
  req.launch = request;
  req.stdin_spec = io.stdin_fd >= 0 ? stdio_spec::from(io.stdin_fd) : stdio_spec::pipe();
  req.stdout_spec = stdio_spec::pipe();
  req.stderr_spec = stdio_spec::pipe();
  std::unique_lock lock(mutex_);
  if (cancel_.load()) {
    out.cancelled = true;
    return out;
  }
  const auto start = std::chrono::steady_clock::now();
  std::optional<result<run_handle>> started;
  if (io.pool != nullptr) {
    auto pool_plan = io.pool->plan();
    if (!pool_plan || plan_fingerprint(*pool_plan) != plan_fingerprint(plan)) {
      out.warnings.push_back("pool not used: its plan is not the plan compiled (and shown) for this request; started cold");
    } else if (auto from_pool = io.pool->start(req, plan_ptr); from_pool) {
      // plan_ptr was compiled for this request with the pool's fingerprint:
      // the pool's process may check the run from its watch sets.
      started.emplace(std::move(from_pool));
      out.pooled = true;
    } else {
      out.warnings.push_back("pool not used: " + from_pool.error_value().describe() + "; started cold");
    }
  }
  if (!started) started.emplace(start_run(plan, req));
  if (!*started) {
    out.launch_error = started->error_value();
    out.report_json = launch_failed_report_json(plan, request, started->error_value());
    return out;
  }
  running_ = std::make_unique<run_handle>(std::move(**started));
  run_handle* handle = running_.get();
  lock.unlock();
  capture_options options;
  options.stdin_data = io.stdin_data;
  options.max_output = io.max_output;
  options.on_output = io.on_output;
  if (io.timeout) options.deadline = start + *io.timeout;
  captured_run captured = capture_run(*handle, options);
  lock.lock();
  running_.reset();
  out.cancelled = (cancel_.load() || captured.report.cancelled) && !captured.timed_out;
  out.timed_out = captured.timed_out;
  out.outcome = captured.report.outcome;
  if (out.outcome && captured.timed_out) out.outcome->timed_out = true;
  out.launch_error = captured.report.failure;
  out.report_json = report_with_output(captured.report.json, captured, io.max_output);
  out.stdout_data = std::move(captured.stdout_data);
  out.stderr_data = std::move(captured.stderr_data);
  return out;
}

adapter_run sandbox_adapter::run_on_host(const launch_request& request) {
  adapter_run out;
  std::vector<char*> args;
  for (const auto& a : request.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  auto start = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (cancel_.load()) {
      out.cancelled = true;
      return out;
    }
    int rc = spawn_with_clean_signals(&pid, nullptr, args.data());
    if (rc != 0) {
      out.launch_error = make_error(error_code::command_not_found, "cannot start " + request.argv[0], {}, rc);
    } else {
      host_pid_ = pid;
    }
  }
  json report = {{"schema", 1}, {"backend", "host"}, {"sandbox", false}, {"argv", request.argv},
                 {"note", "no sandbox: backend selection chose host execution for an unrestricted boundary"}};
  if (out.launch_error) {
    report["error"] = out.launch_error->describe();
    out.report_json = canonical(report);
    return out;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard lock(mutex_);
    host_pid_ = -1;
  }
  run_outcome o;
  o.exited = WIFEXITED(status);
  o.exit_code = o.exited ? WEXITSTATUS(status) : 0;
  o.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  o.interrupted = cancel_.load();
  o.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  out.cancelled = cancel_.load();
  out.outcome = o;
  report["outcome"] = {{"exited", o.exited}, {"exit_code", o.exit_code}, {"signal", o.signal}, {"wall_ms", o.wall_ms}};
  out.report_json = canonical(report);
  return out;
}

void sandbox_adapter::cancel() {
  std::lock_guard lock(mutex_);
  cancel_.store(true);
  if (running_) running_->cancel();
  if (host_pid_ > 0) ::kill(host_pid_, SIGTERM);
}

void sandbox_adapter::reset_cancel() {
  std::lock_guard lock(mutex_);
  cancel_.store(false);
}

}  // namespace cordon::governance::detail

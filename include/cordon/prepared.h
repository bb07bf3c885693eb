// cordon/prepared.h — prepared sandboxes: the whole setup of a confined run
// done ahead of time, so that starting a command costs little more than its
// own exec (docs/prepared.md).
//
// prepared_sandbox::prepare() starts a cordon-supervisor helper as
// start_run() does (cordon/run.h: no SIGCHLD, the host's signal handling
// untouched). The helper compiles the plan's policy again on its own host
// facts, refuses unless the fingerprint is the caller's, and sets the
// sandbox up to just before the command: namespaces, the mount table,
// Landlock, capabilities, seccomp, the cgroup and its limits, the broker
// when the plan filters the network. Its PID 1 then waits. start() sends
// only argv, the environment, the working directory and three descriptors;
// PID 1 installs them and execs. The run is supervised and reported exactly
// as an ordinary one, and its report says "prepared": true and
// "prepared_at".
//
// A prepared sandbox is used once: start() consumes it, and nothing of one
// command's sandbox (its /tmp, its processes, its descriptors) reaches
// another's. prepared_pool keeps N of them ready for one plan.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cordon/plan.h"
#include "cordon/result.h"
#include "cordon/run.h"

namespace cordon {

struct prepare_options {
  // The supervisor helper, as run_request::supervisor_path.
  std::string supervisor_path;
};

class prepared_sandbox {
 public:
  prepared_sandbox(prepared_sandbox&&) noexcept;
  prepared_sandbox& operator=(prepared_sandbox&&) noexcept;
  // An unused sandbox is given up: its helper sees the socket close, kills
  // the waiting tree and removes its cgroup.
  ~prepared_sandbox();

  // Starts preparing a sandbox for `plan` and returns at once. Errors:
  // plan_null (no backend), usage_error (a host-execution plan, compiled
  // with sandbox_preference::forbid: it has no sandbox to prepare; run it
  // with start_run), launch_failed with errno (no helper, clone3).
  // Failures of the setup itself come from wait_ready() or start().
  static result<prepared_sandbox> prepare(const sandbox_plan& plan, const prepare_options& options = {});

  // Waits until the sandbox is ready, failed, or `deadline` passes.
  // Returns true when ready, false on the deadline. Errors: the setup's
  // failure (launch_failed with the step and errno, plan_stale when the host
  // changed since `plan` was compiled).
  result<bool> wait_ready(std::chrono::steady_clock::time_point deadline);
  bool ready() const noexcept;
  // When the helper reported the sandbox ready (UTC, milliseconds,
  // "YYYY-MM-DDTHH:MM:SS.mmmZ"); empty before.
  const std::string& prepared_at() const noexcept;
  // plan_fingerprint() of the plan it was prepared for.
  const std::string& fingerprint() const noexcept;
  // steady_clock time of ready (for a pool's age limit).
  std::chrono::steady_clock::time_point ready_since() const noexcept;

  // Starts request.launch in this sandbox (its stdio_specs as start_run
  // takes them) and returns the run's handle; the sandbox is used up
  // whatever the result. Waits for readiness up to 30 s. `plan` is the
  // caller's current plan: a different fingerprint (the policy or a host
  // fact changed) fails closed. Errors: usage_error (used already, empty
  // argv, a descriptor not open), plan_stale (another plan), the setup's
  // failure, launch_failed (the helper is gone). A directory on a standard
  // slot is refused in the run's report, as in an ordinary run; a terminal
  // is relayed as a pipe (no private pty).
  result<run_handle> start(const sandbox_plan& plan, const run_request& request);

  struct state;

 private:
  friend class prepared_pool;  // a pool's process may check the run itself (start(request, compiled_now))
  explicit prepared_sandbox(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

struct pool_options {
  std::size_t size = 2;                 // sandboxes kept ready
  std::string supervisor_path;          // as prepare_options
  // A sandbox ready longer than this is given up and replaced, so that what
  // a plan does not record (a file that appeared, a changed mount) is never
  // older than this when a command starts in it.
  std::chrono::milliseconds max_age{std::chrono::seconds(30)};
  // How long start() waits for a sandbox when none is ready.
  std::chrono::milliseconds wait{std::chrono::seconds(10)};
  // After start() takes a sandbox, its replacement is prepared once that
  // run has ended (its helper exited) or this long after the start,
  // whichever comes first: a short command then does not share the CPU with
  // its replacement's setup (docs/prepared.md, "The pool"). 0: at once.
  std::chrono::milliseconds refill_after{std::chrono::milliseconds(50)};
};

// N prepared sandboxes for one plan, refilled by a thread of its own.
// Thread-safe: any thread may call start(), update() and refresh().
class prepared_pool {
 public:
  prepared_pool(std::shared_ptr<const sandbox_plan> plan, const pool_options& options = {});
  prepared_pool(const prepared_pool&) = delete;
  prepared_pool& operator=(const prepared_pool&) = delete;
  // Gives up every sandbox and stops the refill thread, within about 100 ms
  // even while a helper is still preparing (or hangs).
  ~prepared_pool();

  // Takes a ready sandbox (waiting up to options.wait) and starts the
  // command in it. Errors: those of prepared_sandbox::start; usage_error at
  // once for a plan that cannot be prepared (as prepare()); launch_failed
  // when none became ready in time (with the last preparation's error);
  // plan_stale once a helper found that the host changed (call refresh() or
  // update()).
  result<run_handle> start(const run_request& request);

  // The same, for a command whose plan the caller compiled just now with
  // the pool's fingerprint (the governance runtime compiles one per request,
  // src/governance/sandbox_adapter.cpp): when this process holds watch sets
  // of the plan's writable roots (Linux, docs/deferred-execution.md "The
  // pool's watch sets"; opened by the refill thread), the helper leaves the
  // post-run check of deferred execution to this process, which makes it
  // from the sets and `compiled_now`'s scan as the run's report is read (in
  // run_handle::wait()), and renders the report again with it. Without
  // sets, with a null `compiled_now` or one of another fingerprint, as
  // start(request). Errors: as start(request).
  result<run_handle> start(const run_request& request, std::shared_ptr<const sandbox_plan> compiled_now);

  // A new plan (the policy changed, or the host: compiled again): every
  // sandbox prepared for the old one is given up.
  void update(std::shared_ptr<const sandbox_plan> plan);

  // Compiles the plan's policy again on fresh host facts (the same backend,
  // workspace and cgroup parent); when the fingerprint differs (a
  // repository appeared under a writable root, the cgroup site changed),
  // update()s to the new plan. Returns whether it changed. When it did not
  // and the pool was stale (a preparation had found the host changed, and
  // it changed back), the pool prepares again. Errors: the compile's (the
  // policy cannot run here any more: the pool is emptied).
  //
  // A sandbox is built on the host facts of its preparation: a repository
  // made after it is protected only by a sandbox prepared after refresh()
  // (or after max_age); a command that writes its metadata meanwhile is
  // reported (violations repository_created, hook, ...: docs/prepared.md).
  result<bool> refresh();

  std::size_t ready_count() const;
  std::shared_ptr<const sandbox_plan> plan() const;
  // What the refill thread has done so far, for tests and monitoring: the
  // preparations it started, and the times it looked for work and waited
  // instead for a run started lately (options.refill_after).
  std::uint64_t preparations_started() const;
  std::uint64_t refills_deferred() const;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace cordon

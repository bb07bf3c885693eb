// helper_spawn.h — starting the cordon-supervisor helper, shared by the run
// API (run_helper.cpp) and prepared sandboxes (prepared.cpp); see
// docs/architecture.md, "The run API".
#pragma once

#include <sys/types.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <string>

#include "cordon/plan.h"
#include "cordon/run.h"
#include "posix/unique_fd.h"

namespace cordon {

namespace posix {

// A started helper: its pid, and a pidfd for release_helper().
struct helper_process {
  pid_t pid = -1;
  unique_fd pidfd;
};

// Called once the helper is done with (its control socket reached its end,
// or is being closed): when this process is where orphans come back to (the
// init of its PID namespace, as a container's main program often is, or a
// child subreaper, prctl(2) PR_SET_CHILD_SUBREAPER), the helper became its
// child when the intermediate child left and is reaped here, on a thread
// (exiting_sandboxes.h; a host's own waitpid(-1) may take it first, which
// is harmless), instead of being left a zombie; otherwise init reaps it and
// the pidfd is only closed. Idempotent (the pidfd is taken); never fails.
void release_helper(helper_process& helper) noexcept;

}  // namespace posix

// What a run_handle holds (cordon/run.h).
struct run_handle::state {
  ~state() { posix::release_helper(helper); }
  posix::helper_process helper;  // the pid, for run_handle::pid()
  unique_fd control;
  unique_fd stdin_pipe, stdout_pipe, stderr_pipe;
  std::string received;
  std::optional<run_report> report;
  // Run once on the report as soon as it is read, before any wait returns
  // it: a pooled run's post-run check in the pool's process
  // (posix/prepared.cpp, linux/pool_watch.h).
  std::function<void(run_report&)> after_report;
  // Atomic: cancel() may run on another thread than wait_until().
  std::atomic<bool> finished{false};
  std::atomic<bool> cancelled{false};
};

namespace posix {

// The helper executable: `configured`, else $CORDON_SUPERVISOR, else the
// installed path, else the build tree's.
std::string supervisor_path(const std::string& configured);

// A descriptor above 9 for one standard stream (so that the helper's dup2
// onto 0-3 never overwrites a source), and for a pipe the caller's end in
// `caller_end`. Errors: launch_failed (pipe2), usage_error (not open).
result<unique_fd> stdio_source(const stdio_spec& spec, int standard_fd, bool input, unique_fd& caller_end);

// Starts `path` as an orphaned grandchild (exit_signal 0, so no SIGCHLD
// here and no waitpid(-1) can take it) with sources[0..3] on 0-3 and
// "--control-fd 3", and every signal blocked (its starters shared this
// process's memory; cordon-supervisor unblocks them first thing). Returns
// its pid and a pidfd (for release_helper()). Errors: launch_failed with
// errno (also when `path` is not an executable file: the message
// names it).
result<helper_process> spawn_helper(const std::string& path, const int sources[4]);

// A socket pair for the helper: the caller's end in `mine`, the helper's
// above 9 returned. Errors: launch_failed with errno.
result<unique_fd> control_pair(unique_fd& mine);

// The fields of the helper's request line every mode shares: the policy,
// workspace, cgroup parent and fingerprint of `plan`.
nlohmann::json plan_request(const sandbox_plan& plan);

// One JSON line for the helper's socket.
std::string json_line(const nlohmann::json& j);

}  // namespace posix
}  // namespace cordon

// cordon/fs_worker.h — the confined filesystem worker's client
// (docs/fs-worker.md): an agent's file tools (read, write, edit, format_json,
// glob, grep, apply_patch, stat, list) run in a long-lived process under the
// same plan as its commands, started with the run API (cordon/run.h), so
// they cannot do more than the sandbox allows, whatever their own path
// handling gets wrong.
//
// The worker speaks one JSON object per line (requests in, responses out);
// this client frames them, enforces the per-request deadline from outside,
// and collects the final report (every write). It is not thread-safe: one
// thread talks to one worker (start several workers for parallel tools).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "cordon/plan.h"
#include "cordon/result.h"
#include "cordon/run.h"

namespace cordon {

struct fs_worker_options {
  // The worker executable (cordon-fs-worker). Empty: $CORDON_FS_WORKER, else
  // ${libexecdir}/cordon/cordon-fs-worker as installed, else the build tree's.
  std::string worker_path;
  // The supervisor helper for start_run (empty: as run_request says).
  std::string supervisor_path;
  // Per request: the worker stops its own work at this deadline
  // (deadline_exceeded); the client waits this long plus 2 s for the answer,
  // then kills the worker.
  std::chrono::milliseconds request_deadline{10000};
  std::size_t max_request_bytes = 8u << 20;  // one request line, bytes
  std::size_t max_read_bytes = 16u << 20;    // content one read may return, bytes
  std::size_t max_file_bytes = 64u << 20;    // a file edit/patch/grep loads, bytes
  std::size_t max_results = 10000;           // ceiling of glob/grep/list result caps
};

// The executable start() would run for `explicit_path` (the resolution order
// of fs_worker_options::worker_path); "" when none exists.
std::string find_fs_worker(const std::string& explicit_path);

// Whether `plan` makes `worker_path` readable inside its sandbox (it lies
// under one of the plan's read-only or writable binds, or the host root of a
// full read, and not under a mask). False for plans whose backend has no
// mount table (not Linux).
bool fs_worker_visible(const sandbox_plan& plan, const std::string& worker_path);

// `policy` with the worker executable added to filesystem.readable (one
// file, read-only): for a policy whose plan would not make it visible. The
// worker is static, so that one file is all it needs.
sandbox_policy with_fs_worker_readable(sandbox_policy policy, const std::string& worker_path);

// What a finished worker leaves: its final report line
// ({"report": {"requests", "failed", "writes": [...]}}) and the run report.
struct fs_worker_report {
  std::string report_json;  // "" when the worker ended without one (killed, crashed)
  run_report run;
};

class fs_worker {
 public:
  fs_worker(fs_worker&&) noexcept;
  fs_worker& operator=(fs_worker&&) noexcept;
  ~fs_worker();  // a worker still running is killed

  // Starts the worker under `plan` (start_run, stdin and stdout pipes, no
  // host environment). Errors: usage_error (no worker executable found, or
  // the plan does not make it visible: see with_fs_worker_readable),
  // enforcement_unavailable (the plan has no mount table the worker can
  // resolve against), and start_run's errors.
  static result<fs_worker> start(const sandbox_plan& plan, const fs_worker_options& options = {});

  // Sends one request (a JSON object, without a newline) and returns the
  // response line. A refusal is a normal response ({"ok": false, "error":
  // {"code", ...}}); errors here are of the channel: usage_error (a request
  // longer than max_request_bytes or holding a newline), io_error (the worker
  // is gone, or did not answer within the deadline + 2 s: then it is killed
  // and every later call fails).
  result<std::string> call(std::string_view request);

  // Closes the worker's input, reads its final report, waits for the run to
  // end (5 s, then cancels it).
  fs_worker_report finish();

  pid_t pid() const noexcept;

  struct state;

 private:
  explicit fs_worker(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

}  // namespace cordon

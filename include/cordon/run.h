// cordon/run.h — the run API: start a confined command from a plan, wait for
// it with a deadline, cancel it, get its report (docs/architecture.md, "The
// run API").
//
// start_run() works from any thread of a multi-threaded host and never
// touches the host's signal handling: the supervisor is a helper process
// (cordon-supervisor), started as the orphaned grandchild of a clone3 child
// with exit_signal 0, so no SIGCHLD reaches the host, a host's waitpid(-1)
// never reaps it, and the host's signal mask and handlers stay as they are.
// (A host that orphans come back to, the init of its PID namespace or a
// child subreaper, gets its helpers back as children: the library reaps
// them there, see await_exiting_sandboxes().) The helper re-derives the
// plan from the normalized policy and its own host facts and refuses to run
// unless the result equals the caller's plan (same fingerprint).
//
// run_in_this_process() is the same run supervised by the calling thread:
// for single-threaded programs (the `cordon` CLI), which save the helper's
// exec. It blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT for the duration and
// forwards them to the sandbox.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "cordon/backend.h"
#include "cordon/launch.h"
#include "cordon/plan.h"
#include "cordon/result.h"

namespace cordon {

// Exit status conventions of a run (documented in docs/cli.md, modelled on
// timeout(1) and env(1)): 0..123 and 128+N are the command's own.
inline constexpr int exit_timeout = 124;         // the wall-clock timeout fired
inline constexpr int exit_cordon_failed = 125;   // refused or failed before/around the command
inline constexpr int exit_not_executable = 126;  // found but not executable
inline constexpr int exit_not_found = 127;       // not found inside the sandbox

// Where one of the command's standard streams comes from or goes to.
struct stdio_spec {
  enum class mode { inherit, descriptor, pipe };
  mode how = mode::inherit;
  int fd = -1;  // mode::descriptor: the caller's descriptor (duplicated; the caller keeps it)
  static stdio_spec inherit() { return {}; }
  static stdio_spec from(int fd) { return {mode::descriptor, fd}; }
  static stdio_spec pipe() { return {mode::pipe, -1}; }
};

struct run_request {
  launch_request launch;           // argv, working directory, host environment
  stdio_spec stdin_spec, stdout_spec, stderr_spec;
  // The supervisor helper executable. Empty: $CORDON_SUPERVISOR, else the
  // installed libexec path, else the one in the build tree.
  std::string supervisor_path;
};

// The end of one run: the outcome, or the error that kept the command from
// running (or from being supervised to its end), plus the report JSON.
struct run_report {
  std::optional<run_outcome> outcome;  // set when the command ran
  std::optional<error> failure;        // set when it did not (or the supervisor failed)
  bool cancelled = false;              // cancel() ended it
  std::string json;                    // the run report ("schema": 1), cordon/report.h
};

// The exit status a CLI gives for a run: the command's own code, 128+signal,
// 124 timeout, 125 refused/failed (also for a cancelled run killed by
// SIGKILL: 128+9), 126 not executable, 127 not found.
int exit_code_for(const run_report& report) noexcept;
int exit_code_for(const error& err) noexcept;

// A started run. Movable; destroying a handle of a run still going cancels it
// and waits for it.
class run_handle {
 public:
  run_handle(run_handle&&) noexcept;
  run_handle& operator=(run_handle&&) noexcept;
  ~run_handle();

  // The host PID of the supervisor helper (the sandbox's processes are its
  // descendants, in their own PID namespace). It is not the caller's child.
  pid_t pid() const noexcept;
  // The caller's ends of stdio_spec::pipe() streams, or -1. Owned by the
  // handle until taken with take_*: close stdin to give the command EOF.
  int stdin_fd() const noexcept;
  int stdout_fd() const noexcept;
  int stderr_fd() const noexcept;
  int take_stdin() noexcept;
  int take_stdout() noexcept;
  int take_stderr() noexcept;
  // A descriptor that becomes readable when the report (or part of it) has
  // arrived or the helper ended: an event loop polls it, then calls
  // wait_for(0 ms), which returns nullopt while the report is incomplete.
  // Owned by the handle; never read from it.
  int completion_fd() const noexcept;

  // Waits until the run ends or `deadline` passes; nullopt on the deadline
  // (the run goes on). Once it returns a report, every later call returns it
  // again.
  std::optional<run_report> wait_until(std::chrono::steady_clock::time_point deadline);
  std::optional<run_report> wait_for(std::chrono::milliseconds timeout);
  run_report wait();
  // Kills the whole tree (SIGKILL of the sandbox's PID 1, whose namespace
  // dies with it). Idempotent; the report says cancelled = true. Safe to call
  // from another thread while one thread waits (never while the handle is
  // moved or destroyed).
  void cancel() noexcept;

  struct state;

 private:
  friend result<run_handle> start_run(const sandbox_plan& plan, const run_request& request);
  friend class prepared_sandbox;  // cordon/prepared.h
  explicit run_handle(std::unique_ptr<state> s);
  std::unique_ptr<state> state_;
};

// Starts the command under `plan` in a supervisor helper process and returns
// at once. Errors: plan_null... (as launch), usage_error (empty argv, a
// descriptor that is not open), launch_failed with errno (no helper found,
// clone3 failed). Failures after the start (command_not_found, setup
// failures, a re-derived plan that differs) come in the run_report.
result<run_handle> start_run(const sandbox_plan& plan, const run_request& request);

// The same run supervised by the calling thread; blocks until the tree is
// gone (the command and everything it started). The sandbox's PID 1 may
// still be in the kernel's exit when this returns: its last message carried
// all the report needs, and a thread of this process reaps it
// (docs/linux-backend.md); see await_exiting_sandboxes(). Only
// stdio_spec::inherit. For single-threaded programs.
// `with_json` false leaves run_report::json empty for a completed run
// (building it costs a fraction of a millisecond a caller without a report
// target need not pay).
run_report run_in_this_process(const sandbox_plan& plan, const launch_request& request, bool with_json = true);

// Returns once every sandbox PID 1 that run_in_this_process() left exiting
// has been reaped (usually a fraction of a millisecond after the run), and,
// in a process that orphans come back to (the init of its PID namespace, a
// child subreaper), every finished helper of start_run() and of prepared
// sandboxes; at once when there is none. A process that ends right after a
// run, above all with _exit(2), calls it first: a PID 1 it leaves behind
// goes to the host's init, which may never reap it. Thread-safe; never
// fails.
void await_exiting_sandboxes() noexcept;

// Where a report goes (docs/report.md, "Where the report goes"): a file, the
// caller's standard output ("-"), or a descriptor the caller passes.
//
// A file: its directory is opened before anything runs, so that a run whose
// evidence cannot be kept does not happen, and the command cannot redirect
// the report by swapping the directory for a symlink. The directory's
// identity (device, inode) is recorded then and checked again, by path, when
// the report is written after the run (the sandbox's processes are gone by
// then, so nothing inside can move it back in between): a directory moved or
// replaced during the run is an error, and nothing is written where the
// caller would look. The report only ever replaces a regular file: a name
// that is a symlink, device, FIFO, socket or directory is refused at open()
// and again at write() (the atomic rename would otherwise replace
// /dev/stdout's symlink or /dev/null with a regular file).
class report_target {
 public:
  report_target() = default;
  report_target(report_target&&) noexcept;
  report_target& operator=(report_target&&) noexcept;
  ~report_target();
  // Opens the directory of `path`; "-" is the caller's standard output (as
  // to_descriptor(1)). Errors: io_error (with errno) when the directory
  // cannot be opened; usage_error when it cannot be written, `path` names no
  // file, or names something other than a regular file (the message names
  // `--report -` / `--report-fd N` for standard output and descriptors).
  static result<report_target> open(const std::string& path);
  // The report goes to descriptor `fd` (duplicated now with close-on-exec;
  // the caller keeps `fd`), written once, whole, at the end, not atomically.
  // Errors: usage_error when `fd` is not open or not open for writing.
  static result<report_target> to_descriptor(int fd);
  // Writes `text`: a file atomically (temporary file, fsync, rename), so that
  // readers see the old file or the whole new one; a descriptor with write(2)
  // until all is written. Errors: io_error with errno; io_error with EXDEV
  // when the directory was moved or replaced since open(), with ELOOP when
  // the name became something other than a regular file.
  result<void> write(const std::string& text) const;
  bool is_open() const noexcept { return dir_fd_ >= 0 || out_fd_ >= 0; }

 private:
  int dir_fd_ = -1;
  int out_fd_ = -1;        // to_descriptor / "-"
  std::string directory_;  // the directory as the caller named it, re-resolved at write()
  std::string name_;
  dev_t dir_dev_ = 0;
  ino_t dir_ino_ = 0;
};

}  // namespace cordon

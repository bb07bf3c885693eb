// confined_launch.h — starting one gate's command confined.
//
// Today a gate runs as a child `cordon run --policy P --report R -- argv` of
// the same binary: the confinement, the report and the exit statuses are
// exactly those of `cordon run` (docs/cli.md), and parallel gates share no
// state in this process. This is the one place that knows it; the library run
// API can replace it without touching the runner.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "cordon/result.h"

namespace cordon::gates {

struct gate_launch {
  std::string cordon_exe;         // the cordon binary ("/proc/self/exe")
  std::string workspace;          // --workspace
  std::string policy_file;        // --policy: the gate's policy JSON
  std::string report_file;        // --report
  std::string stdout_file;        // created (truncated) for the command's stdout
  std::string stderr_file;        // and its stderr (cordon's own messages too)
  std::string working_directory;  // absolute; inside the workspace
  std::vector<std::string> argv;  // the gate's command
};

// Forks and executes the launcher. The child gets its own process group (so
// that a terminal's ^C reaches only the runner, which stops gates itself),
// /dev/null as stdin, the signal mask `child_mask`, and SIGKILL when the
// runner dies (PR_SET_PDEATHSIG): a killed runner leaves no gate behind.
// Returns the child's pid, which is also its process group id.
// Errors: launch_failed with errno when fork fails. A failure after fork
// (a file that cannot be opened, exec) is the child's exit status 125.
result<pid_t> start_confined_gate(const gate_launch& launch, const sigset_t& child_mask);

}  // namespace cordon::gates

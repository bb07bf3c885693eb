// launcher.h — running a macOS plan: sandbox-exec with the plan's profile.
//
// Declared everywhere, defined only in launcher_apple.cpp, which is compiled
// on Apple platforms alone (src/macos/CMakeLists.txt). On any other host these
// functions do not exist: nothing links against a launcher that was not built.
#pragma once

#include <string>
#include <vector>

#include "cordon/launch.h"
#include "cordon/result.h"
#include "macos/macos_plan.h"

namespace cordon::macos_impl {

// The facts of the Mac this process runs on (native = true): the OS version
// (sysctl kern.osproductversion), the per-user temp dir
// (confstr _CS_DARWIN_USER_TEMP_DIR, realpath'd), `home` and `workspace`
// realpath'd, whether sandbox-exec is executable, and `broker_port` (the port
// the caller's broker already listens on for a filtered policy; 0 otherwise).
// Errors: io_error when a path cannot be resolved.
result<macos_host_facts> read_macos_host_facts(const std::string& home, const std::string& workspace,
                                               std::uint16_t broker_port);

// Runs request.argv under `plan`:
//  1. refuses a plan that is not launchable() (launch_failed; nothing runs);
//  2. creates the per-run directory RUN_TMP (mkdtemp under the user temp dir);
//  3. builds argv (sandbox_exec_argv: the profile text by -p, never a file,
//     so no temporary path is looked up) and the environment
//     (build_environment from request.host_environment) before fork, so the
//     child only makes system calls;
//  4. child: setsid(), RLIMIT_CPU, chdir, closes every descriptor above 2
//     (listed with proc_pidinfo), execve(sandbox-exec);
//  5. parent: waits with kqueue (EVFILT_PROC exit, EVFILT_TIMER deadline),
//     kills the process group with SIGKILL at the deadline and again when the
//     command ends, removes RUN_TMP.
// Errors: launch_failed with errno for each failed step.
result<run_outcome> launch_macos_plan(const macos_plan& plan, const launch_request& request);

}  // namespace cordon::macos_impl

// exit_codes.h — every exit status the `cordon` CLI ends with, in one place.
// A command's execute() returns one of these (or, for a command that runs
// another program, that program's own status); nothing else sets the process
// exit status. docs/errors.md ("Exit status of the CLI") lists the same names
// and values; tests/integration/cli_exit_codes_test.cpp compares the two.
// One exception: after a confined command ran, `cordon run` ends the process
// with _exit() of the status it computed, skipping the teardown of the plan
// (run.cpp, exit_after_run; docs/benchmarks.md). Modelled on timeout(1) and env(1).
#pragma once

#include "cordon/run.h"

namespace cordon::cli {

// The command did what it was asked (every command).
inline constexpr int exit_ok = 0;
// A check answered no: `probe` (the backend is unavailable), `policy explain`
// (the policy would be refused), `audit verify|show` (a bad record), `rules
// test` (an example fails), `gate run` (a selected gate did not pass).
inline constexpr int exit_check_failed = 1;
// `run`, `sidecar`: the wall-clock (or handshake) timeout fired; the tree was killed.
inline constexpr int exit_timeout = 124;
// cordon refused or failed: bad usage, an invalid or refused policy, an input
// it cannot read, sandbox setup failure, an exception at main()'s boundary.
inline constexpr int exit_cordon_failed = 125;
// `run`: the command was found but cannot be executed / was not found inside the sandbox.
inline constexpr int exit_not_executable = 126;
inline constexpr int exit_not_found = 127;
// `run`, `sidecar`, `gate run`: 128+N when signal N ended the command (or stopped the gates).
inline constexpr int exit_signal_base = 128;
// `exec`, `session grow` (docs/governance.md): outside 0..123, 124..127 and 128+N (N <= 64).
inline constexpr int exit_denied = 200;    // a rule or the approver denied the request
inline constexpr int exit_rejected = 201;  // approval unavailable, manual review, stale revision, audit failure

// The library's run statuses (cordon/run.h, exit_code_for) are these.
static_assert(exit_timeout == cordon::exit_timeout && exit_cordon_failed == cordon::exit_cordon_failed &&
              exit_not_executable == cordon::exit_not_executable && exit_not_found == cordon::exit_not_found);

}  // namespace cordon::cli

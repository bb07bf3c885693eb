// exit_codes.h — what `cordon run` exits with. Documented in docs/cli.md and
// `cordon run --help`; modelled on timeout(1) and env(1).
#pragma once

namespace cordon::cli {

// 0..123 and 128+N: the command's own exit code, or 128+N when signal N
// killed it (as a shell reports it).
inline constexpr int exit_timeout = 124;         // the policy's wall-clock timeout fired
inline constexpr int exit_cordon_failed = 125;   // cordon refused or failed: usage, invalid policy,
                                                 // compile refusal, sandbox setup, report not written
inline constexpr int exit_not_executable = 126;  // the command was found but cannot be executed
inline constexpr int exit_not_found = 127;       // the command was not found inside the sandbox
// `cordon exec` (docs/governance.md): outside 0..123, 124..127 and 128+N (N <= 64).
inline constexpr int exit_denied = 200;          // a rule or the approver denied the request
inline constexpr int exit_rejected = 201;        // approval unavailable, manual review, stale revision, audit failure

}  // namespace cordon::cli

// exit_codes.h — what `cordon run` exits with. Documented in docs/cli.md and
// `cordon run --help`; modelled on timeout(1) and env(1).
#pragma once

#include "cordon/run.h"

namespace cordon::cli {

// 0..123 and 128+N: the command's own exit code, or 128+N when signal N
// killed it (as a shell reports it). The values are the library's
// (cordon/run.h, exit_code_for).
inline constexpr int exit_timeout = cordon::exit_timeout;
inline constexpr int exit_cordon_failed = cordon::exit_cordon_failed;
inline constexpr int exit_not_executable = cordon::exit_not_executable;
inline constexpr int exit_not_found = cordon::exit_not_found;
// `cordon exec` (docs/governance.md): outside 0..123, 124..127 and 128+N (N <= 64).
inline constexpr int exit_denied = 200;          // a rule or the approver denied the request
inline constexpr int exit_rejected = 201;        // approval unavailable, manual review, stale revision, audit failure

}  // namespace cordon::cli

// bounded_scan.h — the repository scan run where its memory is bounded
// (docs/deferred-execution.md, "The bound"): a forked child whose address
// space and data segment may grow by at most the bound above what it
// inherited (setrlimit(2) RLIMIT_AS and RLIMIT_DATA, the kernel's count
// since Linux 4.7), which hands its result to the caller over a pipe
// (posix/vcs_scan_codec.h). The caller never runs the walk itself, so no
// workspace can grow the launcher's own memory past the bound: a child that
// passes it (std::bad_alloc, or killed), that outruns the time budget, or
// whose answer is malformed or larger than the bound gives a scan with one
// gap naming the root, which refuses the launch and is a scan_incomplete
// finding after the run. POSIX: fork(2), pipe(2), poll(2), waitpid(2);
// the limits and pidfd_open(2) are Linux's (on macOS the child runs apart
// from the launcher, unlimited: macOS enforces neither limit).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "posix/vcs_scan.h"

namespace cordon::vcs {

// How long the caller waits for the child beyond the scan's own time budget
// (vcs::scan_time_budget_seconds) before it kills it: the gap says so.
inline constexpr int scan_child_grace_seconds = 10;

// Runs `scan` in a child bounded by `memory_bound` bytes and returns what it
// found; on any failure (above) a scan whose only content is one gap at
// `root` with refuses_launch set, the reason naming the bound or the
// failure. Never throws.
vcs_scan run_bounded_scan(const std::string& root, const std::function<vcs_scan()>& scan,
                          std::uint64_t memory_bound = scan_memory_bound_bytes);

// From now on this process forks its scan children without running the
// pthread_atfork(3) handlers it inherited (glibc's _Fork(), or a plain
// clone(2) with SIGCHLD). Only for a single-threaded process whose
// descriptors were closed behind its inherited handlers' backs (the pool's
// scan server, linux/scan_server.h): libuv's child handler, inherited from a
// Node host, closes and reopens the descriptor numbers of its own signal
// pipe, which are the scan pipe's numbers there, and the child's answer
// then met EPIPE (issue 37, measured under the Node package's tests).
void fork_scans_without_atfork_handlers() noexcept;

}  // namespace cordon::vcs

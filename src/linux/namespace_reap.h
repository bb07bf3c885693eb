// namespace_reap.h — PID 1 ends the rest of its PID namespace and reaps it.
//
// When PID 1 of a PID namespace exits, the kernel kills what is left there
// and reaps it with SIGCHLD ignored (zap_pid_ns_processes): those processes'
// CPU time is added to no one, so a background process left behind, or a
// tree cut by the timeout, vanished from the report's timing when the run had
// no cgroup to count it. So PID 1 kills them itself (kill(-1, SIGKILL): every
// process of the namespace but itself) and waits for each before it exits:
// waiting adds a child's time, with the times of what the child waited for,
// to PID 1's RUSAGE_CHILDREN, and PID 1's own rusage reaches the supervisor
// through wait4 (docs/doors.md, "CPU time of a killed tree").
//
// What it cannot count: a process whose parent sets SIGCHLD to SIG_IGN (or
// SA_NOCLDWAIT) is reaped by the kernel with its time added to no one; only
// a cgroup's counter sees that time.
//
// Async-signal-safe (kill, waitpid): callable from PID 1's deadline handler.
#pragma once

namespace cordon::linux_impl {

// How long after the deadline the supervisor waits for PID 1 to have ended
// and reaped the tree before it kills PID 1 itself (whose namespace then
// dies uncounted).
inline constexpr int reap_grace_ms = 200;

// Kills every other process of the caller's PID namespace and reaps them,
// again after each one reaped (a process forked while the first kill went
// round is caught by the next), until PID 1 has no child left (ECHILD).
void kill_and_reap_namespace() noexcept;

}  // namespace cordon::linux_impl

// sandbox_init_steps.h — the steps PID 1 of the sandbox runs, one file per
// mechanism; run_sandbox_init (sandbox_init.cpp) calls them in order:
//
//   sandbox_init_mounts.cpp   the root: staging tmpfs, /proc, /dev, the plan's
//                             mount table, read-only, pivot_root
//   sandbox_init_network.cpp  the network namespace: loopback and its
//                             congestion control, the broker's listeners, the
//                             resolver file
//   sandbox_init_reaper.cpp   PID 1 as init: signal forwarding, the deadline,
//                             reaping every process, the command's status
//
// Child side of the launch (between clone and exec): no allocation, no stdio,
// no destructor that closes; a step that cannot be done ends PID 1 through
// init_fail, which reports the step and errno to the supervisor.
#pragma once

#include <sys/types.h>

#include <cstddef>

#include "linux/sandbox_init.h"

namespace cordon::linux_impl {

// Sends a setup_failed init_message (step, errno, op_index) to the supervisor
// and exits 125. Never returns.
[[noreturn]] void init_fail(const prepared_launch& launch, init_step step, int err, int op_index = -1) noexcept;

// Writes `text` to the existing file `path`. False with errno set on failure.
bool init_write_file(const char* path, const char* text) noexcept;

// Sends `count` (1 to 4) descriptors in one SCM_RIGHTS message. False with
// errno set when the message is not sent.
bool init_send_descriptors(int socket_fd, const int* fds, std::size_t count) noexcept;

// --- Mount application (sandbox_init_mounts.cpp) ---

// Makes every mount a slave, mounts the staging tmpfs at /tmp (with
// /newroot, /oldroot and the mask file) and pivots into it, the host root at
// /oldroot. Steps mount_private, staging_root, pivot_staging.
void enter_staging_root(const prepared_launch& launch) noexcept;

// /newroot: the host root read-only (full root) or an empty tmpfs, a new
// read-only /proc, the private /dev, and the TLS CA bundle when the plan
// terminates TLS (run_tls.h). Steps new_root, proc, dev.
void mount_base_root(const prepared_launch& launch) noexcept;

// The plan's mount table, in order (steps mount_op and mount_identity, with
// the op's index).
void apply_mount_ops(const prepared_launch& launch) noexcept;

// A recursive bind of `source` on `target`, nosuid, optionally read-only and
// nodev. False with errno set on failure.
bool init_bind(const char* source, const char* target, bool read_only, bool nodev) noexcept;

// Makes the tmpfs root and /dev read-only (/dev/shm stays writable), detaches
// the host root and pivots into /newroot, dropping the staging root. Steps
// finalize_root, pivot_new_root.
void finalize_root(const prepared_launch& launch) noexcept;

// --- Network namespace (sandbox_init_network.cpp) ---

// The namespace's TCP congestion control: cubic, else reno, else the
// inherited default (not a control; docs/network.md, "Throughput"). Through
// the host's /proc: before finalize_root.
void loopback_congestion_control() noexcept;

// Brings up the namespace's loopback (step loopback).
void bring_up_loopback(const prepared_launch& launch) noexcept;

// The broker's unix listener, bound in the private /dev before it becomes
// read-only (between mount_base_root and finalize_root). Returns the
// listener; step broker_listeners on failure.
int open_broker_unix_listener(const prepared_launch& launch) noexcept;

// Binds a resolver file naming the broker's DNS socket over the view's
// /etc/resolv.conf when the view has one (before finalize_root).
void overlay_resolv_conf() noexcept;

// Opens the broker's TCP, transparent and DNS sockets on the loopback (which
// is up), sends them with `unix_listener` to the supervisor over
// broker_send_fd, and closes PID 1's copies (step broker_listeners).
void hand_over_broker_listeners(const prepared_launch& launch, int unix_listener) noexcept;

// --- PID 1 as init (sandbox_init_reaper.cpp) ---

// SIGINT, SIGTERM, SIGHUP and SIGQUIT, received by PID 1, go to every other
// process of the namespace (step signals).
void install_signal_forwarding(const prepared_launch& launch) noexcept;

// Arms PID 1's own timer for prepared_launch::deadline_ns (none when 0): at
// the deadline PID 1 kills and reaps the tree, reports timed_out and exits.
void arm_deadline(const prepared_launch& launch) noexcept;

// Reaps every process until `command` has ended, then kills and reaps what
// the command left behind. Returns the command's wait status (0 when waitpid
// fails first).
int reap_tree(pid_t command) noexcept;

// The exited message for the command's wait status, with the tree's CPU time
// and peak RSS (RUSAGE_CHILDREN: everything PID 1 reaped).
init_message exited_message(int wait_status) noexcept;

}  // namespace cordon::linux_impl

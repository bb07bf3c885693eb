// sandbox_init.h — what runs inside the new namespaces, as PID 1.
//
// The supervisor prepares every string and array before clone3(), so the
// child does no allocation and no path logic: it writes its identity maps,
// builds the root from the plan's mount table, locks itself down (no_new_privs,
// Landlock, capabilities, seccomp), forks the command as PID 2 in a new
// session, reaps every process, and reports the command's status. When PID 1
// exits the kernel kills everything left in the PID namespace: that is the
// tree cleanup (pid_namespaces(7)).
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <string>
#include <vector>

#include "linux/linux_plan.h"
#include "linux/stdio_plan.h"

namespace cordon::linux_impl {

// Steps, for error messages. Stable numbering is not needed: only the
// supervisor of the same binary reads them.
enum class init_step : std::int32_t {
  wait_for_supervisor, identity_maps, hostname, mount_private, staging_root, pivot_staging,
  new_root, proc, dev, mount_op, finalize_root, pivot_new_root, loopback, working_directory,
  no_new_privs, landlock, capabilities, seccomp, signals, fork_command, broker_listeners, rlimits, stdio,
  cgroup_namespace, mount_identity,
};
const char* describe_step(init_step step) noexcept;

// timed_out: PID 1 reached the run's deadline itself and is ending the tree
// (the supervisor may be stopped; relay.h).
// ready: a prepared sandbox (cordon/prepared.h) is set up and waits for its
// command on prepared_launch::command_receive_fd.
enum class init_message_kind : std::int32_t { setup_failed = 1, exec_failed = 2, exited = 3, timed_out = 4, ready = 5 };

struct init_message {
  init_message_kind kind = init_message_kind::exited;
  init_step step = init_step::wait_for_supervisor;
  std::int32_t error = 0;      // errno
  std::int32_t op_index = -1;  // mount op (mount_op, mount_identity), Landlock rule (landlock), rlimit (rlimits)
  std::int32_t wait_status = 0;  // of the command (PID 2)
  std::int64_t user_cpu_us = 0;
  std::int64_t system_cpu_us = 0;
  std::int64_t max_rss_kib = 0;
};

// A prepared sandbox's command, as the supervisor sends it to PID 1 in one
// SOCK_SEQPACKET message: this header, then NUL-terminated strings (the
// working directory, argc arguments, envc environment entries), with up to
// three descriptors (SCM_RIGHTS) for the standard slots.
struct prepared_command_header {
  std::int64_t deadline_ns = 0;  // CLOCK_MONOTONIC; 0: none
  std::int32_t argc = 0;
  std::int32_t envc = 0;
  std::int32_t fd_index[3] = {-1, -1, -1};  // slot i gets the fd_index[i]-th descriptor sent; -1: none
  stdio_handoff stdio;  // dev_null flags; descriptors are replaced by the received ones
};
// Bounds of a prepared command, so that PID 1 reads it into memory sized
// before the clone (it allocates nothing).
inline constexpr std::size_t prepared_command_max_bytes = 256 * 1024;
inline constexpr std::size_t prepared_command_max_words = 8192;  // argc + envc

// Everything the child needs, as C strings owned by this struct.
struct prepared_launch {
  const linux_plan_payload* payload = nullptr;
  std::string uid_map;  // "U U 1\n"
  std::string gid_map;
  // Mount op paths with the staging prefixes, index-aligned with payload->mounts.ops.
  std::vector<std::string> op_source;  // "/oldroot" + path
  std::vector<std::string> op_target;  // "/newroot" + path
  std::string working_directory;
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;  // null-terminated
  int sync_read_fd = -1;          // EOF without a byte = supervisor gone: exit
  int status_write_fd = -1;       // init_message stream to the supervisor
  int notify_send_fd = -1;        // unix socket: the seccomp listener goes to the supervisor
  int broker_send_fd = -1;        // unix socket: the broker's listeners go to the supervisor
  const std::string* ca_bundle = nullptr;  // tls "terminate": the bundle PID 1 installs (run_tls.h)
  // stdio: what PID 1 moves onto descriptors 0-2 (stdio_plan.h).
  stdio_handoff stdio;
  // The run's deadline on CLOCK_MONOTONIC (nanoseconds; 0: none). PID 1
  // enforces it as well as the supervisor, so a stopped cordon cannot
  // stretch the timeout.
  std::int64_t deadline_ns = 0;
  // A prepared sandbox (cordon/prepared.h): PID 1 sets everything up to just
  // before the command (the root, Landlock, capabilities, seccomp, signal
  // forwarding), reports init_message_kind::ready, and reads the command
  // (prepared_command_header) from this socket into command_buffer; argv and
  // envp are sized to prepared_command_max_words + 1. -1: an ordinary launch.
  int command_receive_fd = -1;
  std::vector<char> command_buffer;
};

// Runs as PID 1 of the new namespaces (its own copy of `launch`: a prepared
// sandbox fills in the command). Never returns.
[[noreturn]] void run_sandbox_init(prepared_launch& launch) noexcept;

}  // namespace cordon::linux_impl

// sandbox_init.h — what runs inside the new namespaces, as PID 1.
//
// PID 1 starts while the supervisor is still compiling the plan. It first
// does what depends on the policy alone: writes its identity maps, sets the
// host name, and builds the staging root with the new root's base, /proc and
// /dev. Then it waits for its launch image (launch_image.h: the mount table,
// Landlock rules, seccomp program, limits, argv and environment), which only
// a compiled plan produces, and continues: the mount table, lock-down
// (no_new_privs, Landlock, capabilities, seccomp), the command as PID 2 in a
// new session, reaping every process, and reporting the command's status. It
// does no allocation and no path logic. When PID 1 exits the kernel kills
// everything left in the PID namespace: that is the tree cleanup
// (pid_namespaces(7)).
#pragma once

#include <cstdint>

namespace cordon::linux_impl {

// Steps, for error messages. Stable numbering is not needed: only the
// supervisor of the same binary reads them.
enum class init_step : std::int32_t {
  wait_for_supervisor, identity_maps, hostname, mount_private, staging_root, pivot_staging,
  new_root, proc, dev, receive_plan, mount_op, finalize_root, pivot_new_root, loopback, working_directory,
  no_new_privs, landlock, capabilities, seccomp, signals, fork_command,
};
const char* describe_step(init_step step) noexcept;

enum class init_message_kind : std::int32_t { setup_failed = 1, exec_failed = 2, exited = 3 };

struct init_message {
  init_message_kind kind = init_message_kind::exited;
  init_step step = init_step::wait_for_supervisor;
  std::int32_t error = 0;      // errno
  std::int32_t op_index = -1;  // mount op, when step == mount_op
  std::int32_t wait_status = 0;  // of the command (PID 2)
  std::int64_t user_cpu_us = 0;
  std::int64_t system_cpu_us = 0;
  std::int64_t max_rss_kib = 0;
};

// What PID 1 knows when it starts (clone3 copies it in): enough for the steps
// that depend on the policy alone. Fixed-size, so that nothing of it lives on
// the heap.
struct sandbox_start {
  char uid_map[48] = {};  // "U U 1\n"
  char gid_map[48] = {};
  bool full_root = false;  // the new root's base: the host root read-only, or an empty tmpfs
  int image_read_fd = -1;  // the launch image arrives here; end of file without one: exit
  int status_write_fd = -1;  // init_message stream to the supervisor
  int notify_send_fd = -1;   // unix socket: the seccomp listener goes to the supervisor
  int supervisor_fds[4] = {-1, -1, -1, -1};  // the supervisor's ends: PID 1 closes its copies
};

// Runs as PID 1 of the new namespaces. Never returns.
[[noreturn]] void run_sandbox_init(const sandbox_start& start) noexcept;

}  // namespace cordon::linux_impl

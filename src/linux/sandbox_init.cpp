// PID 1 of the sandbox: the ordered sequence of its steps (run_sandbox_init),
// the command's process, and a prepared sandbox's wait for its command. The
// steps' mechanisms live in their own files (sandbox_init_steps.h): mount
// application, the network namespace, and PID 1 as init (the reaper).
// Async-signal-safe style throughout: no allocation, no stdio, only system
// calls on strings prepared by the supervisor.
#include "linux/sandbox_init.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "linux/capabilities.h"
#include "linux/namespaces.h"
#include "linux/pty.h"
#include "linux/sandbox_init_steps.h"
#include "posix/scm_rights.h"

extern char** environ;

namespace cordon::linux_impl {

void init_fail(const prepared_launch& launch, init_step step, int err, int op_index) noexcept {
  init_message message;
  message.kind = init_message_kind::setup_failed;
  message.step = step;
  message.error = err;
  message.op_index = op_index;
  ssize_t ignored = ::write(launch.status_write_fd, &message, sizeof message);
  (void)ignored;
  ::_exit(125);
}

bool init_write_file(const char* path, const char* text) noexcept {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::size_t len = std::strlen(text);
  bool ok = ::write(fd, text, len) == static_cast<ssize_t>(len);
  int saved = errno;
  ::close(fd);
  errno = saved;
  return ok;
}

bool init_send_descriptors(int socket_fd, const int* fds, std::size_t count) noexcept {
  char byte = 'L';
  iovec io{&byte, 1};
  scm_rights_space space;
  if (count == 0 || count > 4) return false;
  msghdr message = rights_message(io, space, fds, count);
  return ::sendmsg(socket_fd, &message, MSG_NOSIGNAL) == 1;
}

namespace {

// Every signal back to its default disposition. What the supervisor or its
// host ignored (a host under nohup ignores SIGHUP; the relay ignores
// SIGTTOU) would stay ignored across exec and reach the command. PID 1 only
// installs handlers after this, never SIG_IGN, so the command needs no reset
// of its own (exec_command).
void reset_dispositions() noexcept {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &action, nullptr);
}

// What the command's process reports through the exec pipe when it does not
// reach the command.
enum class command_failure_kind : std::int32_t { exec = 1, rlimit = 2 };
struct command_failure {
  command_failure_kind kind = command_failure_kind::exec;
  std::int32_t error = 0;  // errno
  std::int32_t index = -1;  // rlimit: index in payload->rlimits
};

[[noreturn]] void exec_command(const prepared_launch& launch, int exec_error_fd) noexcept {
  ::setsid();  // a session of its own: the caller's terminal is not its controlling terminal
  take_controlling_terminal(launch.stdio);  // the private pty, when it has one (pty.h)
  // Every disposition is the default at exec: PID 1 reset them all before
  // it installed its handlers (reset_dispositions), and exec resets a
  // handled signal. Not done again here, on the command's critical path.
  sigset_t empty;
  ::sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  // A limit the plan promises must hold: a failed setrlimit fails the
  // launch (reported as the rlimits step, with the limit's index).
  const auto& rlimits = launch.payload->rlimits;
  for (std::size_t i = 0; i < rlimits.size(); ++i) {
    struct rlimit value {rlimits[i].value, rlimits[i].value};
    if (::setrlimit(rlimits[i].resource, &value) != 0) {
      command_failure failure{command_failure_kind::rlimit, errno, static_cast<std::int32_t>(i)};
      ssize_t ignored = ::write(exec_error_fd, &failure, sizeof failure);
      (void)ignored;
      ::_exit(125);
    }
  }
  // Every descriptor above stderr closes at exec, including the error pipe.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  environ = const_cast<char**>(launch.envp.data());
  ::execvp(launch.argv[0], const_cast<char* const*>(launch.argv.data()));
  command_failure failure{command_failure_kind::exec, errno, -1};
  ssize_t ignored = ::write(exec_error_fd, &failure, sizeof failure);
  (void)ignored;
  ::_exit(127);
}

// Sends `message` to the supervisor (best effort: it may be gone).
void report(const prepared_launch& launch, init_message_kind kind) noexcept {
  init_message message;
  message.kind = kind;
  ssize_t ignored = ::write(launch.status_write_fd, &message, sizeof message);
  (void)ignored;
}

// Points argv (or envp) at `count` NUL-terminated strings from `cursor`;
// false when they do not fit in [cursor, end).
bool take_words(char*& cursor, const char* end, std::int32_t count, std::vector<char*>& words) noexcept {
  for (std::int32_t i = 0; i < count; ++i) {
    char* nul = static_cast<char*>(std::memchr(cursor, '\0', static_cast<std::size_t>(end - cursor)));
    if (nul == nullptr) return false;
    words[static_cast<std::size_t>(i)] = cursor;
    cursor = nul + 1;
  }
  words[static_cast<std::size_t>(count)] = nullptr;
  return true;
}

bool skip_word(char*& cursor, const char* end) noexcept {
  char* nul = static_cast<char*>(std::memchr(cursor, '\0', static_cast<std::size_t>(end - cursor)));
  if (nul == nullptr) return false;
  cursor = nul + 1;
  return true;
}

// A prepared sandbox waits here, locked down, for its command: the strings
// land in the buffer sized before the clone, the standard descriptors are
// installed as an ordinary launch installs them, and the working directory
// is entered (path rules do not govern chdir; the mount table decides what
// exists). EOF means the supervisor gave the sandbox up: PID 1 leaves, and
// the namespace with it.
void receive_command(prepared_launch& launch) noexcept {
  std::vector<char>& buffer = launch.command_buffer;
  iovec io{buffer.data(), buffer.size()};
  scm_rights_space space;
  msghdr message = receiving_message(io, space);
  ssize_t n;
  do {
    n = ::recvmsg(launch.command_receive_fd, &message, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) ::_exit(125);
  int fds[3] = {-1, -1, -1};
  const std::size_t received = take_rights(message, fds, 3);
  prepared_command_header header;
  if ((message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || static_cast<std::size_t>(n) < sizeof header) {
    init_fail(launch, init_step::stdio, EMSGSIZE);
  }
  std::memcpy(&header, buffer.data(), sizeof header);
  char* cursor = buffer.data() + sizeof header;
  const char* end = buffer.data() + n;
  char* working_directory = cursor;
  if (header.argc < 1 || header.envc < 0 ||
      static_cast<std::size_t>(header.argc) + static_cast<std::size_t>(header.envc) > prepared_command_max_words ||
      !skip_word(cursor, end) || !take_words(cursor, end, header.argc, launch.argv) ||
      !take_words(cursor, end, header.envc, launch.envp)) {
    init_fail(launch, init_step::fork_command, EINVAL);
  }
  stdio_handoff stdio = header.stdio;
  for (int slot = 0; slot < 3; ++slot) {
    const std::int32_t index = header.fd_index[slot];
    stdio.child_fd[slot] = index >= 0 && static_cast<std::size_t>(index) < received ? fds[index] : -1;
  }
  for (int& fd : stdio.supervisor_fd) fd = -1;  // PID 1 never held the supervisor's relay ends
  stdio.any_terminal = false;                   // a prepared command gets no private pty
  int no_master = -1;
  if (int err = install_stdio(stdio, &no_master); err != 0) init_fail(launch, init_step::stdio, err);
  if (::chdir(working_directory) != 0) init_fail(launch, init_step::working_directory, errno);
  ::close(launch.command_receive_fd);
  launch.deadline_ns = header.deadline_ns;
}

}  // namespace

const char* describe_step(init_step step) noexcept {
  switch (step) {
    case init_step::wait_for_supervisor: return "waiting for the supervisor";
    case init_step::identity_maps: return "writing the user namespace's uid/gid maps";
    case init_step::hostname: return "setting the UTS namespace's host name";
    case init_step::mount_private: return "making the mount namespace private";
    case init_step::staging_root: return "creating the staging root";
    case init_step::pivot_staging: return "entering the staging root";
    case init_step::new_root: return "creating the new root";
    case init_step::proc: return "mounting /proc";
    case init_step::dev: return "building the private /dev";
    case init_step::mount_op: return "applying a mount";
    case init_step::mount_identity:
      return "binding a path that is no longer the object the plan was compiled for (it was moved or replaced)";
    case init_step::finalize_root: return "making the new root read-only";
    case init_step::pivot_new_root: return "entering the new root";
    case init_step::loopback: return "bringing up loopback";
    case init_step::working_directory: return "changing to the working directory";
    case init_step::no_new_privs: return "setting no_new_privs";
    case init_step::landlock: return "applying the Landlock ruleset";
    case init_step::capabilities: return "dropping capabilities";
    case init_step::seccomp: return "installing the seccomp filter";
    case init_step::signals: return "installing signal forwarding";
    case init_step::fork_command: return "starting the command";
    case init_step::broker_listeners: return "opening the network broker's listeners";
    case init_step::rlimits: return "setting a resource limit (setrlimit)";
    case init_step::stdio: return "installing the standard descriptors (private pty, relay pipes)";
    case init_step::cgroup_namespace: return "creating the cgroup namespace (after joining the run's cgroup)";
  }
  return "unknown step";
}

void run_sandbox_init(prepared_launch& launch) noexcept {
  const linux_plan_payload& plan = *launch.payload;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  char byte = 0;
  // The supervisor may have died before PR_SET_PDEATHSIG took effect: then
  // its end of the pipe is closed and this read sees EOF.
  if (::read(launch.sync_read_fd, &byte, 1) != 1) ::_exit(125);
  ::close(launch.sync_read_fd);
  // In the run's cgroup now (the supervisor wrote it before the byte): the
  // cgroup namespace is rooted there (namespaces.h).
  if (::unshare(static_cast<int>(namespaces_after_cgroup_join)) != 0) {
    init_fail(launch, init_step::cgroup_namespace, errno);
  }

  if (!init_write_file("/proc/self/setgroups", "deny") ||
      !init_write_file("/proc/self/uid_map", launch.uid_map.c_str()) ||
      !init_write_file("/proc/self/gid_map", launch.gid_map.c_str())) {
    init_fail(launch, init_step::identity_maps, errno);
  }
  // PID 1 is a copy of cordon: its memory holds the host environment. Not
  // dumpable means the command cannot read /proc/1/environ or /proc/1/mem.
  // (Only after the maps: a non-dumpable process's /proc/self files belong
  // to root, so an unprivileged one could no longer write its uid_map.)
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) init_fail(launch, init_step::identity_maps, errno);
  if (::sethostname("cordon", 6) != 0) init_fail(launch, init_step::hostname, errno);
  // The network namespace's congestion control, through the host's /proc
  // (sandbox_init_network.cpp), then the root (sandbox_init_mounts.cpp) with
  // the broker's unix listener and resolver file in it, then the loopback and
  // the broker's other listeners.
  if (plan.loopback_up) loopback_congestion_control();
  enter_staging_root(launch);
  mount_base_root(launch);
  const int broker_unix = plan.network_broker ? open_broker_unix_listener(launch) : -1;
  apply_mount_ops(launch);
  if (plan.network_broker) overlay_resolv_conf();
  finalize_root(launch);
  if (plan.loopback_up) bring_up_loopback(launch);
  if (plan.network_broker) hand_over_broker_listeners(launch, broker_unix);
  if (launch.broker_send_fd >= 0) ::close(launch.broker_send_fd);
  // stdio (stdio_plan.h): in the final root, before anything of the command
  // exists. A prepared sandbox gets them with its command (receive_command).
  const bool prepared = launch.command_receive_fd >= 0;
  if (!prepared) {
    int pty_master = -1;
    if (int err = install_stdio(launch.stdio, &pty_master); err != 0) init_fail(launch, init_step::stdio, err);
    if (pty_master >= 0) {
      if (!init_send_descriptors(launch.stdio.pty_send_fd, &pty_master, 1)) init_fail(launch, init_step::stdio, errno);
      ::close(pty_master);
    }
    if (launch.stdio.pty_send_fd >= 0) ::close(launch.stdio.pty_send_fd);
    if (::chdir(launch.working_directory.c_str()) != 0) init_fail(launch, init_step::working_directory, errno);
  }

  reset_dispositions();  // before seccomp: 64 calls through no filter
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) init_fail(launch, init_step::no_new_privs, errno);
  if (plan.landlock.abi > 0) {
    int failed_rule = -1;
    int err = apply_landlock(plan.landlock, nullptr, &failed_rule);
    if (err != 0) init_fail(launch, init_step::landlock, err, failed_rule);
  }
  if (int err = drop_all_capabilities(); err != 0) init_fail(launch, init_step::capabilities, err);
  int listener = -1;
  if (int err = install_seccomp_program(plan.seccomp, &listener); err != 0) init_fail(launch, init_step::seccomp, err);
  // The listener answers for every blocked call: it must leave the sandbox
  // before the command exists, and no copy may stay here.
  if (listener >= 0) {
    if (!init_send_descriptors(launch.notify_send_fd, &listener, 1)) init_fail(launch, init_step::seccomp, errno);
    ::close(listener);
  }
  if (launch.notify_send_fd >= 0) ::close(launch.notify_send_fd);

  install_signal_forwarding(launch);  // sandbox_init_reaper.cpp
  sigset_t empty;
  ::sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  if (prepared) {
    report(launch, init_message_kind::ready);
    receive_command(launch);
  }

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) init_fail(launch, init_step::fork_command, errno);
  // vfork: the child borrows PID 1's memory until it execs, instead of copying
  // the page tables of a process the size of cordon. Safe here: the child
  // only makes system calls on prepared data, changes no memory PID 1 reads
  // afterwards (environ aside, which PID 1 never uses), and ends in exec or
  // _exit. Descriptors and signal handlers are not shared with it.
  pid_t command = ::vfork();
  if (command < 0) init_fail(launch, init_step::fork_command, errno);
  if (command == 0) {
    ::close(exec_pipe[0]);
    exec_command(launch, exec_pipe[1]);
  }
  ::close(exec_pipe[1]);
  arm_deadline(launch);
  command_failure failure;
  ssize_t n;
  do {
    n = ::read(exec_pipe[0], &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  ::close(exec_pipe[0]);

  init_message message;
  if (n == static_cast<ssize_t>(sizeof failure)) {
    message.kind = failure.kind == command_failure_kind::rlimit ? init_message_kind::setup_failed
                                                                : init_message_kind::exec_failed;
    message.step = failure.kind == command_failure_kind::rlimit ? init_step::rlimits : init_step::fork_command;
    message.error = failure.error;
    message.op_index = failure.index;
  }
  // Every process reaped, the command's status the run's (sandbox_init_reaper.cpp).
  const int status = reap_tree(command);
  if (n != static_cast<ssize_t>(sizeof failure)) message = exited_message(status);
  ssize_t ignored = ::write(launch.status_write_fd, &message, sizeof message);
  (void)ignored;
  // Exiting as PID 1 makes the kernel SIGKILL every remaining process here.
  ::_exit(0);
}

}  // namespace cordon::linux_impl

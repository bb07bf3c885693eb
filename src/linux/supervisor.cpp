#include "linux/supervisor.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <optional>

#include "broker/broker.h"
#include "core/environment.h"
#include "core/utc_time.h"
#include "linux/broker_process.h"
#include "linux/connect_redirect.h"
#include "linux/cgroups.h"
#include "linux/cpu_watchdog.h"
#include "linux/forwarded_signals.h"
#include "linux/memory_trim.h"
#include "broker/trust_bundle.h"
#include "linux/run_tls.h"
#include "linux/namespace_reap.h"
#include "linux/namespaces.h"
#include "linux/publish_relay.h"
#include "linux/relay.h"
#include "linux/sandbox_init.h"
#include "linux/tree_cgroup.h"
#include "linux/violations.h"
#include "posix/exiting_sandboxes.h"
#include "posix/poll_timeout.h"
#include "posix/scm_rights.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {
namespace {

using steady = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kGraceAfterSignal{2000};
constexpr int kCpuPollMs = 50;
// A run still going after this long gets the supervisor's start-up memory
// back (memory_trim.h); shorter runs end before it would pay off.
constexpr std::chrono::milliseconds kTrimAfter{50};

std::string name_of(const std::string& entry) { return entry.substr(0, entry.find('=')); }

prepared_launch prepare(const sandbox_plan& plan, const linux_plan_payload& payload,
                        const launch_request& request, std::vector<std::string>& env_names) {
  prepared_launch p;
  p.payload = &payload;
  unsigned uid = ::getuid(), gid = ::getgid();
  p.uid_map = std::to_string(uid) + " " + std::to_string(uid) + " 1\n";
  p.gid_map = std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
  for (const auto& op : payload.mounts.ops) {
    p.op_source.push_back("/oldroot" + op.path);
    p.op_target.push_back("/newroot" + op.path);
  }
  p.working_directory = !request.working_directory.empty() ? request.working_directory
                        : !plan.workspace().empty()       ? plan.workspace()
                                                          : "/";
  p.argv_storage = request.argv;
  p.env_storage = core::build_environment(plan.policy(), request.host_environment);
  for (auto& s : p.argv_storage) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (auto& s : p.env_storage) {
    p.envp.push_back(s.data());
    env_names.push_back(name_of(s));
  }
  p.envp.push_back(nullptr);
  return p;
}

error setup_error(const init_message& m, const prepared_launch& p) {
  std::string message = std::string("sandbox setup failed while ") + describe_step(m.step);
  if ((m.step == init_step::mount_op || m.step == init_step::mount_identity) && m.op_index >= 0 &&
      static_cast<std::size_t>(m.op_index) < p.payload->mounts.ops.size()) {
    message += " (" + p.payload->mounts.ops[static_cast<std::size_t>(m.op_index)].path + ")";
  }
  if (m.step == init_step::landlock && m.op_index >= 0 &&
      static_cast<std::size_t>(m.op_index) < p.payload->landlock.rules.size()) {
    message += " (" + p.payload->landlock.rules[static_cast<std::size_t>(m.op_index)].path + ")";
  }
  if (m.step == init_step::rlimits && m.op_index >= 0 &&
      static_cast<std::size_t>(m.op_index) < p.payload->rlimits.size()) {
    const rlimit_setting& limit = p.payload->rlimits[static_cast<std::size_t>(m.op_index)];
    message += " (" + std::string(rlimit_name(limit.resource)) + " = " + std::to_string(limit.value) + ")";
  }
  if (m.step == init_step::working_directory) {
    // A policy that grants nothing where the command starts: say what to add.
    message = "working directory " + p.working_directory +
              " is not visible inside the sandbox (add \"{workspace}\" to filesystem.readable or "
              "filesystem.writable, or run from a directory the policy makes visible)";
  }
  return make_error(error_code::launch_failed, message, {}, m.error);
}

// Both ends of a pipe (read, write) or of a socket pair, close-on-exec.
struct fd_pair {
  unique_fd first, second;
};

result<fd_pair> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "pipe2", {}, errno);
  return fd_pair{unique_fd(fds[0]), unique_fd(fds[1])};
}

result<fd_pair> make_socket_pair(const char* what) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return make_error(error_code::launch_failed, std::string("socketpair for ") + what, {}, errno);
  }
  return fd_pair{unique_fd(fds[0]), unique_fd(fds[1])};
}

// The descriptors between the supervisor and PID 1. PID 1 inherits the
// sandbox's ends at clone3; close_sandbox_ends() drops this process's copies.
struct sandbox_channels {
  unique_fd sync_write, sync_read;        // one byte: "the cgroup holds you, go on" (EOF: the supervisor died)
  unique_fd status_read, status_write;    // the init_message stream
  unique_fd notify_receive, notify_send;  // the seccomp listener (violations.h), with payload.seccomp.notify
  unique_fd broker_receive, broker_send;  // the broker's four listeners, with payload.network_broker
  unique_fd command_send, command_receive;  // a prepared sandbox's command (sandbox_init.h)

  void close_sandbox_ends() noexcept {
    sync_read.reset();
    status_write.reset();
    notify_send.reset();
    broker_send.reset();
    command_receive.reset();
  }
};

result<sandbox_channels> open_channels(const linux_plan_payload& payload, bool prepared) {
  sandbox_channels c;
  auto sync = make_pipe();
  if (!sync) return std::move(sync).error_value();
  auto status = make_pipe();
  if (!status) return std::move(status).error_value();
  c.sync_read = std::move(sync->first);
  c.sync_write = std::move(sync->second);
  c.status_read = std::move(status->first);
  c.status_write = std::move(status->second);
  // Blocked system calls are answered here (violations.h): PID 1 sends the
  // seccomp listener through this pair.
  if (payload.seccomp.notify) {
    auto notify = make_socket_pair("the seccomp listener");
    if (!notify) return std::move(notify).error_value();
    c.notify_receive = std::move(notify->first);
    c.notify_send = std::move(notify->second);
  }
  // Filtered network: PID 1 sends the broker's listeners through this pair;
  // the broker runs on its own thread here until the tree is gone.
  if (payload.network_broker) {
    auto broker_pair = make_socket_pair("the network broker");
    if (!broker_pair) return std::move(broker_pair).error_value();
    c.broker_receive = std::move(broker_pair->first);
    c.broker_send = std::move(broker_pair->second);
  }
  // A prepared sandbox: its command goes to PID 1 as one message, which the
  // socket's buffer must hold whole.
  if (prepared) {
    auto command = make_socket_pair("a prepared sandbox's command");
    if (!command) return std::move(command).error_value();
    int size = static_cast<int>(prepared_command_max_bytes + 4096);
    ::setsockopt(command->first.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    ::setsockopt(command->second.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    c.command_send = std::move(command->first);
    c.command_receive = std::move(command->second);
  }
  return c;
}

// PID 1 of the new namespaces.
struct sandbox_process {
  pid_t pid = -1;
  unique_fd pidfd;
};

// clone3 into the plan's namespaces; the child runs run_sandbox_init(launch)
// and never returns. Errors: launch_failed with errno.
result<sandbox_process> clone_sandbox(const linux_plan_payload& payload, prepared_launch& launch) {
  std::uint64_t flags =
      ((payload.new_network_namespace ? launch_namespaces_with_network : launch_namespaces) &
       ~namespaces_after_cgroup_join) | CLONE_PIDFD;  // PID 1 unshares that one after the cgroup join
  int pidfd = -1;
  struct clone_args args {};
  args.flags = flags;
  args.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) run_sandbox_init(launch);
  if (pid < 0) return make_error(error_code::launch_failed, "clone3 into new namespaces failed", {}, errno);
  sandbox_process process;
  process.pid = static_cast<pid_t>(pid);
  process.pidfd.reset(pidfd);
  return process;
}

// What the supervision loop holds and learns while the tree runs.
struct watch_state {
  init_message message;
  bool have_message = false;
  bool killed = false;
  int cancel_fd = -1;
  std::optional<steady::time_point> kill_at;  // a forwarded signal's grace ends
  std::optional<steady::time_point> trim_at;
  unique_fd listener;  // the seccomp listener, once PID 1 sent it
  violation_log violations;
  std::unique_ptr<broker_process> network;  // the broker's process, serving once PID 1 sent its listeners (broker_process.h)
  connect_redirect redirect;  // transparent routing, once the broker runs (connect_redirect.h)
  std::optional<error> broker_failure;
  // PID 1 sent `exited` and is ending: the namespace holds nothing else, so
  // the run is over although PID 1's own exit (its address space, the mount
  // namespace's teardown) has not finished (posix/exiting_sandboxes.h).
  bool pid1_exiting = false;
};

void kill_tree(const sandbox_process& sandbox, watch_state& w) noexcept {
  ::syscall(SYS_pidfd_send_signal, sandbox.pidfd.get(), SIGKILL, nullptr, 0);
  w.killed = true;
}

// The broker's options, before the clone: everything but its descriptors.
broker::broker_options broker_options_for(const sandbox_plan& plan, const broker::tls_options& tls) {
  broker::broker_options options;
  options.policy = plan.policy().network;
  options.limits.max_connections = broker_connection_budget(options.limits.max_connections);
  options.listener_names = {"127.0.0.1:" + std::to_string(broker_port), broker_socket_path,
                            "transparent:" + std::to_string(broker_transparent_port)};
  options.transparent_listener = 2;
  options.dns_upstream = dns_upstream();
  options.tls = tls;
  return options;
}

// PID 1 sent the broker's listeners (TCP, unix, transparent, DNS): the
// broker's process, started before the clone, gets them and serves.
void start_broker(const sandbox_plan& plan, const sandbox_process& sandbox, unique_fd& receive, watch_state& w) {
  int received_fds[4] = {-1, -1, -1, -1};
  std::size_t received = receive_descriptors(receive.get(), received_fds, 4);
  receive.reset();
  if (received != 4 || !w.network) {
    for (std::size_t i = 0; i < received; ++i) unique_fd discarded(received_fds[i]);
    return;
  }
  const int* listeners = received_fds;
  w.redirect = transparent_routing(listeners[2], broker_transparent_port);
  w.redirect.port_may_be_allowed = ports_rules_may_allow(plan.policy().network);
  w.redirect.dns_port = broker_dns_port;
  auto served = w.network->serve({listeners[0], listeners[1], listeners[2]}, listeners[3], w.redirect.destinations);
  if (!served && !w.killed) {
    // Fail closed: without its broker the run is not what the plan says.
    w.broker_failure = std::move(served).error_value();
    kill_tree(sandbox, w);
  }
}

// The seccomp listener: answer one blocked call, or drop the listener once
// no filtered process is left.
void on_listener(const linux_plan_payload& payload, short revents, watch_state& w) {
  if (revents & POLLIN) {
    if (!answer_notification(w.listener.get(), payload.seccomp, w.violations, &w.redirect)) w.listener.reset();
  } else if (revents & (POLLHUP | POLLERR | POLLNVAL)) {
    w.listener.reset();
  }
}

void read_status(unique_fd& status_read, watch_state& w) {
  init_message incoming;
  ssize_t n = ::read(status_read.get(), &incoming, sizeof incoming);
  if (n == static_cast<ssize_t>(sizeof incoming)) {
    w.message = incoming;
    w.have_message = true;
  } else if (n == 0) {
    status_read.reset();  // PID 1 is gone or going
  }
}

void forward_signals(const forwarded_signals& signals, const sandbox_process& sandbox, run_outcome& outcome,
                     watch_state& w) {
  signalfd_siginfo info{};
  while (::read(signals.fd(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    outcome.interrupted = true;
    ::syscall(SYS_pidfd_send_signal, sandbox.pidfd.get(), static_cast<int>(info.ssi_signo), nullptr, 0);
    if (!w.kill_at) w.kill_at = steady::now() + kGraceAfterSignal;
  }
}

// The poll timeout: the nearest of the deadline, the signal grace and the
// memory trim; -1 for none. (The CPU counter is the watchdog's.)
int poll_timeout(const std::optional<steady::time_point>& deadline, const watch_state& w) {
  int timeout_ms = -1;
  auto now = steady::now();
  for (auto limit : {deadline, w.kill_at, w.trim_at}) {
    if (!limit || w.killed) continue;
    const int bounded = poll_timeout_until(*limit, now);  // rounded up: no spin (posix/poll_timeout.h)
    timeout_ms = timeout_ms < 0 ? bounded : std::min(timeout_ms, bounded);
  }
  return timeout_ms;
}

// Supervises the tree until PID 1 exits (the namespace is then empty):
// cancel, broker and seccomp listeners, PID 1's messages, forwarded
// signals, the memory trim, the CPU limit, the deadline.
void watch(const sandbox_plan& plan, const linux_plan_payload& payload, const sandbox_process& sandbox,
           sandbox_channels& channels, const forwarded_signals& signals, run_cgroup* cgroup,
           std::optional<steady::time_point> deadline, run_outcome& outcome, watch_state& w) {
  const std::uint64_t cpu_limit_ns = payload.tree_limits.cpu_seconds.value_or(0) * 1000000000ULL;  // 0: none
  // Each of PID 1's messages (exited, exec_failed, setup_failed, timed_out)
  // is its last, written before it exits. Without a cgroup, `exited` ends
  // the run: PID 1 has killed and reaped everything else first
  // (namespace_reap.h), so nothing of the command is left, and its own
  // exit, which tears down a copy of this address space and the mount
  // namespace, need not be waited for. With a cgroup, whose counters and
  // removal need PID 1 gone, the status is read once the pidfd says PID 1
  // has exited (one wake-up, not two).
  const bool end_on_message = cgroup == nullptr;
  // The CPU ceiling is read on a thread of its own: answering the seccomp
  // listener below can take seconds (cpu_watchdog.h).
  std::optional<cpu_watchdog> watchdog;
  if (cpu_limit_ns != 0 && cgroup != nullptr) {
    watchdog.emplace(*cgroup, sandbox.pidfd.get(), cpu_limit_ns, std::chrono::milliseconds(kCpuPollMs));
  }
  const auto watchdog_fired = [&] {
    if (!watchdog || !watchdog->fired() || w.killed) return;
    outcome.cpu_limit_hit = true;
    w.killed = true;  // the watchdog sent PID 1 its SIGKILL
  };
  while (true) {
    int timeout_ms = poll_timeout(deadline, w);
    pollfd fds[7] = {{sandbox.pidfd.get(), POLLIN, 0},
                     {end_on_message ? channels.status_read.get() : -1, POLLIN, 0},
                     {signals.fd(), POLLIN, 0},
                     {channels.notify_receive.get(), POLLIN, 0},
                     {w.listener.get(), POLLIN, 0},
                     {channels.broker_receive.get(), POLLIN, 0},
                     {w.cancel_fd, POLLIN, 0}};
    int ready = ::poll(fds, 7, timeout_ms);
    if (ready < 0 && errno != EINTR) break;
    if (fds[6].revents != 0) {
      // The run API's cancel(), or its host went away: kill the tree.
      w.cancel_fd = -1;
      if (!w.killed) {
        outcome.cancelled = true;
        kill_tree(sandbox, w);
      }
    }
    if (fds[5].revents & (POLLIN | POLLHUP)) start_broker(plan, sandbox, channels.broker_receive, w);
    if (fds[3].revents & (POLLIN | POLLHUP)) {
      w.listener.reset(receive_descriptor(channels.notify_receive.get()));
      channels.notify_receive.reset();
    }
    on_listener(payload, fds[4].revents, w);
    if (fds[2].revents & POLLIN) forward_signals(signals, sandbox, outcome, w);
    if (fds[0].revents & POLLIN) break;  // PID 1 exited: the namespace is empty
    if (fds[1].revents & (POLLIN | POLLHUP)) {
      read_status(channels.status_read, w);
      if (w.have_message && w.message.kind == init_message_kind::exited && !w.killed) {
        w.pid1_exiting = true;
        break;
      }
    }
    // Not beside a running broker or the CPU watchdog: their threads use that
    // code and heap all along (memory_trim.h is for a single thread).
    if (w.network || watchdog) w.trim_at.reset();
    if (w.trim_at && steady::now() >= *w.trim_at) {
      release_idle_memory();
      w.trim_at.reset();
    }
    watchdog_fired();
    auto now = steady::now();
    if (!w.killed && ((deadline && now >= *deadline) || (w.kill_at && now >= *w.kill_at))) {
      outcome.timed_out = deadline && now >= *deadline;
      kill_tree(sandbox, w);
    }
  }
  watchdog_fired();  // PID 1's end may have been the watchdog's kill
}

// A prepared sandbox, from the clone to its command: PID 1 sets up and
// reports ready (request.ready is called); the command comes through
// request.next_command once the host's descriptor (cancel_fd) is readable.
// nullopt when there will be no command: PID 1 ended in setup (its message
// says why), or the host gave the sandbox up or a signal came (the tree is
// killed: cancelled, interrupted).
std::optional<prepared_command> await_command(const sandbox_plan& plan, const sandbox_process& sandbox,
                                              sandbox_channels& channels, const forwarded_signals& signals,
                                              const launch_request& request, run_outcome& outcome, watch_state& w) {
  bool ready = false;
  while (!w.killed) {
    pollfd fds[6] = {{sandbox.pidfd.get(), POLLIN, 0},         {channels.status_read.get(), POLLIN, 0},
                     {signals.fd(), POLLIN, 0},                {channels.notify_receive.get(), POLLIN, 0},
                     {channels.broker_receive.get(), POLLIN, 0}, {request.cancel_fd, POLLIN, 0}};
    if (::poll(fds, 6, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[4].revents & (POLLIN | POLLHUP)) start_broker(plan, sandbox, channels.broker_receive, w);
    if (fds[3].revents & (POLLIN | POLLHUP)) {
      w.listener.reset(receive_descriptor(channels.notify_receive.get()));
      channels.notify_receive.reset();
    }
    if (fds[1].revents & (POLLIN | POLLHUP)) {
      read_status(channels.status_read, w);
      if (!ready && w.have_message && w.message.kind == init_message_kind::ready) {
        ready = true;
        w.have_message = false;
        outcome.prepared_at = detail::utc_timestamp_ms_now();
        if (request.ready) request.ready(*outcome.prepared_at);
      }
    }
    if (fds[0].revents & POLLIN) return std::nullopt;  // PID 1 ended in setup
    if (fds[2].revents & POLLIN) {
      signalfd_siginfo info{};
      while (::read(signals.fd(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) outcome.interrupted = true;
      break;  // no command to forward it to
    }
    if (fds[5].revents != 0) {
      std::optional<prepared_command> command;
      if (ready) command = request.next_command();
      if (command) return command;
      outcome.cancelled = true;
      break;
    }
  }
  if (!w.killed) kill_tree(sandbox, w);
  return std::nullopt;
}

// Hands a prepared sandbox its command, derived as an ordinary launch
// derives it: the environment from the policy, the working directory, and
// the standard descriptors classified and relayed the same way (no private
// pty: no terminal here is the caller's own), in one message to PID 1.
// `effective` becomes the request as if the command had been given at the
// start. Errors: usage_error (no command, too large, a directory on a
// slot), launch_failed with errno.
result<void> send_command(const sandbox_plan& plan, prepared_command command, const sandbox_channels& channels,
                          std::int64_t deadline_ns, stdio_relay& relay, prepared_launch& launch,
                          launch_request& effective, run_outcome& outcome) {
  // The command's descriptors become this helper's 0-2, where plan_stdio and
  // the relay look (received ones are above 2: 0-2 were open).
  for (int slot = 0; slot < 3; ++slot) {
    unique_fd given(command.stdio[slot]);
    if (given && given.get() != slot && ::dup2(given.get(), slot) < 0) {
      return make_error(error_code::launch_failed, "dup2 of a prepared command's descriptor", {}, errno);
    }
    if (given.get() == slot) given.release();
  }
  if (command.argv.empty() || command.argv[0].empty()) return make_error(error_code::usage_error, "no command to run");
  effective.argv = std::move(command.argv);
  effective.working_directory = std::move(command.working_directory);
  effective.host_environment = std::move(command.host_environment);
  launch.working_directory = !effective.working_directory.empty() ? effective.working_directory
                             : !plan.workspace().empty()          ? plan.workspace()
                                                                  : "/";
  outcome.working_directory = launch.working_directory;
  const std::vector<std::string> environment = core::build_environment(plan.policy(), effective.host_environment);
  outcome.environment_names.clear();
  for (const auto& entry : environment) outcome.environment_names.push_back(name_of(entry));

  auto stdio = plan_stdio(false);
  if (!stdio) return std::move(stdio).error_value();
  if (auto made = relay.prepare(*stdio, launch.stdio); !made) return std::move(made).error_value();
  prepared_command_header header;
  header.deadline_ns = deadline_ns;
  header.argc = static_cast<std::int32_t>(effective.argv.size());
  header.envc = static_cast<std::int32_t>(environment.size());
  header.stdio = launch.stdio;
  int fds[3];
  std::size_t count = 0;
  for (int slot = 0; slot < 3; ++slot) {
    int fd = stdio->route[slot] == stdio_route::inherit ? slot
             : stdio->route[slot] == stdio_route::relay ? launch.stdio.child_fd[slot]
                                                        : -1;
    if (fd < 0) continue;
    header.fd_index[slot] = static_cast<std::int32_t>(count);
    fds[count++] = fd;
  }
  std::string blob(reinterpret_cast<const char*>(&header), sizeof header);
  blob.append(launch.working_directory).push_back('\0');
  for (const auto& word : effective.argv) blob.append(word).push_back('\0');
  for (const auto& entry : environment) blob.append(entry).push_back('\0');
  if (blob.size() > prepared_command_max_bytes ||
      effective.argv.size() + environment.size() > prepared_command_max_words) {
    return make_error(error_code::usage_error, "the command and its environment exceed what a prepared sandbox takes (" +
                                                   std::to_string(prepared_command_max_bytes / 1024) + " KiB, " +
                                                   std::to_string(prepared_command_max_words) + " words)");
  }
  iovec io{blob.data(), blob.size()};
  scm_rights_space space;
  msghdr message = rights_message(io, space, fds, count);
  if (::sendmsg(channels.command_send.get(), &message, MSG_NOSIGNAL) != static_cast<ssize_t>(blob.size())) {
    return make_error(error_code::launch_failed, "sending the command to the prepared sandbox", {}, errno);
  }
  return ok;
}

// The run's result from PID 1's last message and how PID 1 ended: the
// command's status and usage, or the error that kept it from running.
result<run_outcome> conclude(const launch_request& request, const prepared_launch& launch, const watch_state& w,
                             int wait_status, const struct rusage& usage, run_outcome outcome) {
  if (w.broker_failure) return *w.broker_failure;
  const init_message& message = w.message;
  if (w.have_message && message.kind == init_message_kind::setup_failed) return setup_error(message, launch);
  if (w.have_message && message.kind == init_message_kind::exec_failed) {
    std::string what = "'" + request.argv[0] + "'";
    if (message.error == ENOENT || message.error == ENOTDIR) {
      return make_error(error_code::command_not_found, what + " not found inside the sandbox", {}, message.error);
    }
    return make_error(error_code::command_not_executable, what + " cannot be executed inside the sandbox", {},
                      message.error);
  }
  outcome.user_cpu_ms = usage.ru_utime.tv_sec * 1000 + usage.ru_utime.tv_usec / 1000;
  outcome.system_cpu_ms = usage.ru_stime.tv_sec * 1000 + usage.ru_stime.tv_usec / 1000;
  outcome.max_rss_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
  if (w.have_message && message.kind == init_message_kind::exited && !w.killed) {
    int st = message.wait_status;
    outcome.exited = WIFEXITED(st);
    outcome.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
    outcome.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    outcome.user_cpu_ms = message.user_cpu_us / 1000;
    outcome.system_cpu_ms = message.system_cpu_us / 1000;
    outcome.max_rss_bytes = static_cast<std::uint64_t>(message.max_rss_kib) * 1024;
  } else {
    // The tree was killed (timeout, or no exit after a forwarded signal), or
    // PID 1 died before reporting: report how PID 1 ended.
    outcome.exited = false;
    outcome.signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : SIGKILL;
  }
  return outcome;
}

// The run's clock and deadline start with the command: at the clone, or
// when a prepared sandbox gets its command.
struct run_clock {
  steady::time_point started = steady::now();
  std::optional<steady::time_point> deadline;

  void start(const sandbox_plan& plan, prepared_launch& launch) {
    started = steady::now();
    if (plan.policy().process.timeout_ms) {  // PID 1 holds the deadline too (sandbox_init.h)
      deadline = started + std::chrono::milliseconds(*plan.policy().process.timeout_ms);
      launch.deadline_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline->time_since_epoch()).count();
      *deadline += std::chrono::milliseconds(reap_grace_ms);  // PID 1 ends and reaps the tree first (namespace_reap.h)
    }
  }
};

// Phase: the broker's process starts now, so that its start overlaps the
// sandbox's set-up; it makes the run's authority, whose certificate the
// sandbox's bundle needs before the clone (run_tls.h). None without a broker.
result<std::unique_ptr<broker_process>> start_broker_process(const sandbox_plan& plan,
                                                             const linux_plan_payload& payload, run_tls& tls) {
  std::unique_ptr<broker_process> broker;
  if (!payload.network_broker) return broker;
  std::string certificate;
  auto spawned = broker_process::spawn(broker_options_for(plan, tls.options), &certificate);
  if (!spawned) return std::move(spawned).error_value();
  broker = std::move(*spawned);
  if (tls.options.make_authority) tls.bundle = broker::trust_bundle(certificate);
  return broker;
}

// Phase: the descriptors PID 1 gets. A prepared sandbox's PID 1 reads its
// command into memory it has before the clone.
void hand_channels_to(prepared_launch& launch, const sandbox_channels& channels, bool prepared) {
  launch.sync_read_fd = channels.sync_read.get();
  launch.status_write_fd = channels.status_write.get();
  launch.notify_send_fd = channels.notify_send.get();
  launch.broker_send_fd = channels.broker_send.get();
  if (!prepared) return;
  launch.command_receive_fd = channels.command_receive.get();
  launch.command_buffer.resize(prepared_command_max_bytes);
  launch.argv.assign(prepared_command_max_words + 1, nullptr);
  launch.envp.assign(prepared_command_max_words + 1, nullptr);
}

// Phase: clone PID 1, put it in the run's cgroup, start the published
// ports' relay in its namespaces, then let it go on (the sync byte). Errors:
// those of the clone, of the cgroup attach and of publish_relay::start (PID 1
// is then killed and reaped).
result<sandbox_process> start_sandbox(const linux_plan_payload& payload, bool prepared, prepared_launch& launch,
                                      sandbox_channels& channels, stdio_relay& relay, tree_cgroup& cgroup,
                                      publish_relay& published) {
  auto cloned = clone_sandbox(payload, launch);
  channels.close_sandbox_ends();
  if (!cloned) return std::move(cloned).error_value();
  sandbox_process& sandbox = *cloned;
  if (prepared) {
    // PID 1 has its own copy; this process never reads them. Freed now, not
    // at the end of the run, where unmapping ~400 KiB would delay the report.
    std::vector<char>().swap(launch.command_buffer);
    std::vector<char*>().swap(launch.argv);
    std::vector<char*>().swap(launch.envp);
  }
  if (!prepared) relay.start();  // stdio hook
  if (run_cgroup* tree = cgroup.get()) {
    if (auto attached = tree->attach(sandbox.pid); !attached) {
      ::syscall(SYS_pidfd_send_signal, sandbox.pidfd.get(), SIGKILL, nullptr, 0);
      posix::reap(sandbox.pid);
      return std::move(attached).error_value();
    }
  }
  // Published ports: the relay enters PID 1's namespaces while PID 1 waits
  // here, still dumpable (publish_relay.h).
  if (auto relaying = published.start(sandbox.pid); !relaying) {
    ::syscall(SYS_pidfd_send_signal, sandbox.pidfd.get(), SIGKILL, nullptr, 0);
    posix::reap(sandbox.pid);
    return std::move(relaying).error_value();
  }
  char go = 1;
  if (::write(channels.sync_write.get(), &go, 1) != 1) { /* the child will see EOF and exit */ }
  channels.sync_write.reset();
  return std::move(*cloned);
}

// What a prepared sandbox's phase works on besides the watch state.
struct prepared_delivery {
  const launch_request& request;
  launch_request& effective;  // the command, once it came
  launch_request* ran;        // for the caller (supervisor.h)
};

// Phase (prepared sandbox only): wait for the command, start the clock and
// send it to PID 1. No command (cancelled, a signal, PID 1 gone): nothing
// sent, the watch that follows sees why. Errors: send_command()'s; the tree
// is then killed and reaped.
result<void> deliver_command(const sandbox_plan& plan, const sandbox_process& sandbox, sandbox_channels& channels,
                             const forwarded_signals& signals, prepared_delivery d, prepared_launch& launch,
                             stdio_relay& relay, run_clock& clock, run_outcome& outcome, watch_state& w) {
  auto command = await_command(plan, sandbox, channels, signals, d.request, outcome, w);
  if (!command) return ok;
  clock.start(plan, launch);
  auto sent = send_command(plan, std::move(*command), channels, launch.deadline_ns, relay, launch, d.effective, outcome);
  if (d.ran != nullptr) {
    d.ran->argv = d.effective.argv;
    d.ran->working_directory = d.effective.working_directory;
    d.ran->host_environment = d.effective.host_environment;
  }
  if (!sent) {
    kill_tree(sandbox, w);
    posix::reap(sandbox.pid);
    return std::move(sent).error_value();
  }
  relay.start();
  return ok;
}

// Phase: the tree is gone. Reap PID 1 (or leave it to a thread once it
// reported its exit), finish the stdio, stop the broker (its evidence is
// then complete), read PID 1's last message, put the signal mask back and
// take the cgroup's counters; the cgroup is removed.
void collect(sandbox_process& sandbox, sandbox_channels& channels, stdio_relay& relay, forwarded_signals& signals,
             tree_cgroup& cgroup, const run_clock& clock, int& wait_status, struct rusage& usage,
             run_outcome& outcome, watch_state& w) {
  if (w.pid1_exiting) {
    // The outcome comes from PID 1's message; a thread reaps it (posix/exiting_sandboxes.h).
    posix::reap_when_exited(sandbox.pid, std::move(sandbox.pidfd));
  } else {
    posix::reap(sandbox.pid, &wait_status, &usage);
  }
  relay.finish();  // stdio hook: the tree is gone; what it wrote is copied out, the terminal restored
  outcome.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - clock.started).count();
  outcome.violations = w.violations.entries();
  if (w.network) {
    // The namespace is empty: no client is left, so whatever is still open
    // ends now, and the evidence is complete. A broker that never got its
    // listeners (the sandbox failed first) listened to nothing.
    w.network->stop();
    if (w.network->served()) outcome.network = w.network->evidence();
  }
  if (channels.status_read && !w.pid1_exiting) read_status(channels.status_read, w);  // read already otherwise
  // PID 1 reached the deadline itself (this process was stopped, or late).
  if (w.have_message && w.message.kind == init_message_kind::timed_out) outcome.timed_out = true;
  signals.restore(true);
  if (run_cgroup* tree = cgroup.get()) {
    cgroup_stats stats = tree->stats();
    outcome.peak_memory_bytes = stats.peak_memory_bytes;
    if (stats.cpu_usage_ns) outcome.tree_cpu_ms = *stats.cpu_usage_ns / 1000000;
    outcome.memory_limit_hit = stats.oom_kills > 0;
    outcome.process_limit_hit = stats.forks_refused > 0;
    cgroup.finish();
  }
}

}  // namespace

// The phases above, in order: prepare the launch, start the broker, the
// stdio, the channels and the cgroup, start the sandbox, (a prepared
// sandbox) deliver its command, watch the tree, collect, conclude.
result<run_outcome> supervise_launch(const sandbox_plan& plan, const linux_plan_payload& payload,
                                     const launch_request& request, launch_request* ran) {
  // A prepared sandbox (launch_request::next_command) gets its command later.
  const bool prepared = static_cast<bool>(request.next_command);
  if (!prepared && (request.argv.empty() || request.argv[0].empty())) {
    return make_error(error_code::usage_error, "no command to run");
  }
  run_outcome outcome;
  prepared_launch launch = prepare(plan, payload, request, outcome.environment_names);
  auto tls = prepare_run_tls(plan.policy().network, request.host_environment);  // run_tls.h
  if (!tls) return std::move(tls).error_value();
  auto broker = start_broker_process(plan, payload, *tls);
  if (!broker) return std::move(broker).error_value();
  if (!tls->bundle.empty()) launch.ca_bundle = &tls->bundle;
  outcome.working_directory = launch.working_directory;
  // stdio hook (stdio_plan.h, relay.h): pipes pass through untouched; files,
  // devices and terminals get supervisor-owned pipes or a private pty.
  stdio_relay relay;
  if (!prepared) {
    auto stdio = plan_stdio(plan.policy().process.allow_pty);
    if (!stdio) return std::move(stdio).error_value();
    if (auto made = relay.prepare(*stdio, launch.stdio); !made) return std::move(made).error_value();
  }
  auto opened = open_channels(payload, prepared);
  if (!opened) return std::move(opened).error_value();
  sandbox_channels& channels = *opened;
  hand_channels_to(launch, channels, prepared);
  // Published ports (publish_relay.h): the host's listeners before the sandbox, a port in use refuses the run.
  auto published = publish_relay::bind(plan.policy().network.publish);
  if (!published) return std::move(published).error_value();
  tree_cgroup cgroup;
  if (auto created = cgroup.create(payload.cgroups, payload.tree_limits); !created) {
    return std::move(created).error_value();
  }
  forwarded_signals signals;

  run_clock clock;
  if (!prepared) clock.start(plan, launch);
  auto started = start_sandbox(payload, prepared, launch, channels, relay, cgroup, *published);
  if (!started) return std::move(started).error_value();
  sandbox_process& sandbox = *started;

  watch_state w;
  w.network = std::move(*broker);
  launch_request effective = request;  // a prepared sandbox's command, once it came
  if (prepared) {
    auto delivered = deliver_command(plan, sandbox, channels, signals, {request, effective, ran}, launch, relay,
                                     clock, outcome, w);
    if (!delivered) return std::move(delivered).error_value();
  }
  w.cancel_fd = request.cancel_fd;
  w.trim_at = clock.started + kTrimAfter;
  watch(plan, payload, sandbox, channels, signals, cgroup.get(), clock.deadline, outcome, w);

  int wait_status = 0;
  struct rusage usage {};
  collect(sandbox, channels, relay, signals, cgroup, clock, wait_status, usage, outcome, w);
  outcome.published = published->stop();
  if (published->counts_missing()) {
    outcome.warnings.push_back("network.publish: the relay ended without handing over its counts (reported as 0)");
  }
  return conclude(effective, launch, w, wait_status, usage, std::move(outcome));
}

}  // namespace cordon::linux_impl

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
#include "linux/connect_redirect.h"
#include "linux/cgroups.h"
#include "linux/memory_trim.h"
#include "linux/namespaces.h"
#include "linux/relay.h"
#include "linux/sandbox_init.h"
#include "linux/violations.h"

namespace cordon::linux_impl {
namespace {

using steady = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kGraceAfterSignal{2000};
constexpr int kCpuPollMs = 50;
// A run still going after this long gets the supervisor's start-up memory
// back (memory_trim.h); shorter runs end before it would pay off.
constexpr std::chrono::milliseconds kTrimAfter{50};

struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

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
  if (m.step == init_step::mount_op && m.op_index >= 0 &&
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

// Where the sandbox's allowed DNS queries go: $CORDON_DNS_UPSTREAM
// ("address:port", for tests that run their own resolver on loopback), else
// this host's first nameserver.
std::string dns_upstream() {
  const char* configured = std::getenv("CORDON_DNS_UPSTREAM");
  return configured != nullptr && *configured != '\0' ? std::string(configured) : broker::system_dns_upstream();
}

std::size_t broker_connection_budget(std::size_t wanted) {
  constexpr rlim_t kReserve = 64;
  constexpr rlim_t kPerConnection = 6;
  struct rlimit files {};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0) return wanted;
  if (files.rlim_cur < files.rlim_max) {
    struct rlimit raised = files;
    raised.rlim_cur = files.rlim_max == RLIM_INFINITY ? std::max<rlim_t>(files.rlim_cur, 65536) : files.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) files = raised;
  }
  if (files.rlim_cur == RLIM_INFINITY) return wanted;
  const rlim_t budget = files.rlim_cur > kReserve ? (files.rlim_cur - kReserve) / kPerConnection : 1;
  return std::max<std::size_t>(1, std::min<std::size_t>(wanted, static_cast<std::size_t>(budget)));
}

}  // namespace

result<run_outcome> supervise_launch(const sandbox_plan& plan, const linux_plan_payload& payload,
                                     const launch_request& request) {
  if (request.argv.empty() || request.argv[0].empty()) {
    return make_error(error_code::usage_error, "no command to run");
  }
  run_outcome outcome;
  prepared_launch launch = prepare(plan, payload, request, outcome.environment_names);
  outcome.working_directory = launch.working_directory;
  // stdio hook (stdio_plan.h, relay.h): pipes pass through untouched; files,
  // devices and terminals get supervisor-owned pipes or a private pty.
  stdio_relay relay;
  {
    auto stdio = plan_stdio(plan.policy().process.allow_pty);
    if (!stdio) return std::move(stdio).error_value();
    if (auto made = relay.prepare(*stdio, launch.stdio); !made) return std::move(made).error_value();
  }

  int sync_pipe[2], status_pipe[2];
  if (::pipe2(sync_pipe, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "pipe2", {}, errno);
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(sync_pipe[0]);
    ::close(sync_pipe[1]);
    return make_error(error_code::launch_failed, "pipe2", {}, err);
  }
  fd_guard sync_write{sync_pipe[1]}, status_read{status_pipe[0]};
  launch.sync_read_fd = sync_pipe[0];
  launch.status_write_fd = status_pipe[1];

  // Tree-wide limits: the run's cgroup exists before the tree does, and a
  // janitor removes it even if this process is killed.
  const cgroup_limits& tree_limits = payload.tree_limits;
  std::optional<run_cgroup> cgroup;
  run_cgroup::janitor janitor;
  if (tree_limits.memory_bytes || tree_limits.max_processes || tree_limits.cpu_seconds) {
    auto created = run_cgroup::create(payload.cgroups, tree_limits);
    if (!created) {
      ::close(sync_pipe[0]);
      ::close(status_pipe[1]);
      return std::move(created).error_value();
    }
    cgroup = std::move(*created);
    auto spawned = cgroup->spawn_janitor();
    if (!spawned) {
      ::close(sync_pipe[0]);
      ::close(status_pipe[1]);
      return std::move(spawned).error_value();
    }
    janitor = *spawned;
  }
  fd_guard janitor_trigger{janitor.trigger_fd};
  auto finish_cgroup = [&]() {
    if (!cgroup) return;
    cgroup->remove();
    ::close(janitor_trigger.fd);
    janitor_trigger.fd = -1;
    while (::waitpid(janitor.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  };

  // Forwarded signals are taken through a signalfd, never by default action.
  sigset_t forwarded, previous;
  ::sigemptyset(&forwarded);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaddset(&forwarded, sig);
  ::sigprocmask(SIG_BLOCK, &forwarded, &previous);
  fd_guard signals{::signalfd(-1, &forwarded, SFD_CLOEXEC | SFD_NONBLOCK)};

  // Blocked system calls are answered here (violations.h): PID 1 sends the
  // seccomp listener through this socket pair.
  int notify_pair[2] = {-1, -1};
  if (payload.seccomp.notify &&
      ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, notify_pair) != 0) {
    int err = errno;
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    ::close(sync_pipe[0]);
    ::close(status_pipe[1]);
    finish_cgroup();
    return make_error(error_code::launch_failed, "socketpair for the seccomp listener", {}, err);
  }
  fd_guard notify_receive{notify_pair[0]}, listener{-1};
  launch.notify_send_fd = notify_pair[1];
  violation_log violations;

  // Filtered network: PID 1 sends the broker's two listeners through this
  // pair; the broker runs on its own thread here until the tree is gone.
  int broker_pair[2] = {-1, -1};
  if (payload.network_broker && ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, broker_pair) != 0) {
    int err = errno;
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    ::close(sync_pipe[0]);
    ::close(status_pipe[1]);
    if (notify_pair[1] >= 0) ::close(notify_pair[1]);
    finish_cgroup();
    return make_error(error_code::launch_failed, "socketpair for the network broker", {}, err);
  }
  fd_guard broker_receive{broker_pair[0]};
  launch.broker_send_fd = broker_pair[1];
  std::unique_ptr<broker::network_broker> network;
  connect_redirect redirect;  // transparent routing, once the broker runs (connect_redirect.h)
  std::optional<error> broker_failure;

  std::uint64_t flags =
      ((payload.new_network_namespace ? launch_namespaces_with_network : launch_namespaces) &
       ~namespaces_after_cgroup_join) | CLONE_PIDFD;  // PID 1 unshares that one after the cgroup join
  int pidfd = -1;
  struct clone_args args {};
  args.flags = flags;
  args.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  auto started = steady::now();
  if (plan.policy().process.timeout_ms) {  // PID 1 holds the deadline too (sandbox_init.h)
    launch.deadline_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             (started + std::chrono::milliseconds(*plan.policy().process.timeout_ms)).time_since_epoch())
                             .count();
  }
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) run_sandbox_init(launch);
  int clone_errno = errno;
  ::close(sync_pipe[0]);
  ::close(status_pipe[1]);
  if (broker_pair[1] >= 0) ::close(broker_pair[1]);
  if (pid < 0) {
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    if (notify_pair[1] >= 0) ::close(notify_pair[1]);
    finish_cgroup();
    return make_error(error_code::launch_failed, "clone3 into new namespaces failed", {}, clone_errno);
  }
  fd_guard pid_guard{pidfd};
  relay.start();  // stdio hook
  if (notify_pair[1] >= 0) ::close(notify_pair[1]);
  if (cgroup) {
    if (auto attached = cgroup->attach(static_cast<pid_t>(pid)); !attached) {
      ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
      while (::waitpid(static_cast<pid_t>(pid), nullptr, 0) < 0 && errno == EINTR) {
      }
      ::sigprocmask(SIG_SETMASK, &previous, nullptr);
      finish_cgroup();
      return std::move(attached).error_value();
    }
  }
  char go = 1;
  if (::write(sync_write.fd, &go, 1) != 1) { /* the child will see EOF and exit */ }
  ::close(sync_write.fd);
  sync_write.fd = -1;

  std::optional<steady::time_point> deadline;
  if (plan.policy().process.timeout_ms) {
    deadline = started + std::chrono::milliseconds(*plan.policy().process.timeout_ms);
  }
  std::optional<steady::time_point> kill_at;
  std::optional<steady::time_point> trim_at = started + kTrimAfter;
  init_message message;
  bool have_message = false;
  bool killed = false;
  int cancel_fd = request.cancel_fd;
  const std::uint64_t cpu_limit_ns = tree_limits.cpu_seconds.value_or(0) * 1000000000ULL;  // 0: none
  while (true) {
    int timeout_ms = -1;
    auto now = steady::now();
    for (auto limit : {deadline, kill_at, trim_at}) {
      if (!limit || killed) continue;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*limit - now).count();
      int bounded = static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
      timeout_ms = timeout_ms < 0 ? bounded : std::min(timeout_ms, bounded);
    }
    // The tree's CPU time is read from the cgroup's counter every 50 ms.
    if (cpu_limit_ns != 0 && !killed) timeout_ms = timeout_ms < 0 ? kCpuPollMs : std::min(timeout_ms, kCpuPollMs);
    pollfd fds[7] = {{pidfd, POLLIN, 0},
                     {status_read.fd, POLLIN, 0},
                     {signals.fd, POLLIN, 0},
                     {notify_receive.fd, POLLIN, 0},
                     {listener.fd, POLLIN, 0},
                     {broker_receive.fd, POLLIN, 0},
                     {cancel_fd, POLLIN, 0}};
    int ready = ::poll(fds, 7, timeout_ms);
    if (ready < 0 && errno != EINTR) break;
    if (fds[6].revents != 0) {
      // The run API's cancel(), or its host went away: kill the tree.
      cancel_fd = -1;
      if (!killed) {
        outcome.cancelled = true;
        ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
        killed = true;
      }
    }
    if (fds[5].revents & (POLLIN | POLLHUP)) {
      int listeners[4] = {-1, -1, -1, -1};
      std::size_t received = receive_descriptors(broker_receive.fd, listeners, 4);
      ::close(broker_receive.fd);
      broker_receive.fd = -1;
      if (received == 4) {
        broker::broker_options options;
        options.policy = plan.policy().network;
        // A relayed connection holds six descriptors (two sockets, two
        // pipes): raise this process's soft limit to its hard one for the run
        // (the sandbox, cloned already, keeps its own) and size the broker to
        // it, keeping a reserve for the supervisor's own files.
        options.limits.max_connections = broker_connection_budget(options.limits.max_connections);
        options.listener_names = {"127.0.0.1:" + std::to_string(broker_port), broker_socket_path,
                                  "transparent:" + std::to_string(broker_transparent_port)};
        redirect = transparent_routing(listeners[2], broker_transparent_port);
        redirect.port_may_be_allowed = ports_rules_may_allow(plan.policy().network);
        options.transparent_listener = 2;
        options.destinations = redirect.destinations;
        redirect.dns_port = broker_dns_port;
        options.dns_socket = listeners[3];
        options.dns_upstream = dns_upstream();
        auto started_broker =
            broker::network_broker::start(std::move(options), {listeners[0], listeners[1], listeners[2]});
        if (started_broker) {
          network = std::move(*started_broker);
        } else if (!killed) {
          // Fail closed: without its broker the run is not what the plan says.
          broker_failure = std::move(started_broker).error_value();
          ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
          killed = true;
        }
      } else {
        for (std::size_t i = 0; i < received; ++i) ::close(listeners[i]);
      }
    }
    if (fds[3].revents & (POLLIN | POLLHUP)) {
      listener.fd = receive_descriptor(notify_receive.fd);
      ::close(notify_receive.fd);
      notify_receive.fd = -1;
    }
    if (fds[4].revents & POLLIN) {
      if (!answer_notification(listener.fd, payload.seccomp, violations, &redirect)) {
        ::close(listener.fd);
        listener.fd = -1;
      }
    } else if (fds[4].revents & (POLLHUP | POLLERR | POLLNVAL)) {
      ::close(listener.fd);  // no filtered process is left
      listener.fd = -1;
    }
    if (fds[1].revents & (POLLIN | POLLHUP)) {
      init_message incoming;
      ssize_t n = ::read(status_read.fd, &incoming, sizeof incoming);
      if (n == static_cast<ssize_t>(sizeof incoming)) {
        message = incoming;
        have_message = true;
      } else if (n == 0) {
        ::close(status_read.fd);  // PID 1 is gone or going
        status_read.fd = -1;
      }
    }
    if (fds[2].revents & POLLIN) {
      signalfd_siginfo info{};
      while (::read(signals.fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        outcome.interrupted = true;
        ::syscall(SYS_pidfd_send_signal, pidfd, static_cast<int>(info.ssi_signo), nullptr, 0);
        if (!kill_at) kill_at = steady::now() + kGraceAfterSignal;
      }
    }
    if (fds[0].revents & POLLIN) break;  // PID 1 exited: the namespace is empty
    // Not beside a running broker: its thread uses that code and heap all along.
    if (network) trim_at.reset();
    if (trim_at && steady::now() >= *trim_at) {
      release_idle_memory();
      trim_at.reset();
    }
    if (cpu_limit_ns != 0 && !killed) {
      auto used = cgroup->cpu_usage_ns();
      if (used && *used >= cpu_limit_ns) {
        outcome.cpu_limit_hit = true;
        ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
        killed = true;
      }
    }
    now = steady::now();
    if (!killed && ((deadline && now >= *deadline) || (kill_at && now >= *kill_at))) {
      outcome.timed_out = deadline && now >= *deadline;
      ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
      killed = true;
    }
  }
  int wait_status = 0;
  struct rusage usage {};
  while (::wait4(static_cast<pid_t>(pid), &wait_status, 0, &usage) < 0 && errno == EINTR) {
  }
  relay.finish();  // stdio hook: the tree is gone; what it wrote is copied out, the terminal restored
  outcome.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count();
  outcome.violations = violations.entries();
  if (network) {
    // The namespace is empty: no client is left, so whatever is still open
    // ends now, and the evidence is complete.
    network->stop();
    outcome.network = network->evidence();
  }
  if (status_read.fd >= 0) {
    init_message incoming;
    if (::read(status_read.fd, &incoming, sizeof incoming) == static_cast<ssize_t>(sizeof incoming)) {
      message = incoming;
      have_message = true;
    }
  }
  // PID 1 reached the deadline itself (this process was stopped, or late).
  if (have_message && message.kind == init_message_kind::timed_out) outcome.timed_out = true;
  // Discard forwarded signals still pending before unblocking them.
  signalfd_siginfo drained{};
  while (::read(signals.fd, &drained, sizeof drained) > 0) {
  }
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (cgroup) {
    cgroup_stats stats = cgroup->stats();
    outcome.peak_memory_bytes = stats.peak_memory_bytes;
    if (stats.cpu_usage_ns) outcome.tree_cpu_ms = *stats.cpu_usage_ns / 1000000;
    outcome.memory_limit_hit = stats.oom_kills > 0;
    outcome.process_limit_hit = stats.forks_refused > 0;
    finish_cgroup();
  }

  if (broker_failure) return std::move(*broker_failure);
  if (have_message && message.kind == init_message_kind::setup_failed) return setup_error(message, launch);
  if (have_message && message.kind == init_message_kind::exec_failed) {
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
  if (have_message && message.kind == init_message_kind::exited && !killed) {
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

}  // namespace cordon::linux_impl

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
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>

#include "linux/cgroups.h"
#include "linux/launch_image.h"
#include "linux/memory_trim.h"
#include "linux/sandbox_init.h"
#include "linux/violations.h"

namespace cordon::linux_impl {

// PID 1 and the supervisor's ends of what connects them.
class started_sandbox {
 public:
  sandbox_shape shape;
  pid_t pid = -1;
  int pidfd = -1;
  int image_fd = -1;          // the launch image goes out here (a stream socket)
  int status_fd = -1;         // init_message stream from PID 1
  int notify_receive_fd = -1; // PID 1 sends the seccomp listener here
  int signal_fd = -1;         // forwarded signals, blocked since the start
  sigset_t previous_mask{};
  bool restore_mask = true;   // false once supervise_launch manages the mask itself
};

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

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

sigset_t forwarded_signals() noexcept {
  sigset_t set;
  ::sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaddset(&set, sig);
  return set;
}

// A forwarded signal that arrived before the command started: the launch
// stops there, and the signal gets its ordinary effect once unblocked.
bool forwarded_signal_pending() noexcept {
  sigset_t pending, forwarded = forwarded_signals();
  if (::sigpending(&pending) != 0) return false;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    if (::sigismember(&pending, sig) == 1 && ::sigismember(&forwarded, sig) == 1) return true;
  }
  return false;
}

// Sends what the socket takes without blocking; false when the peer is gone.
bool send_some(int fd, const std::string& bytes, std::size_t& sent) noexcept {
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// PID 1's report, if it already sent one (it failed before its plan came).
std::optional<init_message> early_report(int status_fd) noexcept {
  pollfd p{status_fd, POLLIN, 0};
  init_message m;
  if (::poll(&p, 1, 0) == 1 && ::read(status_fd, &m, sizeof m) == static_cast<ssize_t>(sizeof m)) return m;
  return std::nullopt;
}

std::string name_of(const std::string& entry) { return entry.substr(0, entry.find('=')); }

error setup_error(const init_message& m, const linux_plan_payload& payload, const std::string& working_directory) {
  std::string message = std::string("sandbox setup failed while ") + describe_step(m.step);
  if (m.step == init_step::mount_op && m.op_index >= 0 &&
      static_cast<std::size_t>(m.op_index) < payload.mounts.ops.size()) {
    message += " (" + payload.mounts.ops[static_cast<std::size_t>(m.op_index)].path + ")";
  }
  if (m.step == init_step::working_directory) {
    message = "working directory " + working_directory + " is not visible inside the sandbox";
  }
  return make_error(error_code::launch_failed, message, {}, m.error);
}

}  // namespace

void started_sandbox_deleter::operator()(started_sandbox* s) const noexcept {
  if (s == nullptr) return;
  // Unused: PID 1 is still waiting for its image (or failed before). End of
  // file on the image socket makes it exit; SIGKILL does not wait for that.
  close_fd(s->image_fd);
  if (s->pidfd >= 0) ::syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, nullptr, 0);
  if (s->pid > 0) {
    while (::waitpid(s->pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  close_fd(s->pidfd);
  close_fd(s->status_fd);
  close_fd(s->notify_receive_fd);
  close_fd(s->signal_fd);
  // Not drained: a signal that came meanwhile is delivered now, as if no
  // launch had been started.
  if (s->restore_mask) ::sigprocmask(SIG_SETMASK, &s->previous_mask, nullptr);
  delete s;
}

sandbox_shape shape_of(const linux_plan_payload& payload) {
  sandbox_shape shape;
  shape.new_network_namespace = payload.new_network_namespace;
  shape.full_root = payload.mounts.full_root;
  return shape;
}

result<started_sandbox_ptr> start_sandbox(const sandbox_shape& shape) {
  started_sandbox_ptr s(new started_sandbox);
  s->shape = shape;
  int image_pair[2], status_pipe[2], notify_pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, image_pair) != 0) {
    return make_error(error_code::launch_failed, "socketpair for the launch image", {}, errno);
  }
  s->image_fd = image_pair[0];
  fd_guard image_child{image_pair[1]};
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "pipe2", {}, errno);
  s->status_fd = status_pipe[0];
  fd_guard status_child{status_pipe[1]};
  // Blocked system calls are answered here (violations.h): PID 1 sends the
  // seccomp listener through this socket pair.
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, notify_pair) != 0) {
    return make_error(error_code::launch_failed, "socketpair for the seccomp listener", {}, errno);
  }
  s->notify_receive_fd = notify_pair[0];
  fd_guard notify_child{notify_pair[1]};

  // Forwarded signals are taken through a signalfd, never by default action
  // (the deleter restores the mask when the start is not used).
  sigset_t forwarded = forwarded_signals();
  ::sigprocmask(SIG_BLOCK, &forwarded, &s->previous_mask);
  s->signal_fd = ::signalfd(-1, &forwarded, SFD_CLOEXEC | SFD_NONBLOCK);

  sandbox_start start;
  unsigned uid = ::getuid(), gid = ::getgid();
  std::snprintf(start.uid_map, sizeof start.uid_map, "%u %u 1\n", uid, uid);
  std::snprintf(start.gid_map, sizeof start.gid_map, "%u %u 1\n", gid, gid);
  start.full_root = shape.full_root;
  start.image_read_fd = image_pair[1];
  start.status_write_fd = status_pipe[1];
  start.notify_send_fd = notify_pair[1];
  // PID 1 closes its copies of the supervisor's ends, so that it sees end of
  // file when the supervisor goes away or gives up.
  start.supervisor_fds[0] = s->image_fd;
  start.supervisor_fds[1] = s->status_fd;
  start.supervisor_fds[2] = s->notify_receive_fd;
  start.supervisor_fds[3] = s->signal_fd;

  std::uint64_t flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                        CLONE_NEWCGROUP | CLONE_PIDFD;
  if (shape.new_network_namespace) flags |= CLONE_NEWNET;
  struct clone_args args {};
  args.flags = flags;
  args.pidfd = reinterpret_cast<std::uint64_t>(&s->pidfd);
  args.exit_signal = SIGCHLD;
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) run_sandbox_init(start);
  if (pid < 0) return make_error(error_code::launch_failed, "clone3 into new namespaces failed", {}, errno);
  s->pid = static_cast<pid_t>(pid);
  return s;
}

std::vector<std::string> build_environment(const sandbox_policy& policy,
                                           const std::vector<std::string>& host_environment) {
  const auto& env = policy.environment;
  std::vector<std::string> out;
  auto present = [&](const std::string& name) {
    return std::any_of(out.begin(), out.end(), [&](const std::string& e) { return name_of(e) == name; });
  };
  for (const auto& entry : host_environment) {
    std::string name = name_of(entry);
    if (name.empty() || name.size() == entry.size()) continue;
    bool wanted = env.inherit == environment_inherit::all ||
                  std::find(env.allow.begin(), env.allow.end(), name) != env.allow.end();
    if (wanted && !present(name)) out.push_back(entry);
  }
  for (const auto& entry : env.set) {
    const std::string& name = entry.first;  // clang 14 cannot capture structured bindings
    auto it = std::find_if(out.begin(), out.end(), [&](const std::string& e) { return name_of(e) == name; });
    if (it != out.end()) out.erase(it);
    out.push_back(name + "=" + entry.second);
  }
  return out;
}

result<run_outcome> supervise_launch(const sandbox_plan& plan, const linux_plan_payload& payload,
                                     const launch_request& request, started_sandbox_ptr started) {
  if (request.argv.empty() || request.argv[0].empty()) {
    return make_error(error_code::usage_error, "no command to run");
  }
  const sandbox_shape shape = shape_of(payload);
  if (!started || !(started->shape == shape)) {
    started.reset();
    auto fresh = start_sandbox(shape);
    if (!fresh) return std::move(fresh).error_value();
    started = std::move(*fresh);
  }
  run_outcome outcome;
  outcome.working_directory = !request.working_directory.empty() ? request.working_directory
                              : !payload.workspace.empty()      ? payload.workspace
                                                                : "/";
  std::vector<std::string> environment = build_environment(plan.policy(), request.host_environment);
  for (const auto& entry : environment) outcome.environment_names.push_back(name_of(entry));
  auto started_at = steady::now();

  // Tree-wide limits: the run's cgroup holds PID 1 before PID 1 forks
  // anything, and a janitor removes it even if this process is killed.
  const cgroup_limits& tree_limits = payload.tree_limits;
  std::optional<run_cgroup> cgroup;
  run_cgroup::janitor janitor;
  if (tree_limits.memory_bytes || tree_limits.max_processes || tree_limits.cpu_seconds) {
    auto created = run_cgroup::create(payload.cgroups, tree_limits);
    if (!created) return std::move(created).error_value();
    cgroup = std::move(*created);
    auto spawned = cgroup->spawn_janitor();
    if (!spawned) {
      cgroup->remove();
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
  if (cgroup) {
    if (auto attached = cgroup->attach(started->pid); !attached) {
      auto report = early_report(started->status_fd);
      started.reset();  // kills PID 1
      finish_cgroup();
      if (report && report->kind == init_message_kind::setup_failed) {
        return setup_error(*report, payload, outcome.working_directory);
      }
      return std::move(attached).error_value();
    }
  }
  if (forwarded_signal_pending()) {
    started.reset();  // PID 1 ends; the signal is delivered
    finish_cgroup();
    return make_error(error_code::launch_failed, "interrupted before the command started", {}, EINTR);
  }

  // The go: PID 1 continues once it has its image. It goes out from the poll
  // loop below, so that neither a large image nor a PID 1 stuck in its first
  // steps escapes the deadline; if PID 1 already failed, its report is read there.
  const std::string image = build_launch_image(payload, request.argv, environment, outcome.working_directory);
  std::size_t image_sent = 0;
  fd_guard image_out{started->image_fd};
  started->image_fd = -1;
  if (!send_some(image_out.fd, image, image_sent) || image_sent == image.size()) close_fd(image_out.fd);

  const int pidfd = started->pidfd;
  const pid_t pid = started->pid;
  fd_guard status_read{started->status_fd}, signals{started->signal_fd};
  fd_guard notify_receive{started->notify_receive_fd}, listener{-1};
  started->status_fd = started->signal_fd = started->notify_receive_fd = -1;
  const sigset_t previous = started->previous_mask;
  started->restore_mask = false;  // restored below, after draining what was forwarded
  violation_log violations;
  const auto started_time = started_at;

  std::optional<steady::time_point> deadline;
  if (plan.policy().process.timeout_ms) {
    deadline = started_time + std::chrono::milliseconds(*plan.policy().process.timeout_ms);
  }
  std::optional<steady::time_point> kill_at;
  std::optional<steady::time_point> trim_at = started_time + kTrimAfter;
  init_message message;
  bool have_message = false;
  bool killed = false;
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
    pollfd fds[6] = {{pidfd, POLLIN, 0},
                     {status_read.fd, POLLIN, 0},
                     {signals.fd, POLLIN, 0},
                     {notify_receive.fd, POLLIN, 0},
                     {listener.fd, POLLIN, 0},
                     {image_out.fd, POLLOUT, 0}};
    int ready = ::poll(fds, 6, timeout_ms);
    if (ready < 0 && errno != EINTR) break;
    if (fds[5].revents != 0) {
      if (!send_some(image_out.fd, image, image_sent) || image_sent == image.size()) close_fd(image_out.fd);
    }
    if (fds[3].revents & (POLLIN | POLLHUP)) {
      listener.fd = receive_descriptor(notify_receive.fd);
      ::close(notify_receive.fd);
      notify_receive.fd = -1;
    }
    if (fds[4].revents & POLLIN) {
      if (!answer_notification(listener.fd, payload.seccomp, violations)) {
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
  while (::wait4(pid, &wait_status, 0, &usage) < 0 && errno == EINTR) {
  }
  // PID 1 is reaped: nothing is left for the deleter to do but close the pidfd.
  started->pid = -1;
  close_fd(started->pidfd);
  started.reset();
  outcome.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started_time).count();
  outcome.violations = violations.entries();
  if (status_read.fd >= 0) {
    init_message incoming;
    if (::read(status_read.fd, &incoming, sizeof incoming) == static_cast<ssize_t>(sizeof incoming)) {
      message = incoming;
      have_message = true;
    }
  }
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

  if (have_message && message.kind == init_message_kind::setup_failed) {
    return setup_error(message, payload, outcome.working_directory);
  }
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

// os_sandbox_launch.cpp — supervising one os_sandbox run (os_sandbox_launch.h).
#include "linux/os_sandbox_launch.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <optional>

#include "core/environment.h"
#include "linux/cgroups.h"
#include "linux/cpu_watchdog.h"
#include "linux/os_sandbox_child.h"
#include "linux/os_sandbox_network.h"
#include "linux/post_run_watch.h"
#include "linux/relay.h"
#include "linux/subreaper_cleanup.h"
#include "linux/violations.h"
#include "posix/poll_timeout.h"
#include "posix/unique_fd.h"

namespace cordon::linux_impl {
namespace {

using steady = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kGraceAfterSignal{2000};

// {run_tmp}: made before the run, removed (with what the command left) after it.
class run_tmp_dir {
 public:
  run_tmp_dir() = default;
  run_tmp_dir(const run_tmp_dir&) = delete;
  run_tmp_dir& operator=(const run_tmp_dir&) = delete;
  ~run_tmp_dir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  result<void> create() {
    std::string pattern = "/tmp/cordon-run-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return make_error(error_code::launch_failed, "creating the run's temporary directory under /tmp", {}, errno);
    }
    path_ = pattern;
    return ok;
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

// The policy's environment; with a run directory, TMPDIR (TMP, TEMP when
// set) name it, and so does HOME when the policy points it at /tmp.
std::vector<std::string> environment_for(const sandbox_plan& plan, const launch_request& request,
                                         const std::string& run_tmp) {
  std::vector<std::string> env = core::build_environment(plan.policy(), request.host_environment);
  if (run_tmp.empty()) return env;
  bool has_tmpdir = false;
  for (auto& entry : env) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "TMPDIR" || name == "TMP" || name == "TEMP" || (name == "HOME" && entry == "HOME=/tmp")) {
      entry = name + "=" + run_tmp;
    }
    has_tmpdir = has_tmpdir || name == "TMPDIR";
  }
  if (!has_tmpdir) env.push_back("TMPDIR=" + run_tmp);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct child_process {
  pid_t pid = -1;
  unique_fd pidfd;
};

result<child_process> clone_child(const os_sandbox_child_args& args) {
  int pidfd = -1;
  struct clone_args spec {};
  spec.flags = CLONE_PIDFD;
  spec.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
  spec.exit_signal = SIGCHLD;
  long pid = ::syscall(SYS_clone3, &spec, sizeof spec);
  if (pid < 0 && errno == ENOSYS) {
    // A container runtime's seccomp profile (Docker's default) answers
    // clone3 with ENOSYS: clone(2) with the flags in a register, the pidfd
    // stored through its parent_tid argument, no new stack (a fork).
    pid = ::syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, nullptr, &pidfd, nullptr, nullptr);
  }
  if (pid == 0) run_os_sandbox_child(args);
  if (pid < 0) return make_error(error_code::launch_failed, "clone3 of the command's process failed", {}, errno);
  child_process child;
  child.pid = static_cast<pid_t>(pid);
  child.pidfd.reset(pidfd);
  return child;
}

struct pipe_pair {
  unique_fd read, write;
};

result<pipe_pair> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "pipe2", {}, errno);
  return pipe_pair{unique_fd(fds[0]), unique_fd(fds[1])};
}

// What the loop learns while the command runs.
struct watch_state {
  bool killed = false;
  std::optional<steady::time_point> kill_at;
  unique_fd notify_receive, listener;
  violation_log violations;
};

void kill_command(const child_process& child, watch_state& w) {
  ::kill(-child.pid, SIGKILL);
  ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), SIGKILL, nullptr, 0);
  w.killed = true;
}

// Until the command's process exits: the listener, forwarded signals,
// cancel, the deadline and the CPU watchdog.
void watch(const seccomp_program& seccomp, const child_process& child, int signal_fd, int cancel_fd,
           std::optional<steady::time_point> deadline, const cpu_watchdog* watchdog, run_outcome& outcome,
           watch_state& w) {
  while (true) {
    int timeout_ms = -1;
    for (auto limit : {deadline, w.kill_at}) {
      if (!limit || w.killed) continue;
      const int bounded = poll_timeout_until(*limit, steady::now());
      timeout_ms = timeout_ms < 0 ? bounded : std::min(timeout_ms, bounded);
    }
    if (watchdog != nullptr) timeout_ms = timeout_ms < 0 ? 50 : std::min(timeout_ms, 50);
    pollfd fds[5] = {{child.pidfd.get(), POLLIN, 0},
                     {signal_fd, POLLIN, 0},
                     {w.notify_receive.get(), POLLIN, 0},
                     {w.listener.get(), POLLIN, 0},
                     {cancel_fd, POLLIN, 0}};
    if (::poll(fds, 5, timeout_ms) < 0 && errno != EINTR) break;
    if (fds[4].revents != 0 && !w.killed) {
      outcome.cancelled = true;
      kill_command(child, w);
    }
    if (fds[2].revents & (POLLIN | POLLHUP)) {
      w.listener.reset(receive_descriptor(w.notify_receive.get()));
      w.notify_receive.reset();
    }
    if (fds[3].revents & POLLIN) {
      if (!answer_notification(w.listener.get(), seccomp, w.violations)) w.listener.reset();
    } else if (fds[3].revents & (POLLHUP | POLLERR | POLLNVAL)) {
      w.listener.reset();
    }
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo info{};
      while (::read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        outcome.interrupted = true;
        ::kill(-child.pid, static_cast<int>(info.ssi_signo));
        if (!w.kill_at) w.kill_at = steady::now() + kGraceAfterSignal;
      }
    }
    if (fds[0].revents & POLLIN) break;
    if (watchdog != nullptr && watchdog->fired() && !w.killed) {
      outcome.cpu_limit_hit = true;
      kill_command(child, w);
    }
    const auto now = steady::now();
    if (!w.killed && ((deadline && now >= *deadline) || (w.kill_at && now >= *w.kill_at))) {
      outcome.timed_out = deadline && now >= *deadline;
      kill_command(child, w);
    }
  }
}

// The command's end from its status and the child's failure message.
result<run_outcome> conclude(const launch_request& request, int error_fd, int status, run_outcome outcome) {
  os_sandbox_failure failure;
  if (::read(error_fd, &failure, sizeof failure) == static_cast<ssize_t>(sizeof failure)) {
    if (failure.step == os_sandbox_step::exec) {
      const std::string what = "'" + request.argv[0] + "'";
      if (failure.error == ENOENT || failure.error == ENOTDIR) {
        return make_error(error_code::command_not_found, what + " not found", {}, failure.error);
      }
      return make_error(error_code::command_not_executable, what + " cannot be executed", {}, failure.error);
    }
    return make_error(error_code::launch_failed,
                      std::string("sandbox setup failed while ") + describe_os_sandbox_step(failure.step), {},
                      failure.error);
  }
  if (WIFEXITED(status) && !outcome.timed_out && !outcome.cancelled && !outcome.cpu_limit_hit) {
    outcome.exited = true;
    outcome.exit_code = WEXITSTATUS(status);
  } else {
    outcome.exited = false;
    outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  }
  return outcome;
}

}  // namespace

result<run_outcome> supervise_os_sandbox(const sandbox_plan& plan, const os_sandbox_payload& payload,
                                         const launch_request& request) {
  if (request.next_command) {
    return make_error(error_code::launch_failed,
                      "the linux-os-sandbox backend has no prepared sandboxes (it would gain nothing: it has no "
                      "namespaces to set up ahead); run the command directly");
  }
  if (request.argv.empty() || request.argv[0].empty()) return make_error(error_code::usage_error, "no command to run");
  run_outcome outcome;
  run_tmp_dir tmp;
  landlock_ruleset_plan landlock = payload.landlock;
  if (payload.run_tmp) {
    if (auto made = tmp.create(); !made) return std::move(made).error_value();
    landlock.rules.push_back({tmp.path(), landlock_access::read_write});
  }
  // Filtered: the broker's process starts now, its start overlapping the
  // command's set-up; it serves before the command may run.
  std::optional<os_sandbox_broker> network;
  if (payload.network_broker) {
    auto started = os_sandbox_broker::start(plan);
    if (!started) return std::move(started).error_value();
    network = std::move(*started);
  }
  std::vector<std::string> argv_storage = request.argv;
  std::vector<std::string> env_storage = environment_for(plan, request, tmp.path());
  if (network) point_proxies_at(env_storage, network->port());
  for (const auto& entry : env_storage) outcome.environment_names.push_back(entry.substr(0, entry.find('=')));
  std::vector<char*> argv = pointers(argv_storage), envp = pointers(env_storage);
  outcome.working_directory = !request.working_directory.empty() ? request.working_directory
                              : !plan.workspace().empty()       ? plan.workspace()
                                                                : "/";
  // The command's own sockets in its temporary directory are its to connect to.
  seccomp_program seccomp = payload.seccomp;
  if (!tmp.path().empty() && seccomp.unix_connect_checked) seccomp.unix_sockets_allowed.push_back(tmp.path());
  if (network) seccomp.broker_port = network->port();

  stdio_relay relay;
  auto stdio = plan_stdio(false);  // no private pty without a devpts of our own: a terminal is relayed as a pipe
  if (!stdio) return std::move(stdio).error_value();
  os_sandbox_child_args args;
  if (auto made = relay.prepare(*stdio, args.stdio); !made) return std::move(made).error_value();
  auto go = make_pipe();
  if (!go) return std::move(go).error_value();
  auto errors = make_pipe();
  if (!errors) return std::move(errors).error_value();
  watch_state w;
  unique_fd notify_send;
  if (payload.seccomp.notify) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
      return make_error(error_code::launch_failed, "socketpair for the seccomp listener", {}, errno);
    }
    w.notify_receive.reset(pair[0]);
    notify_send.reset(pair[1]);
  }
  std::optional<run_cgroup> cgroup;
  run_cgroup::janitor janitor;
  const auto& limits = payload.limits;
  if (limits.tree_limits.memory_bytes || limits.tree_limits.max_processes || limits.tree_limits.cpu_seconds) {
    auto created = run_cgroup::create(limits.cgroups, limits.tree_limits);
    if (!created) return std::move(created).error_value();
    cgroup = std::move(*created);
    auto spawned = cgroup->spawn_janitor();
    if (!spawned) return std::move(spawned).error_value();
    janitor = std::move(*spawned);
  }
  args.rlimits = &payload.limits.rlimits;
  args.landlock = &landlock;
  args.seccomp = &seccomp;
  args.working_directory = outcome.working_directory.c_str();
  args.argv = argv.data();
  args.envp = envp.data();
  args.go_fd = go->read.get();
  args.error_fd = errors->write.get();
  args.notify_fd = notify_send.get();
  args.supervisor = ::getpid();
  args.drop_capabilities = ::geteuid() == 0;

  subreaper_scope subreaper;  // orphans of the tree come here, whatever group they moved to
  sigset_t forwarded, previous;
  ::sigemptyset(&forwarded);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaddset(&forwarded, sig);
  ::sigprocmask(SIG_BLOCK, &forwarded, &previous);
  unique_fd signal_fd(::signalfd(-1, &forwarded, SFD_CLOEXEC | SFD_NONBLOCK));
  struct rusage before {};
  ::getrusage(RUSAGE_CHILDREN, &before);

  const auto started = steady::now();
  std::optional<steady::time_point> deadline;
  if (plan.policy().process.timeout_ms) deadline = started + std::chrono::milliseconds(*plan.policy().process.timeout_ms);
  auto cloned = clone_child(args);
  go->read.reset();
  errors->write.reset();
  notify_send.reset();
  if (!cloned) {
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    return std::move(cloned).error_value();
  }
  child_process& child = *cloned;
  relay.start();
  if (cgroup) {
    if (auto attached = cgroup->attach(child.pid); !attached) {
      kill_command(child, w);
      ::waitpid(child.pid, nullptr, 0);
      ::sigprocmask(SIG_SETMASK, &previous, nullptr);
      return std::move(attached).error_value();
    }
  }
  if (network) {
    if (auto served = network->serve(); !served) {
      // Fail closed: without its broker the run is not what the plan says.
      kill_command(child, w);
      ::waitpid(child.pid, nullptr, 0);
      ::sigprocmask(SIG_SETMASK, &previous, nullptr);
      return std::move(served).error_value();
    }
  }
  char byte = 1;
  if (::write(go->write.get(), &byte, 1) != 1) { /* the child sees EOF and exits */ }
  go->write.reset();

  std::optional<cpu_watchdog> watchdog;
  if (cgroup && limits.tree_limits.cpu_seconds) {
    watchdog.emplace(*cgroup, child.pidfd.get(), *limits.tree_limits.cpu_seconds * 1000000000ULL,
                     std::chrono::milliseconds(50));
  }
  watch(seccomp, child, signal_fd.get(), request.cancel_fd, deadline, watchdog ? &*watchdog : nullptr, outcome, w);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  // The tree's cleanup: the command's group, then every orphan that came here.
  std::vector<pid_t> keep;
  if (janitor.pid > 0) keep.push_back(janitor.pid);
  if (network && network->pid() > 0) keep.push_back(network->pid());
  kill_remaining_tree(child.pid, keep);
  watchdog.reset();
  // The command's tree is gone: the broker drains and its evidence is complete.
  if (network) outcome.network = network->finish();
  relay.finish();
  outcome.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - started).count();
  struct rusage after {};
  ::getrusage(RUSAGE_CHILDREN, &after);
  auto ms = [](const timeval& t) { return static_cast<std::int64_t>(t.tv_sec) * 1000 + t.tv_usec / 1000; };
  outcome.user_cpu_ms = ms(after.ru_utime) - ms(before.ru_utime);
  outcome.system_cpu_ms = ms(after.ru_stime) - ms(before.ru_stime);
  outcome.max_rss_bytes = static_cast<std::uint64_t>(after.ru_maxrss) * 1024;
  outcome.violations = w.violations.entries();
  signalfd_siginfo drained{};
  while (::read(signal_fd.get(), &drained, sizeof drained) > 0) {
  }
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (cgroup) {
    cgroup_stats stats = cgroup->stats();
    outcome.peak_memory_bytes = stats.peak_memory_bytes;
    if (stats.cpu_usage_ns) outcome.tree_cpu_ms = *stats.cpu_usage_ns / 1000000;
    outcome.memory_limit_hit = stats.oom_kills > 0;
    outcome.process_limit_hit = stats.forks_refused > 0;
    cgroup->remove();
    janitor.trigger_fd.reset();
    if (janitor.pid > 0) ::waitpid(janitor.pid, nullptr, 0);
  }
  auto concluded = conclude(request, errors->read.get(), status, std::move(outcome));
  // Deferred execution: what the command left in the repositories and the home (linux/post_run_watch.h).
  if (concluded) check_repository_metadata(payload, *concluded);
  return concluded;
}

}  // namespace cordon::linux_impl

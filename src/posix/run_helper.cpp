// The run API's helper-process half (cordon/run.h): start_run spawns the
// supervisor helper with clone3 (exit_signal 0: no SIGCHLD for the host, not
// reapable by the host's waitpid(-1)), hands it the run over a socket, and
// reads the report back. Between clone3 and execve the child makes only
// async-signal-safe calls on data prepared before the clone, which is what a
// multi-threaded parent allows.
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cordon/policy_json.h"
#include "cordon/run.h"
#include "core/outcome_json.h"
#include "posix/socket_io.h"
#include "posix/unique_fd.h"

namespace cordon {

struct run_handle::state {
  pid_t pid = -1;
  unique_fd control;
  unique_fd stdin_pipe, stdout_pipe, stderr_pipe;
  std::string received;
  std::optional<run_report> report;
  // Atomic: cancel() may run on another thread than wait_until().
  std::atomic<bool> finished{false};
  std::atomic<bool> cancelled{false};
};

namespace {

std::string supervisor_path(const run_request& request) {
  if (!request.supervisor_path.empty()) return request.supervisor_path;
  if (const char* env = std::getenv("CORDON_SUPERVISOR"); env != nullptr && env[0] != '\0') return env;
  if (::access(CORDON_SUPERVISOR_INSTALLED, X_OK) == 0) return CORDON_SUPERVISOR_INSTALLED;
#ifdef CORDON_SUPERVISOR_BUILT
  return CORDON_SUPERVISOR_BUILT;
#else
  return CORDON_SUPERVISOR_INSTALLED;
#endif
}

// Where one stream of the helper comes from: a descriptor above 9 (so that
// the child's dup2 onto 0-3 never overwrites a source), and for a pipe the
// caller's end.
result<unique_fd> stdio_source(const stdio_spec& spec, int standard_fd, bool input, unique_fd& caller_end) {
  int source = standard_fd;
  unique_fd pipe_child;
  if (spec.how == stdio_spec::mode::descriptor) source = spec.fd;
  if (spec.how == stdio_spec::mode::pipe) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "pipe2 for stdio", {}, errno);
    caller_end.reset(input ? fds[1] : fds[0]);
    pipe_child.reset(input ? fds[0] : fds[1]);
    source = pipe_child.get();
  }
  int high = ::fcntl(source, F_DUPFD_CLOEXEC, 10);
  if (high < 0) return make_error(error_code::usage_error, "stdio descriptor " + std::to_string(source) + " is not open", {}, errno);
  return unique_fd(high);
}

std::string request_line(const sandbox_plan& plan, const run_request& request) {
  nlohmann::json j = {{"policy", sandbox_policy_to_json(plan.policy())},
                      {"workspace", plan.workspace()},
                      {"cgroup_parent", plan.cgroup_parent()},
                      {"fingerprint", plan_fingerprint(plan)},
                      {"argv", request.launch.argv},
                      {"working_directory", request.launch.working_directory},
                      {"environment", request.launch.host_environment}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

result<run_handle> start_run(const sandbox_plan& plan, const run_request& request) {
  if (plan.backend() == nullptr) return make_error(error_code::plan_null, "the plan has no backend");
  if (request.launch.argv.empty() || request.launch.argv[0].empty()) {
    return make_error(error_code::usage_error, "no command to run");
  }
  auto s = std::make_unique<run_handle::state>();
  auto in = stdio_source(request.stdin_spec, 0, true, s->stdin_pipe);
  if (!in) return std::move(in).error_value();
  auto out = stdio_source(request.stdout_spec, 1, false, s->stdout_pipe);
  if (!out) return std::move(out).error_value();
  auto err = stdio_source(request.stderr_spec, 2, false, s->stderr_pipe);
  if (!err) return std::move(err).error_value();
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return make_error(error_code::launch_failed, "socketpair for the supervisor helper", {}, errno);
  }
  s->control.reset(pair[0]);
  unique_fd helper_end(pair[1]), helper_control(::fcntl(pair[1], F_DUPFD_CLOEXEC, 10));
  helper_end.reset();
  if (!helper_control) return make_error(error_code::launch_failed, "fcntl", {}, errno);

  // Everything the child touches exists before the clone.
  const std::string path = supervisor_path(request);
  std::string fd_arg = "3";
  char* argv[] = {const_cast<char*>(path.c_str()), const_cast<char*>("--control-fd"), fd_arg.data(), nullptr};
  char* envp[] = {nullptr};
  const int sources[4] = {in->get(), out->get(), err->get(), helper_control.get()};
  sigset_t empty;
  ::sigemptyset(&empty);

  int pid_pipe[2];
  if (::pipe2(pid_pipe, O_CLOEXEC) != 0) return make_error(error_code::launch_failed, "pipe2", {}, errno);
  unique_fd pid_read(pid_pipe[0]), pid_write(pid_pipe[1]);

  // Two clones: an execve resets a process's exit signal to SIGCHLD, so the
  // helper is a grandchild. The child (exit_signal 0, never execs) clones the
  // helper, writes its pid and exits; the helper, orphaned, is reaped by init
  // and raises no signal here; its report comes over the socket.
  int pidfd = -1;
  struct clone_args args {};
  args.flags = CLONE_PIDFD;
  args.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
  args.exit_signal = 0;  // the host gets no SIGCHLD for the intermediate child
  long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid == 0) {
    // Async-signal-safe calls only from here to execve.
    ::sigprocmask(SIG_SETMASK, &empty, nullptr);
    struct clone_args helper_args {};
    long helper = ::syscall(SYS_clone3, &helper_args, sizeof helper_args);
    if (helper == 0) {
      for (int target = 0; target < 4; ++target) {
        if (::dup2(sources[target], target) < 0) ::_exit(exit_cordon_failed);
      }
      ::execve(argv[0], argv, envp);
      ::_exit(exit_not_found);
    }
    const pid_t helper_pid = static_cast<pid_t>(helper);
    ssize_t ignored = ::write(pid_write.get(), &helper_pid, sizeof helper_pid);
    (void)ignored;
    ::_exit(helper < 0 ? exit_cordon_failed : 0);
  }
  if (pid < 0) return make_error(error_code::launch_failed, "clone3 for the supervisor helper", {}, errno);
  unique_fd child(pidfd);
  pid_write.reset();
  pid_t helper_pid = -1;
  ssize_t n;
  do {
    n = ::read(pid_read.get(), &helper_pid, sizeof helper_pid);
  } while (n < 0 && errno == EINTR);
  siginfo_t info{};
  while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(child.get()), &info, WEXITED | __WALL) < 0 &&
         errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof helper_pid) || helper_pid <= 0) {
    return make_error(error_code::launch_failed, "clone3 for the supervisor helper failed");
  }
  s->pid = helper_pid;
  if (!send_all(s->control.get(), request_line(plan, request))) {
    // The helper is already gone (for example, it could not be executed): its report says why.
  }
  return run_handle(std::move(s));
}

run_handle::run_handle(std::unique_ptr<state> s) : state_(std::move(s)) {}
run_handle::run_handle(run_handle&&) noexcept = default;
run_handle& run_handle::operator=(run_handle&&) noexcept = default;

run_handle::~run_handle() {
  if (state_ && !state_->report) {
    cancel();
    wait();
  }
}

pid_t run_handle::pid() const noexcept { return state_->pid; }
int run_handle::stdin_fd() const noexcept { return state_->stdin_pipe.get(); }
int run_handle::stdout_fd() const noexcept { return state_->stdout_pipe.get(); }
int run_handle::stderr_fd() const noexcept { return state_->stderr_pipe.get(); }
int run_handle::take_stdin() noexcept { return state_->stdin_pipe.release(); }
int run_handle::take_stdout() noexcept { return state_->stdout_pipe.release(); }
int run_handle::take_stderr() noexcept { return state_->stderr_pipe.release(); }
int run_handle::completion_fd() const noexcept { return state_->control.get(); }

void run_handle::cancel() noexcept {
  if (!state_ || state_->finished.load() || state_->cancelled.exchange(true)) return;
  // The helper kills the tree when its control socket is readable or closed.
  ssize_t ignored = ::send(state_->control.get(), "c", 1, MSG_NOSIGNAL);
  (void)ignored;
}

std::optional<run_report> run_handle::wait_until(std::chrono::steady_clock::time_point deadline) {
  state& s = *state_;
  while (!s.report) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() < 0) left = std::chrono::milliseconds(0);
    if (deadline == std::chrono::steady_clock::time_point::max()) left = std::chrono::milliseconds(-1);
    pollfd fd{s.control.get(), POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return std::nullopt;
    char buffer[65536];
    ssize_t n = ::recv(s.control.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      s.received.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    // EOF: the helper is done (init reaps it).
    run_report report;
    auto newline = s.received.find('\n');
    nlohmann::json j = nlohmann::json::parse(s.received.substr(0, newline), nullptr, false);
    if (j.is_discarded() || !j.contains("report")) {
      report.failure = make_error(error_code::launch_failed,
                                  "the supervisor helper ended without a report; is it installed? (CORDON_SUPERVISOR)");
    } else {
      report.json = j.at("report").get<std::string>();
      if (j.contains("outcome")) report.outcome = core::outcome_from_json(j.at("outcome"));
      if (j.contains("failure")) report.failure = core::error_from_json(j.at("failure"));
      report.cancelled = report.outcome && report.outcome->cancelled;
    }
    s.report = std::move(report);
    s.finished.store(true);
  }
  return s.report;
}

std::optional<run_report> run_handle::wait_for(std::chrono::milliseconds timeout) {
  return wait_until(std::chrono::steady_clock::now() + timeout);
}

run_report run_handle::wait() { return *wait_until(std::chrono::steady_clock::time_point::max()); }

}  // namespace cordon

// child_process.cpp — posix_spawn, two pipes and poll(2) with a deadline.
#include "governance/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "posix/poll_timeout.h"
#include "posix/unique_fd.h"

extern char** environ;

namespace cordon::governance::detail {
namespace {

struct spawn_actions {
  posix_spawn_file_actions_t actions;
  spawn_actions() { ::posix_spawn_file_actions_init(&actions); }
  ~spawn_actions() { ::posix_spawn_file_actions_destroy(&actions); }
  spawn_actions(const spawn_actions&) = delete;
  spawn_actions& operator=(const spawn_actions&) = delete;
};

// Waits for the child until `deadline`, then kills it: a child that closed
// its stdout but keeps running must not hold the decision forever.
void reap(pid_t pid, std::chrono::steady_clock::time_point deadline, child_result& out) {
  int status = 0;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      out.timed_out = true;
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    ::usleep(2000);
  }
  out.exited = WIFEXITED(status);
  out.exit_code = out.exited ? WEXITSTATUS(status) : 0;
  out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

}  // namespace

int spawn_with_clean_signals(pid_t* pid, const posix_spawn_file_actions_t* actions, char* const argv[]) {
  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  sigset_t none, all;
  ::sigemptyset(&none);
  ::sigfillset(&all);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &all);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  const int rc = ::posix_spawnp(pid, argv[0], actions, &attr, argv, environ);
  ::posix_spawnattr_destroy(&attr);
  return rc;
}

result<child_result> run_child(const std::vector<std::string>& argv, const std::string& input,
                               std::chrono::milliseconds timeout) {
  if (argv.empty() || argv[0].empty()) return make_error(error_code::usage_error, "an approver command is needed");
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return make_error(error_code::io_error, "pipe for the approver", {}, errno);
  unique_fd in_read(in_pipe[0]), in_write(in_pipe[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return make_error(error_code::io_error, "pipe for the approver", {}, errno);
  unique_fd out_read(out_pipe[0]), out_write(out_pipe[1]);

  spawn_actions fa;
  ::posix_spawn_file_actions_adddup2(&fa.actions, in_read.get(), 0);
  ::posix_spawn_file_actions_adddup2(&fa.actions, out_write.get(), 1);
  ::posix_spawn_file_actions_addclosefrom_np(&fa.actions, 3);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = spawn_with_clean_signals(&pid, &fa.actions, args.data());
  if (rc != 0) return make_error(error_code::io_error, "cannot start approver " + argv[0], {}, rc);
  in_read.reset();
  out_write.reset();
  ::fcntl(in_write.get(), F_SETFL, O_NONBLOCK);

  // An approver that exits without reading its request must not kill this
  // process with SIGPIPE: blocked on this thread while writing, and a
  // SIGPIPE this write raised is consumed before the mask is restored.
  sigset_t pipe_only, previous, pending;
  ::sigemptyset(&pipe_only);
  ::sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
  ::sigpending(&pending);
  bool pipe_was_pending = ::sigismember(&pending, SIGPIPE) == 1;

  child_result out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t written = 0;
  if (input.empty()) in_write.reset();
  while (out_read.get() >= 0) {
    const int left_ms = poll_timeout_until(deadline);
    if (left_ms == 0) {
      out.timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_read.get(), POLLIN, 0}, {in_write.get(), POLLOUT, 0}};
    int n = ::poll(fds, in_write.get() >= 0 ? 2 : 1, left_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (in_write.get() >= 0 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = ::write(in_write.get(), input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      if (w < 0 && errno != EAGAIN && errno != EINTR) in_write.reset();  // the approver stopped reading
      if (written == input.size()) in_write.reset();                    // EOF: the request is complete
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[4096];
      ssize_t r = ::read(out_read.get(), buffer, sizeof buffer);
      if (r > 0) {
        out.output.append(buffer, static_cast<std::size_t>(std::min<std::size_t>(r, max_output - std::min(max_output, out.output.size()))));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        out_read.reset();
      }
    }
  }
  if (out.timed_out) ::kill(pid, SIGKILL);
  reap(pid, deadline, out);
  in_write.reset();
  ::sigpending(&pending);
  if (!pipe_was_pending && ::sigismember(&pending, SIGPIPE) == 1) {
    timespec zero{0, 0};
    ::sigtimedwait(&pipe_only, nullptr, &zero);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return out;
}

}  // namespace cordon::governance::detail

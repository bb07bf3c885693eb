// PID 1 of the sandbox as init (sandbox_init_steps.h): it forwards the
// supervisor's signals to the tree, ends the tree at the run's deadline, and
// reaps every process, the command last counted. Child side: no allocation.
#include "linux/sandbox_init_steps.h"

#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>

#include "linux/namespace_reap.h"

namespace cordon::linux_impl {
namespace {

// The deadline, from PID 1 (prepared_launch::deadline_ns): the supervisor
// may be stopped. Leaving as PID 1 ends the whole tree.
const prepared_launch* deadline_launch = nullptr;
void deadline_reached(int) noexcept {
  // The tree's CPU time reaches PID 1's rusage only if PID 1 reaps it (linux/namespace_reap.h).
  kill_and_reap_namespace();
  init_message message;
  message.kind = init_message_kind::timed_out;
  ssize_t ignored = ::write(deadline_launch->status_write_fd, &message, sizeof message);
  (void)ignored;
  ::_exit(0);
}


void forward_signal(int sig) noexcept {
  int saved = errno;
  ::kill(-1, sig);  // every process in this PID namespace but PID 1
  errno = saved;
}

}  // namespace

void install_signal_forwarding(const prepared_launch& launch) noexcept {
  // The supervisor forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT here; PID 1 only
  // receives signals it handles, and passes them to the whole tree.
  struct sigaction action {};
  action.sa_handler = forward_signal;
  ::sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    if (::sigaction(sig, &action, nullptr) != 0) init_fail(launch, init_step::signals, errno);
  }
}

void arm_deadline(const prepared_launch& launch) noexcept {
  if (launch.deadline_ns == 0) return;
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  std::int64_t left = launch.deadline_ns - (static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec);
  if (left < 1000) left = 1000;
  deadline_launch = &launch;
  struct sigaction action {};
  action.sa_handler = deadline_reached;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGALRM, &action, nullptr);
  itimerval timer{};
  timer.it_value.tv_sec = left / 1000000000;
  timer.it_value.tv_usec = (left % 1000000000) / 1000;
  ::setitimer(ITIMER_REAL, &timer, nullptr);
}

int reap_tree(pid_t command) noexcept {
  // Reap everything; the command's own status is the run's.
  int status = 0;
  while (true) {
    int child_status = 0;
    pid_t pid = ::waitpid(-1, &child_status, 0);
    if (pid == command) {
      status = child_status;
      break;
    }
    if (pid < 0 && errno != EINTR) break;
  }
  // What the command left behind is killed now, and reaped so that its CPU time is counted.
  kill_and_reap_namespace();
  return status;
}

init_message exited_message(int wait_status) noexcept {
  struct rusage usage {};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  init_message message;
  message.kind = init_message_kind::exited;
  message.wait_status = wait_status;
  message.user_cpu_us = usage.ru_utime.tv_sec * 1000000 + usage.ru_utime.tv_usec;
  message.system_cpu_us = usage.ru_stime.tv_sec * 1000000 + usage.ru_stime.tv_usec;
  message.max_rss_kib = usage.ru_maxrss;
  return message;
}

}  // namespace cordon::linux_impl

// A sandbox's PID 1 reaped after its report (exiting_sandboxes.h).
#include "posix/exiting_sandboxes.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "cordon/run.h"

namespace cordon::posix {
namespace {

// How many reaps are still running. Never destroyed: a reaping thread may
// outlive main() (a process that exits without awaiting them).
struct pending_reaps {
  std::mutex lock;
  std::condition_variable done;
  int running = 0;
};

pending_reaps& pending() {
  static pending_reaps* reaps = new pending_reaps;
  return *reaps;
}

}  // namespace

void reap(pid_t pid, int* status, struct rusage* usage) noexcept {
  while (::wait4(pid, status, 0, usage) < 0 && errno == EINTR) {
  }
}

namespace {

// The wait of reap_when_exited(): through the pidfd when there is one
// (ECHILD at once when the process was reaped already, or is not a child).
void reap_exactly(pid_t pid, const unique_fd& pidfd) noexcept {
  if (!pidfd) return reap(pid);
  siginfo_t info{};
  while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd.get()), &info, WEXITED | __WALL) < 0 &&
         errno == EINTR) {
  }
}

}  // namespace

void reap_when_exited(pid_t pid, unique_fd pidfd) noexcept {
  pending_reaps& p = pending();
  {
    std::lock_guard<std::mutex> hold(p.lock);
    ++p.running;
  }
  auto finish = [&p] {
    std::lock_guard<std::mutex> hold(p.lock);
    --p.running;
    p.done.notify_all();
  };
  auto shared = std::make_shared<unique_fd>(std::move(pidfd));  // still here if the thread cannot start
  try {
    std::thread([pid, shared, finish] {
      reap_exactly(pid, *shared);
      finish();
    }).detach();
  } catch (const std::system_error&) {
    reap_exactly(pid, *shared);  // no thread to be had: wait here
    finish();
  }
}

}  // namespace cordon::posix

namespace cordon {

void await_exiting_sandboxes() noexcept {
  posix::pending_reaps& p = posix::pending();
  std::unique_lock<std::mutex> hold(p.lock);
  p.done.wait(hold, [&p] { return p.running == 0; });
}

}  // namespace cordon

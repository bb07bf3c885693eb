// cpu_watchdog.cpp — the tree's CPU-time ceiling on a thread (cpu_watchdog.h).
#include "linux/cpu_watchdog.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>

namespace cordon::linux_impl {

cpu_watchdog::cpu_watchdog(const run_cgroup& cgroup, int pidfd, std::uint64_t limit_ns,
                           std::chrono::milliseconds period)
    : thread_([this, &cgroup, pidfd, limit_ns, period] { watch(cgroup, pidfd, limit_ns, period); }) {}

cpu_watchdog::~cpu_watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void cpu_watchdog::watch(const run_cgroup& cgroup, int pidfd, std::uint64_t limit_ns,
                         std::chrono::milliseconds period) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
    const auto used = cgroup.cpu_usage_ns();
    if (used && *used >= limit_ns) {
      ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
      fired_.store(true, std::memory_order_release);
      return;
    }
  }
}

}  // namespace cordon::linux_impl

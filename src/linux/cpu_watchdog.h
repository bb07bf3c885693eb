// cpu_watchdog.h — the tree's CPU-time ceiling, held by a thread of the
// supervisor of its own.
//
// The supervisor's loop answers the seccomp listener too, and an answer can
// take seconds: it performs the command's connect(2) itself and waits for a
// blocking one (a unix listener whose backlog is full: up to 2 s). Read
// between answers, the cgroup's CPU counter could be late by that much for
// every spinning core; a command that keeps such connects coming would use
// seconds of CPU past its ceiling. So the counter is read by this thread,
// every `period` whatever the loop is doing, and the tree killed from here
// (SIGKILL of PID 1 through its pidfd: its PID namespace dies with it).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "linux/cgroups.h"

namespace cordon::linux_impl {

class cpu_watchdog {
 public:
  // Starts the thread. `cgroup` and the descriptor `pidfd` (PID 1's pidfd)
  // must outlive this object. `limit_ns`: the ceiling in nanoseconds of
  // the cgroup's CPU counter (run_cgroup::cpu_usage_ns); `period`: how often
  // it is read. Throws std::system_error when no thread can be started.
  cpu_watchdog(const run_cgroup& cgroup, int pidfd, std::uint64_t limit_ns, std::chrono::milliseconds period);
  ~cpu_watchdog();  // stops and joins the thread
  cpu_watchdog(const cpu_watchdog&) = delete;
  cpu_watchdog& operator=(const cpu_watchdog&) = delete;

  // True once the counter reached the limit and PID 1 was sent SIGKILL.
  bool fired() const noexcept { return fired_.load(std::memory_order_acquire); }

 private:
  void watch(const run_cgroup& cgroup, int pidfd, std::uint64_t limit_ns, std::chrono::milliseconds period);

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace cordon::linux_impl

// thread_state.h — waiting for a thread of the test process to block in a
// call, instead of sleeping for a fixed time and hoping it has.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace cordon::test {

// True once the thread whose id `tid` holds (0: not known yet, waited for)
// sleeps: state S in /proc/self/task/TID/stat (proc(5)), that is blocked in
// a call (a wait, a send(2) whose every buffer on the way is full). Polled
// every 5 ms within `timeout`; false if it never did.
inline bool thread_blocks(const std::atomic<pid_t>& tid, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (; std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(std::chrono::milliseconds(5))) {
    if (tid == 0) continue;
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    const auto end = text.rfind(')');  // the name may hold spaces
    if (end != std::string::npos && text.compare(end, 4, ") S ") == 0) return true;
  }
  return false;
}

}  // namespace cordon::test

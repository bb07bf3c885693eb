// src/posix/poll_timeout.h — poll(2)'s timeout for a deadline.
//
// poll(2) counts whole milliseconds. A remainder rounded down makes a loop
// that waits for a deadline call poll(..., 0) again and again through the
// last millisecond before it (a spin: the supervisor made some 30 such calls
// before its memory trim), or give up before the deadline. Rounded up, the
// wait ends at the deadline or just after it.
#pragma once

#include <algorithm>
#include <chrono>

namespace cordon {

// Milliseconds from `now` until `deadline`, rounded up; 0 once it has passed;
// at most 2^30 (about 12 days: a loop waits again for a later deadline).
inline int poll_timeout_until(std::chrono::steady_clock::time_point deadline,
                              std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now()) {
  if (deadline <= now) return 0;
  const long long left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
  return static_cast<int>(std::min<long long>(left, 1LL << 30));
}

}  // namespace cordon

// poll_timeout_until (src/posix/poll_timeout.h): a deadline's remainder is
// rounded up, so a loop waiting for it never polls with 0 before it.
#include <poll.h>

#include <gtest/gtest.h>

#include "posix/poll_timeout.h"

namespace cordon {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

TEST(PollTimeout, ARemainderIsRoundedUpAndAPassedDeadlineIsZero) {
  const clock_type::time_point now{10s};
  EXPECT_EQ(poll_timeout_until(now + 300us, now), 1) << "under a millisecond left must still wait";
  EXPECT_EQ(poll_timeout_until(now + 1ns, now), 1);
  EXPECT_EQ(poll_timeout_until(now + 5ms, now), 5);
  EXPECT_EQ(poll_timeout_until(now + 5ms + 1us, now), 6);
  EXPECT_EQ(poll_timeout_until(now, now), 0);
  EXPECT_EQ(poll_timeout_until(now - 2ms, now), 0);
  EXPECT_EQ(poll_timeout_until(now + 24h * 365, now), 1 << 30);
  EXPECT_EQ(poll_timeout_until(clock_type::time_point::max(), now), 1 << 30);
}

// A real wait that loops on it ends at the deadline, not before it, and
// calls poll a handful of times, not once per microsecond.
TEST(PollTimeout, ALoopOnItEndsAtTheDeadlineWithoutSpinning) {
  const auto deadline = clock_type::now() + 20ms + 500us;
  int polls = 0;
  for (int t; (t = poll_timeout_until(deadline)) > 0; ++polls) ::poll(nullptr, 0, t);
  EXPECT_GE(clock_type::now(), deadline);
  EXPECT_LE(polls, 3) << "poll was called " << polls << " times for one deadline";
}

}  // namespace
}  // namespace cordon

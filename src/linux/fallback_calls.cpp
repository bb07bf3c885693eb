#include "linux/fallback_calls.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdint>

#include "linux/caller_paths.h"

namespace cordon::linux_impl {
namespace {

// Every namespace flag clone3() accepts (clone(2)); CLONE_NEWTIME only exists there.
constexpr std::uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
                                          CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | 0x80 /* CLONE_NEWTIME */;
constexpr std::uint64_t kSetIdBits = S_ISUID | S_ISGID;

}  // namespace

bool is_expected_fallback(int listener_fd, const seccomp_notif& request) {
  const auto nr = request.data.nr;
#ifdef SYS_clone3
  if (nr == SYS_clone3) {
    // The first field of struct clone_args is the 64-bit flags word, in every version of the struct.
    std::uint64_t flags = 0;
    if (request.data.args[1] < sizeof flags || !read_caller_memory(static_cast<pid_t>(request.pid), request.data.args[0],
                                                            &flags, sizeof flags)) {
      return false;
    }
    return (flags & kNamespaceFlags) == 0 && notification_still_valid(listener_fd, request);
  }
#endif
#ifdef SYS_openat2
  if (nr == SYS_openat2) {
    open_how how{};
    if (request.data.args[3] < sizeof how ||
        !read_caller_memory(static_cast<pid_t>(request.pid), request.data.args[2], &how, sizeof how)) {
      return false;
    }
    return (how.mode & kSetIdBits) == 0 && notification_still_valid(listener_fd, request);
  }
#endif
  // fchmodat2(dirfd, path, mode, flags): the mode is a plain argument. 452 on every architecture with the
  // unified syscall table; glibc headers before 2.39 do not name it.
  constexpr long kFchmodat2 = 452;
  if (nr == kFchmodat2) return (request.data.args[2] & kSetIdBits) == 0;
  return false;
}

}  // namespace cordon::linux_impl

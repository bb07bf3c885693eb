// PID 1's last act (linux/namespace_reap.h).
#include "linux/namespace_reap.h"

#include <sys/wait.h>

#include <cerrno>
#include <csignal>

namespace cordon::linux_impl {

void kill_and_reap_namespace() noexcept {
  int saved = errno;
  while (true) {
    ::kill(-1, SIGKILL);  // ESRCH once only PID 1 is left: the wait below then sees ECHILD
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, __WALL);
    if (pid < 0 && errno != EINTR) break;
  }
  errno = saved;
}

}  // namespace cordon::linux_impl

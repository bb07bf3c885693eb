// host_output.cpp — non-blocking writes to the host (host_output.h).
// References: proc(5) (/proc/PID/fd: opening a pipe's entry opens the pipe),
// send(2) (MSG_DONTWAIT, MSG_NOSIGNAL), pipe(7).
#include "sidecars/host_output.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace cordon::sidecars {

host_output::host_output(int fd) : fd_(fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  if (S_ISSOCK(st.st_mode)) {
    socket_ = true;
  } else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
    // Failing that (no /proc), writes block as before: the host still ends
    // the session by reading or closing.
    own_.reset(::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  }
}

bool host_output::flush() {
  while (offset_ < backlog_.size()) {
    const char* data = backlog_.data() + offset_;
    const std::size_t size = backlog_.size() - offset_;
    const ssize_t n = socket_ ? ::send(fd_, data, size, MSG_DONTWAIT | MSG_NOSIGNAL) : ::write(poll_fd(), data, size);
    if (n > 0) {
      offset_ += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    } else {
      backlog_.clear();
      offset_ = 0;
      return false;
    }
  }
  if (offset_ == backlog_.size() || offset_ > (1u << 20)) {  // drop what was written, now and then
    backlog_.erase(0, offset_);
    offset_ = 0;
  }
  return true;
}

}  // namespace cordon::sidecars

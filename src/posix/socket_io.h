// socket_io.h — writing a whole message to a stream socket without SIGPIPE
// (the run API and its helper talk over one, as do the supervisor and the
// broker's process), with descriptors attached when it has some.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include "posix/scm_rights.h"

namespace cordon {

// Sends all of `text`; false when the peer is gone or the socket failed.
inline bool send_all(int fd, const std::string& text) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Sends `line` with `count` descriptors (at most four: scm_rights.h)
// attached to its first byte (SCM_RIGHTS), then the rest; false when the
// peer is gone or the socket failed.
inline bool send_with_descriptors(int fd, const std::string& line, const int* fds, std::size_t count) {
  iovec io{const_cast<char*>(line.data()), line.size()};
  scm_rights_space space;
  msghdr message = rights_message(io, space, fds, count);
  ssize_t sent;
  do {
    sent = ::sendmsg(fd, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent <= 0) return false;
  return static_cast<std::size_t>(sent) == line.size() || send_all(fd, line.substr(static_cast<std::size_t>(sent)));
}

}  // namespace cordon

// socket_io.h — writing a whole message to a stream socket without SIGPIPE
// (the run API and its helper talk over one).
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <string>

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

}  // namespace cordon

// socket_io.h — writing a whole message to a stream socket without SIGPIPE
// (the run API and its helper talk over one, as do the supervisor and the
// broker's process), with descriptors attached when it has some; reading an
// exact number of bytes from a socket or a pipe.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <optional>
#include <string>

#include "posix/scm_rights.h"

namespace cordon {

// Reads exactly `size` bytes into `into` from a socket or a pipe (EINTR
// retried); false at an error or an end of stream before `size`.
inline bool read_exactly(int fd, void* into, std::size_t size) {
  auto* bytes = static_cast<char*>(into);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, bytes + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

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

// Receives from `fd` until a newline has come, and stores the descriptors
// attached to the first message that carries some (at most `max` into
// `fds`, the rest closed; `taken` says how many). Returns every byte
// received (the line and whatever came with it), or nullopt when the
// stream ends or fails first, or `limit` bytes came without a newline.
inline std::optional<std::string> receive_line_with_descriptors(int fd, int* fds, std::size_t max, std::size_t& taken,
                                                                std::size_t limit) {
  std::string received;
  taken = 0;
  while (received.find('\n') == std::string::npos) {
    if (received.size() >= limit) return std::nullopt;
    char buffer[65536];
    iovec io{buffer, sizeof buffer};
    scm_rights_space space;
    msghdr message = receiving_message(io, space);
    const ssize_t n = ::recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (taken == 0) taken = take_rights(message, fds, max);
    received.append(buffer, static_cast<std::size_t>(n));
  }
  return received;
}

}  // namespace cordon

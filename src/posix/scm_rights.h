// scm_rights.h — descriptors passed over a unix socket (unix(7),
// "SCM_RIGHTS"), for the supervisor, PID 1 and the run API's host side.
// Header-only and async-signal-safe: PID 1 uses it between clone and exec.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace cordon {

// Control space for up to four descriptors.
struct scm_rights_space {
  alignas(cmsghdr) char bytes[CMSG_SPACE(sizeof(int) * 4)] = {};
};

// A message of `length` bytes at `data` carrying `count` (at most 4)
// descriptors; count 0 sends no control message.
inline msghdr rights_message(iovec& io, scm_rights_space& space, const int* fds, std::size_t count) noexcept {
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  if (count == 0 || count > 4) return message;
  message.msg_control = space.bytes;
  message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int) * count);
  std::memcpy(CMSG_DATA(header), fds, sizeof(int) * count);
  return message;
}

// A message to receive into `io` with room for four descriptors.
inline msghdr receiving_message(iovec& io, scm_rights_space& space) noexcept {
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = space.bytes;
  message.msg_controllen = sizeof space.bytes;
  return message;
}

// The descriptors a received message carried, at most `max` into `fds`
// (the rest closed: a peer cannot leave this process holding extra files).
// Returns how many were stored.
inline std::size_t take_rights(msghdr& message, int* fds, std::size_t max) noexcept {
  std::size_t stored = 0;
  for (cmsghdr* h = CMSG_FIRSTHDR(&message); h != nullptr; h = CMSG_NXTHDR(&message, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
      if (stored < max) {
        fds[stored++] = fd;
      } else {
        ::close(fd);
      }
    }
  }
  return stored;
}

}  // namespace cordon

// host_output.h — the sidecar's frames on their way to the host, written
// without ever blocking on the host (docs/sidecars.md, "Shutdown").
//
// A host that keeps its end open but stops reading must not hold cordon in
// write(2): the session still has to see SIGTERM and end the sidecar. The
// host's descriptor is shared with the host, so its file status flags are
// not ours to change; instead:
//  - a pipe or a character device (a terminal) is opened again through
//    /proc/self/fd/N, a file description of our own, made non-blocking;
//  - a socket is written with send(MSG_DONTWAIT);
//  - a regular file is written as it is (the kernel does not wait on a
//    reader there).
// Bytes the host does not take at once wait in a backlog the session bounds.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "posix/unique_fd.h"

namespace cordon::sidecars {

class host_output {
 public:
  // `fd`: the host's output, borrowed for the life of the object.
  explicit host_output(int fd);

  // What to poll for POLLOUT while backlog() is not empty.
  int poll_fd() const noexcept { return own_ ? own_.get() : fd_; }
  std::size_t backlog() const noexcept { return backlog_.size() - offset_; }

  // Adds `bytes` to the backlog; call flush() after.
  void queue(std::string_view bytes) { backlog_.append(bytes); }

  // Writes as much of the backlog as the host takes now. False when the
  // host's end is gone (EPIPE) or failed; the backlog is dropped then.
  bool flush();

 private:
  int fd_;
  unique_fd own_;       // our own non-blocking description (pipe, terminal)
  bool socket_ = false;  // send(MSG_DONTWAIT) on fd_
  std::string backlog_;
  std::size_t offset_ = 0;  // written part of backlog_
};

}  // namespace cordon::sidecars

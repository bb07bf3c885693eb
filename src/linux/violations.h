// violations.h — attempts that confinement stopped, as the report lists them.
//
// Blocked system calls reach the supervisor through the seccomp user
// notification listener (seccomp_unotify(2)); the supervisor records the
// call and answers with the errno the filter's table gives, so the command
// sees exactly what it would without recording. A hostile loop cannot grow
// the report: at most `max_distinct` different entries are kept, counts
// saturate, and what did not fit is counted apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cordon/launch.h"
#include "linux/seccomp_filter.h"

namespace cordon::linux_impl {

class violation_log {
 public:
  static constexpr std::size_t max_distinct = 64;

  void record(const std::string& kind, const std::string& target);
  // Entries in first-seen order, plus one {"truncated", "...", n} entry when
  // some did not fit.
  std::vector<violation> entries() const;

 private:
  std::vector<violation> entries_;
  std::uint64_t dropped_ = 0;
};

struct connect_redirect;  // linux/connect_redirect.h

// Receives one pending notification from `listener_fd`, records it and
// answers it with the program's errno for that call; a connect(2)
// (program.connect_notified) is answered by answer_connect() with
// `redirect` (null: no transparent routing). Returns false when the
// listener is finished (every filtered process is gone) or broken.
bool answer_notification(int listener_fd, const seccomp_program& program, violation_log& log,
                         const connect_redirect* redirect = nullptr);

// Receives a descriptor sent with SCM_RIGHTS on `socket_fd`; -1 on EOF or error.
int receive_descriptor(int socket_fd);

// Receives up to `max` descriptors sent in one SCM_RIGHTS message into
// `fds` (close-on-exec). Returns how many arrived; 0 on EOF or error.
std::size_t receive_descriptors(int socket_fd, int* fds, std::size_t max);

}  // namespace cordon::linux_impl
